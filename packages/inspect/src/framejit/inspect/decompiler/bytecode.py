"""Bytecode as the decompiler sees it: canonical instructions, the exception table, reachability.

Everything here is pure analysis of one code object; nothing is decompiled yet.
Jump targets and exception-table ranges are converted from byte offsets to
instruction indices, so the rest of the decompiler never does offset arithmetic.
"""

from __future__ import annotations

import dis
import types
from dataclasses import dataclass, field

from .versions import CURRENT, KEEP_JUMPS, POP_JUMPS, TERMINATORS, VersionTable


@dataclass
class Instr:
    """One instruction, with its opcode name mapped to the canonical spelling."""

    index: int
    offset: int
    opname: str  # canonical
    raw_opname: str  # as the interpreter spells it
    arg: int | None
    argval: object
    argrepr: str
    target: int | None = None  # jump target as an instruction index
    lineno: int | None = None

    @property
    def is_jump(self) -> bool:
        return self.target is not None

    @property
    def is_cond_jump(self) -> bool:
        return self.opname in POP_JUMPS

    def signature(self) -> tuple:
        """What the instruction does, ignoring where it is (to compare duplicated code)."""
        if self.is_jump:
            return (self.opname,)
        return (self.opname, self.arg if self.opname == "LOAD_CONST" else repr(self.argval))


@dataclass(frozen=True)
class ExceptionEntry:
    """One row of the exception table, in instruction indices; ``end`` is exclusive."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


@dataclass
class Bytecode:
    """A code object's instructions plus the control-flow facts the decompiler needs."""

    code: types.CodeType
    instrs: list[Instr]
    exceptions: list[ExceptionEntry]
    table: VersionTable
    by_offset: dict[int, int] = field(default_factory=dict)
    normal_reachable: set[int] = field(default_factory=set)
    backward_sources: dict[int, list[int]] = field(default_factory=dict)
    exit_blocks: dict[int, tuple] = field(default_factory=dict)

    def same_exit(self, a: int, b: int) -> bool:
        """Whether jumping to ``a`` or to ``b`` does the same (equal or duplicated exit blocks)."""
        if a == b:
            return True
        sig = self.exit_blocks.get(a)
        return sig is not None and sig == self.exit_blocks.get(b)

    def __len__(self) -> int:
        return len(self.instrs)

    def handler_entries(self, target: int) -> list[ExceptionEntry]:
        return [e for e in self.exceptions if e.target == target]

    def covering(self, index: int) -> ExceptionEntry | None:
        for entry in self.exceptions:
            if entry.start <= index < entry.end:
                return entry
        return None

    def opnames(self, start: int, stop: int) -> list[str]:
        return [i.opname for i in self.instrs[start:stop]]


def _parse_varint(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    value = byte & 63
    while byte & 64:
        pos += 1
        byte = data[pos]
        value = (value << 6) | (byte & 63)
    return value, pos + 1


def parse_exception_table(code: types.CodeType) -> list[tuple[int, int, int, int, bool]]:
    """(start, end, target, depth, lasti) in byte offsets, end exclusive (3.11+ format)."""
    data = getattr(code, "co_exceptiontable", b"")
    rows = []
    pos = 0
    while pos < len(data):
        start, pos = _parse_varint(data, pos)
        length, pos = _parse_varint(data, pos)
        target, pos = _parse_varint(data, pos)
        dl, pos = _parse_varint(data, pos)
        rows.append((start * 2, (start + length) * 2, target * 2, dl >> 1, bool(dl & 1)))
    return rows


def read(code: types.CodeType, table: VersionTable = CURRENT) -> Bytecode:
    """Read ``code`` into canonical instructions and analyse its control flow."""
    raw = list(dis.get_instructions(code))
    instrs: list[Instr] = []
    lineno = code.co_firstlineno
    for index, ins in enumerate(raw):
        if ins.starts_line is not None:
            lineno = ins.starts_line
        instrs.append(
            Instr(
                index=index,
                offset=ins.offset,
                opname=table.renames.get(ins.opname, ins.opname),
                raw_opname=ins.opname,
                arg=ins.arg,
                argval=ins.argval,
                argrepr=ins.argrepr,
                lineno=lineno,
            )
        )
    by_offset = {ins.offset: ins.index for ins in instrs}

    def index_at(offset: int) -> int:
        # an offset past the last instruction (or into CACHE slots) maps to the next instruction
        while offset not in by_offset and offset <= (instrs[-1].offset if instrs else 0):
            offset += 2
        return by_offset.get(offset, len(instrs))

    for ins in instrs:
        if (
            ins.opname in POP_JUMPS
            or ins.opname in KEEP_JUMPS
            or ins.opname in {"JUMP", "FOR_ITER", "SEND"}
        ):
            ins.target = index_at(ins.argval)
    exceptions = [
        ExceptionEntry(index_at(s), index_at(e), index_at(t), d, lasti)
        for s, e, t, d, lasti in parse_exception_table(code)
    ]
    bc = Bytecode(code, instrs, exceptions, table, by_offset)
    bc.exit_blocks = _exit_blocks(instrs, exceptions)
    bc.normal_reachable = _reachable(instrs)
    for ins in instrs:
        # JUMP_BACKWARD_NO_INTERRUPT closes the SEND loop of ``yield from``/``await``, not a user loop
        if (
            ins.target is not None
            and ins.target <= ins.index
            and ins.raw_opname != "JUMP_BACKWARD_NO_INTERRUPT"
        ):
            bc.backward_sources.setdefault(ins.target, []).append(ins.index)
    return bc


def _reachable(instrs: list[Instr], start: int = 0) -> set[int]:
    """Instructions reachable from ``start`` without taking an exception edge."""
    seen: set[int] = set()
    work = [start] if instrs else []
    while work:
        i = work.pop()
        if i in seen or i >= len(instrs):
            continue
        seen.add(i)
        ins = instrs[i]
        if ins.target is not None:
            work.append(ins.target)
        if ins.opname not in TERMINATORS:
            work.append(i + 1)
    return seen


def _exit_blocks(instrs: list[Instr], exceptions: list[ExceptionEntry]) -> dict[int, tuple]:
    """Start index -> signature of each ``return <constant or local>`` block.

    CPython 3.11 copies small exit blocks to every jump that reaches them, so one
    source-level exit can have several labels; equal signatures mark the copies.
    """

    def handler(index: int) -> int | None:
        for entry in exceptions:
            if entry.start <= index < entry.end:
                return entry.target
        return None

    return {
        ins.index: (ins.signature(), handler(ins.index))
        for ins in instrs[:-1]
        if ins.opname in ("LOAD_CONST", "LOAD_FAST")
        and instrs[ins.index + 1].opname == "RETURN_VALUE"
    }
