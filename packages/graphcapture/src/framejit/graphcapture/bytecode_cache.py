"""The original code as `bytecode` instructions (with labels), decoded once per code object.

`instr_at(offset)` finds the instruction that starts at a dis offset, so generated code can
copy an original instruction (a graph break re-runs it) or jump into the original body
(a resume function).
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass

from bytecode import Bytecode, Instr

from .pyversion import PREFIX_OPCODES


@dataclass
class OriginalBytecode:
    code: types.CodeType
    items: list  # Instr, Label, TryBegin/TryEnd, SetLineno as `bytecode` gives them
    position_of_offset: dict[int, int]  # dis offset -> index into items
    prefix_end: int  # items[:prefix_end] is COPY_FREE_VARS/MAKE_CELL/RESUME

    def instr_at(self, offset: int) -> Instr:
        return self.items[self.position_of_offset[offset]]

    def prefix(self) -> list:
        return list(self.items[: self.prefix_end])

    def new_bytecode(self, items: list) -> Bytecode:
        """A Bytecode with `items` and the original's metadata."""
        original = self.template
        bc = Bytecode(items)
        for attr in (
            "argcount",
            "posonlyargcount",
            "kwonlyargcount",
            "flags",
            "name",
            "qualname",
            "filename",
            "first_lineno",
            "argnames",
            "cellvars",
            "freevars",
        ):
            setattr(bc, attr, getattr(original, attr))
        bc.docstring = original.docstring
        return bc

    template: Bytecode = None  # type: ignore[assignment]


_cache: dict[types.CodeType, OriginalBytecode] = {}


def original_bytecode(code: types.CodeType) -> OriginalBytecode:
    found = _cache.get(code)
    if found is not None:
        return found
    bc = Bytecode.from_code(code)
    items = list(bc)
    real_offsets = []
    pending_ext: list[int] = []
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            pending_ext.append(ins.offset)
            continue
        real_offsets.append((ins.offset, pending_ext, ins.opname))
        pending_ext = []
    position: dict[int, int] = {}
    k = 0
    prefix_end = 0
    for i, item in enumerate(items):
        if isinstance(item, Instr):
            offset, ext, opname = real_offsets[k]
            if item.name != opname:
                raise AssertionError(f"bytecode/dis disagree at {offset}: {item.name} vs {opname}")
            position[offset] = i
            for e in ext:
                position[e] = i
            k += 1
            if item.name in PREFIX_OPCODES and prefix_end == i:
                prefix_end = i + 1
        elif prefix_end == i and k == 0:
            prefix_end = i + 1
    result = OriginalBytecode(code, items, position, prefix_end)
    result.template = bc
    _cache[code] = result
    return result
