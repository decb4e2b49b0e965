"""A code object as canonical instructions: decoded once per code object (identity-keyed, weak).

Canonical means the differences an interpreter of bytecode should not see are gone:
one spelling per jump (`JUMP`, `POP_JUMP_IF_FALSE`, ...), method loads as `LOAD_METHOD`
(3.12+'s LOAD_ATTR method bit), `LOAD_GLOBAL` with a `push_null` flag, PRECALL dropped,
superinstructions and RETURN_CONST / BINARY_SLICE / STORE_SLICE split into their plain
parts, 3.13's LOAD_FAST of a cell as LOAD_CLOSURE, the two plain intrinsics as
`UNARY_POSITIVE` / `LIST_TO_TUPLE`, and jump targets and exception-table ranges as
instruction indices.  What remains version-specific is named in `versions.VERSION`
(stack layout of NULLs, TO_BOOL, FOR_ITER's exit, ...).
"""

from __future__ import annotations

import dis
import types
import weakref
from dataclasses import dataclass, field

from .versions import COMPARE_OPS, VERSION, VersionFacts


@dataclass(slots=True, eq=False)
class Inst:
    """One canonical instruction.

    `offset` is that of the real instruction it came from (both halves of a split
    superinstruction share it; -1 for generated ones); `target` is a jump's target
    as an index into `Code.insts` (decoded code) and `jump` the target item when
    emitting (an `Inst` or a `Label`).
    """

    opname: str
    arg: int | None = None
    argval: object = None
    offset: int = -1
    lineno: int | None = None  # line of the instruction, carried forward over line-less ones
    index: int = -1
    target: int | None = None
    realname: str = ""  # the opcode of this CPython it came from
    push_null: bool = False  # LOAD_GLOBAL / LOAD_SUPER_ATTR also push NULL
    positions: object = None  # dis.Positions of the real instruction (None: inherit)
    jump: object = None  # emit-time jump target: an Inst or a Label
    starts_line: bool = False

    @property
    def argrepr(self) -> str:
        if self.target is not None:
            return f"to {self.target}"
        return "" if self.argval is None and self.arg is None else repr(self.argval)

    def __repr__(self) -> str:
        where = f"{self.offset}:" if self.offset >= 0 else ""
        return f"<{where}{self.opname} {self.argrepr}>"


@dataclass(frozen=True, slots=True)
class ExceptionEntry:
    """One exception-table row over instruction indices; `end` is exclusive."""

    start: int
    end: int
    target: int
    depth: int
    lasti: bool


@dataclass(eq=False)
class Code:
    """A decoded code object: canonical instructions and the exception table over them."""

    code: types.CodeType
    insts: list[Inst]
    exception_entries: list[ExceptionEntry]
    facts: VersionFacts
    index_of_offset: dict[int, int]  # real instruction offset -> index of its first canonical part
    _live: list | None = field(default=None, repr=False)
    _depths: list | None = field(default=None, repr=False)

    def handler_for(self, index: int) -> ExceptionEntry | None:
        for entry in self.exception_entries:
            if entry.start <= index < entry.end:
                return entry
        return None

    def live_locals_at(self, index: int) -> frozenset[str]:
        """Locals (fast, non-cell) that code from `index` on may read before writing."""
        if self._live is None:
            from .liveness import live_locals

            self._live = live_locals(self)
        return self._live[index]

    def stack_depth_at(self, index: int) -> int | None:
        """Stack depth before `index` (None: unreachable)."""
        if self._depths is None:
            from .effects import stack_depths

            self._depths = stack_depths(self)
        return self._depths[index]


def _get_code(self: Code) -> types.CodeType | None:
    return self._code_ref()


def _set_code(self: Code, code: types.CodeType) -> None:
    self._code_ref = weakref.ref(code)


# A field for the constructor, held weakly: `decode`'s cache is keyed by the code weakly, and a
# value holding its key would keep every decoded code alive.
Code.code = property(_get_code, _set_code)  # type: ignore[assignment]


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    byte = data[pos]
    value = byte & 63
    while byte & 64:
        pos += 1
        byte = data[pos]
        value = (value << 6) | (byte & 63)
    return value, pos + 1


def exception_table(code: types.CodeType) -> list[tuple[int, int, int, int, bool]]:
    """(start, end, target, depth, lasti) in byte offsets, end exclusive."""
    data = code.co_exceptiontable
    rows = []
    pos = 0
    while pos < len(data):
        start, pos = _varint(data, pos)
        length, pos = _varint(data, pos)
        target, pos = _varint(data, pos)
        dl, pos = _varint(data, pos)
        rows.append((start * 2, (start + length) * 2, target * 2, dl >> 1, bool(dl & 1)))
    return rows


