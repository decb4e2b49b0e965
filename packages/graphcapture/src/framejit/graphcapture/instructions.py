"""Decoded instructions of a code object, cached per code, plus local-variable liveness.

The interpreter walks `Inst` records (offsets, resolved jump targets, line numbers);
liveness tells a graph break which locals the resume function needs.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass

from .pyversion import HANDLER_ALIASES


@dataclass(slots=True)
class Inst:
    opname: str  # the interpreter handler name (version aliases applied)
    realname: str  # the opcode name of this CPython
    arg: int | None
    argval: object
    offset: int
    next_offset: int
    lineno: int
    index: int
    target: int | None = None  # index of the jump target


@dataclass
class DecodedCode:
    code: types.CodeType
    insts: list[Inst]
    index_of_offset: dict[int, int]
    exception_entries: list  # dis._ExceptionTableEntry(start, end, target, depth, lasti)
    _live: list[frozenset] | None = None

    def handler_for(self, offset: int):
        for entry in self.exception_entries:
            if entry.start <= offset < entry.end:
                return entry
        return None

    def live_locals_at(self, offset: int) -> frozenset:
        if self._live is None:
            self._live = _liveness(self)
        return self._live[self.index_of_offset[offset]]


_cache: dict[types.CodeType, DecodedCode] = {}

_JUMP_OPS = set(dis.hasjrel) | set(dis.hasjabs)
_TERMINATORS = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "JUMP"}


def decode(code: types.CodeType) -> DecodedCode:
    found = _cache.get(code)
    if found is not None:
        return found
    raw = list(dis.get_instructions(code))
    insts: list[Inst] = []
    lineno = code.co_firstlineno
    for i, ins in enumerate(raw):
        if ins.positions is not None and ins.positions.lineno is not None:
            lineno = ins.positions.lineno
        next_offset = raw[i + 1].offset if i + 1 < len(raw) else ins.offset + 2
        name = HANDLER_ALIASES.get(ins.opname, ins.opname)
        argval = ins.argval
        if ins.opname == "KW_NAMES":  # dis leaves the tuple unresolved on 3.11
            argval = code.co_consts[ins.arg]
        insts.append(Inst(name, ins.opname, ins.arg, argval, ins.offset, next_offset, lineno, i))
    index_of_offset = {inst.offset: inst.index for inst in insts}
    for inst, ins in zip(insts, raw, strict=True):
        if ins.opcode in _JUMP_OPS:
            inst.target = index_of_offset[ins.argval]
    entries = list(dis.Bytecode(code).exception_entries)
    decoded = DecodedCode(code, insts, index_of_offset, entries)
    _cache[code] = decoded
    return decoded


def _uses_defs(inst: Inst) -> tuple[tuple[str, ...], tuple[str, ...]]:
    name = inst.realname
    if name in ("LOAD_FAST", "LOAD_FAST_CHECK"):
        return (inst.argval,), ()
    if name == "LOAD_FAST_AND_CLEAR":
        return (inst.argval,), (inst.argval,)
    if name in ("STORE_FAST", "DELETE_FAST"):
        return (), (inst.argval,)
    if name == "LOAD_FAST_LOAD_FAST":
        return tuple(inst.argval), ()
    if name == "STORE_FAST_STORE_FAST":
        return (), tuple(inst.argval)
    if name == "STORE_FAST_LOAD_FAST":
        return (inst.argval[1],), (inst.argval[0],)
    return (), ()


def _liveness(decoded: DecodedCode) -> list[frozenset]:
    insts = decoded.insts
    n = len(insts)
    succs: list[list[int]] = []
    for inst in insts:
        out: list[int] = []
        if inst.opname not in _TERMINATORS and inst.index + 1 < n:
            out.append(inst.index + 1)
        if inst.target is not None:
            out.append(inst.target)
        entry = decoded.handler_for(inst.offset)
        if entry is not None:
            out.append(decoded.index_of_offset[entry.target])
        succs.append(out)
    uses_defs = [_uses_defs(inst) for inst in insts]
    live_in: list[frozenset] = [frozenset()] * n
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            live_out: set = set()
            for s in succs[i]:
                live_out |= live_in[s]
            uses, defs = uses_defs[i]
            new = frozenset((live_out - set(defs)) | set(uses))
            if new != live_in[i]:
                live_in[i] = new
                changed = True
    return live_in