def _canonical(ins: dis.Instruction, code: types.CodeType, facts: VersionFacts) -> list[Inst]:
    """The canonical instructions one real instruction stands for (empty: dropped)."""
    name = ins.opname
    arg = ins.arg
    argval = ins.argval

    def one(opname: str, a=arg, v=argval, **kw) -> Inst:
        return Inst(opname, a, v, ins.offset, realname=name, positions=ins.positions, **kw)

    if name in ("EXTENDED_ARG", "CACHE") or (name == "PRECALL" and facts.has_precall):
        return []
    if name in facts.splits:
        if name == "RETURN_CONST":
            return [one("LOAD_CONST"), one("RETURN_VALUE", None, None)]
        if name == "BINARY_SLICE":
            return [one("BUILD_SLICE", 2, 2), one("BINARY_SUBSCR", None, None)]
        if name == "STORE_SLICE":
            return [one("BUILD_SLICE", 2, 2), one("STORE_SUBSCR", None, None)]
        first, second = name.split("_FAST_", 1)  # LOAD_FAST_LOAD_FAST -> LOAD, LOAD_FAST
        return [
            one(f"{first}_FAST", arg >> 4, argval[0]),
            one(second, arg & 15, argval[1]),
        ]
    if name == "LOAD_GLOBAL":
        return [one("LOAD_GLOBAL", None, argval, push_null=bool(arg & 1))]
    if name == "LOAD_ATTR" and facts.load_attr_method_bit:
        return [one("LOAD_METHOD" if arg & 1 else "LOAD_ATTR", None)]
    if name in ("LOAD_ATTR", "LOAD_METHOD"):
        return [one(name, None)]
    if name == "LOAD_SUPER_ATTR":
        return [one("LOAD_SUPER_ATTR", arg & 3, push_null=bool(arg & 1))]
    if name == "KW_NAMES":  # dis leaves the tuple unresolved on 3.11
        return [one(name, arg, code.co_consts[arg])]
    if name == "COMPARE_OP":
        op = COMPARE_OPS.index(argval)
        cast = 16 if facts.version >= (3, 13) and arg & 16 else 0
        return [one(name, op | cast, argval)]
    if name == "CALL_INTRINSIC_1" and arg in facts.intrinsics:
        return [one(facts.intrinsics[arg], None, None)]
    # a slot past the plain locals is a cell or free variable; below, a cell only for an argument
    # that a nested function captures (a name may be a local and a free variable at once)
    cell = name == "LOAD_FAST" and (arg >= len(code.co_varnames) or argval in code.co_cellvars)
    if facts.load_closure_is_load_fast and cell:
        return [one("LOAD_CLOSURE")]
    return [one(facts.renames.get(name, name))]


_cache: dict[int, tuple[weakref.ref, Code]] = {}


def decode(code: types.CodeType) -> Code:
    """The canonical form of `code`, decoded once per code object."""
    found = _cache.get(id(code))
    if found is not None and found[0]() is code:
        return found[1]
    decoded = _decode(code, VERSION)
    key = id(code)
    _cache[key] = (
        weakref.ref(code, lambda _, key=key, cache=_cache: cache.pop(key, None)),
        decoded,
    )
    return decoded


def real_instructions(code: types.CodeType) -> list[dis.Instruction]:
    return list(dis.get_instructions(code))


def decode_groups(code: types.CodeType, facts: VersionFacts = VERSION):
    """(real instruction, its canonical parts) for each real instruction; for tests."""
    return [(ins, _canonical(ins, code, facts)) for ins in real_instructions(code)]


def _decode(code: types.CodeType, facts: VersionFacts) -> Code:
    insts: list[Inst] = []
    index_of_offset: dict[int, int] = {}
    jumps: list[tuple[Inst, int]] = []
    lineno = code.co_firstlineno
    pending: list[int] = []  # offsets of dropped instructions: they map to the next canonical one
    hasjump = set(getattr(dis, "hasjump", ())) | set(dis.hasjrel) | set(dis.hasjabs)
    last_line = None
    for ins in real_instructions(code):
        parts = _canonical(ins, code, facts)
        if not parts:
            pending.append(ins.offset)
            continue
        line = ins.positions.lineno if ins.positions is not None else None
        starts = line is not None and line != last_line
        if line is not None:
            lineno = line
            last_line = line
        index_of_offset[ins.offset] = len(insts)
        for off in pending:
            index_of_offset[off] = len(insts)
        pending = []
        for k, part in enumerate(parts):
            part.index = len(insts)
            part.lineno = lineno
            part.starts_line = starts and k == 0
            insts.append(part)
        if ins.opcode in hasjump:
            jumps.append((parts[-1], ins.argval))
    end = len(insts)
    for off in pending:
        index_of_offset[off] = end

    def index_at(offset: int) -> int:
        found = index_of_offset.get(offset)
        if found is not None:
            return found
        later = [o for o in index_of_offset if o > offset]  # an offset inside CACHE slots
        return index_of_offset[min(later)] if later else end

    for inst, target_offset in jumps:
        inst.target = index_at(target_offset)
    entries = [
        ExceptionEntry(index_at(s), index_at(e), index_at(t), d, lasti)
        for s, e, t, d, lasti in exception_table(code)
    ]
    return Code(code, insts, entries, facts, index_of_offset)
