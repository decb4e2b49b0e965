"""Bytecode as the decompiler sees it: canonical instructions, the exception table, reachability.

Everything here is pure analysis of one code object; nothing is decompiled yet.  The
instructions come from ``framejit.frameeval.bytecode`` (the one version-neutral layer
graphcapture also traces with): canonical names, jump targets and exception-table
ranges as instruction indices, so the decompiler never does offset arithmetic and
never tests the interpreter version.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

from framejit.frameeval import bytecode as fbc

from .opcodes import POP_JUMPS, TABLE, TERMINATORS, DecompilerFacts


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
    push_null: bool = False  # LOAD_GLOBAL / LOAD_SUPER_ATTR also push NULL
    no_interrupt: bool = False  # a JUMP that was JUMP_NO_INTERRUPT

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


#: one row of the exception table, in instruction indices (``end`` exclusive): the layer's own
ExceptionEntry = fbc.ExceptionEntry


@dataclass
class Bytecode:
    """A code object's instructions plus the control-flow facts the decompiler needs."""

    code: types.CodeType
    instrs: list[Instr]
    exceptions: list[ExceptionEntry]
    table: DecompilerFacts
    by_offset: dict[int, int] = field(default_factory=dict)
    normal_reachable: set[int] = field(default_factory=set)
    backward_sources: dict[int, list[int]] = field(default_factory=dict)
    exit_blocks: dict[int, tuple] = field(default_factory=dict)
    try_joins: set[int] = field(default_factory=set)  # 3.12+: handlers jump back to these

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


def read(code: types.CodeType) -> Bytecode:
    """Read ``code`` through frameeval's canonical bytecode layer and analyse its control flow.

    The layer removes the version differences (jump spellings, PRECALL, method loads,
    superinstructions, RETURN_CONST, slices); what is left is normalised here once: a
    ``FOR_ITER``'s target is where the loop's code goes on (past 3.12+'s ``END_FOR``).
    """
    decoded = fbc.decode(code)
    skip = decoded.facts.for_iter_exit_skip
    instrs = [
        Instr(
            index=ins.index,
            offset=ins.offset,
            # the SEND loop of ``await``/``yield from`` closes with JUMP_NO_INTERRUPT: a plain
            # jump to the handlers, told apart by ``no_interrupt`` (it closes no user loop)
            opname="JUMP" if ins.opname == "JUMP_NO_INTERRUPT" else ins.opname,
            raw_opname=ins.realname,
            no_interrupt=ins.opname == "JUMP_NO_INTERRUPT",
            arg=ins.arg,
            argval=ins.argval,
            argrepr=ins.argrepr,
            target=ins.target,
            lineno=ins.lineno,
            push_null=ins.push_null,
        )
        for ins in decoded.insts
    ]
    for ins in instrs:
        if ins.opname == "FOR_ITER" and skip and ins.target is not None:
            ins.target = _past_end_for(instrs, ins.target, skip)
    _keep_jumps(instrs)
    for e in decoded.exception_entries:  # ``async for``: StopAsyncIteration ends the loop
        head = instrs[e.start]
        if head.opname == "GET_ANEXT" and instrs[e.target].opname == "END_ASYNC_FOR":
            head.target = e.target + 1  # like FOR_ITER: where the code after the loop starts
    exceptions = [
        e
        for e in decoded.exception_entries
        if not _restores_comprehension_names(instrs, e.target)
        and instrs[e.target].opname != "END_ASYNC_FOR"
    ]
    bc = Bytecode(code, instrs, exceptions, TABLE, dict(decoded.index_of_offset))
    bc.exit_blocks = _exit_blocks(instrs, exceptions)
    bc.normal_reachable = _reachable(instrs)
    try_starts = _try_starts(instrs, exceptions)
    for ins in instrs:
        # JUMP_NO_INTERRUPT closes the SEND loop of ``yield from``/``await``, not a user loop;
        # nor does 3.12+'s ``CLEANUP_THROW; JUMP`` back to the value an ``await`` produced, or
        # the jump back to the code after a ``with``/``try`` that handled an exception
        before = [i.opname for i in instrs[max(ins.index - 4, 0) : ins.index]]
        after_throw = before[-1:] == ["CLEANUP_THROW"] or before in _JOINS_AFTER
        if (
            ins.target is not None
            and ins.target <= ins.index
            and not ins.no_interrupt
            and not after_throw
        ):
            if _joins_after_try(ins, before, try_starts):
                bc.try_joins.add(ins.target)
                continue
            bc.backward_sources.setdefault(ins.target, []).append(ins.index)
    return bc


# a with's ``__exit__`` swallowed the exception; an ``except*`` handled all of the group
_JOINS_AFTER = (
    ["POP_TOP", "POP_EXCEPT", "POP_TOP", "POP_TOP"],
    ["COPY", "POP_JUMP_IF_NOT_NONE", "POP_TOP", "POP_EXCEPT"],
)


def _try_starts(instrs: list[Instr], exceptions: list[ExceptionEntry]) -> dict[int, int]:
    """Handler (its PUSH_EXC_INFO) -> first instruction of the try body it protects."""
    starts: dict[int, int] = {}
    for e in exceptions:
        if e.target < len(instrs) and instrs[e.target].opname == "PUSH_EXC_INFO":
            starts[e.target] = min(starts.get(e.target, e.start), e.start)
    return starts


def _joins_after_try(ins: Instr, before: list[str], try_starts: dict[int, int]) -> bool:
    """3.12+ place the code after a ``try`` before its handler: the handler's
    ``POP_EXCEPT; JUMP`` back there is no loop (a loop's head is before the try body)."""
    if before[-1:] != ["POP_EXCEPT"]:
        return False
    handler = max((h for h in try_starts if h <= ins.index), default=None)
    return handler is not None and try_starts[handler] < ins.target < handler


def _keep_jumps(instrs: list[Instr]) -> None:
    """3.12+ spell ``JUMP_IF_FALSE_OR_POP`` (``a and b``, chained comparisons) as
    ``COPY 1; [TO_BOOL;] POP_JUMP_IF_FALSE; POP_TOP``: fold it back into the 3.11 form."""
    targets = {i.target for i in instrs if i.target is not None}
    for k, ins in enumerate(instrs):
        if ins.opname != "COPY" or ins.arg != 1:
            continue
        j = k + 1
        while j < len(instrs) and instrs[j].opname == "TO_BOOL":
            j += 1
        if (
            j + 1 < len(instrs)
            and instrs[j].opname in ("POP_JUMP_IF_FALSE", "POP_JUMP_IF_TRUE")
            and instrs[j + 1].opname == "POP_TOP"
            and not targets & set(range(k + 1, j + 2))
        ):
            ins.opname = instrs[j + 1].opname = "NOP"
            way = "FALSE" if instrs[j].opname == "POP_JUMP_IF_FALSE" else "TRUE"
            instrs[j].opname = f"JUMP_IF_{way}_OR_POP"


def _restores_comprehension_names(instrs: list[Instr], target: int) -> bool:
    """An inlined comprehension's handler (3.12+): put the saved names back and re-raise.

    ``SWAP 2; POP_TOP; (SWAP 2; STORE_FAST name)+; RERAISE`` is no ``try`` of the source.
    """
    names = [i.opname for i in instrs[target : target + 16]]
    if names[:2] != ["SWAP", "POP_TOP"]:
        return False
    k = 2
    while names[k : k + 2] == ["SWAP", "STORE_FAST"]:
        k += 2
    return k > 2 and names[k : k + 1] == ["RERAISE"]


def _past_end_for(instrs: list[Instr], target: int, skip: int) -> int:
    """The index after an exhausted loop's END_FOR (and 3.13's POP_TOP of the iterator)."""
    if target < len(instrs) and instrs[target].opname == "END_FOR":
        return min(target + skip, len(instrs))
    return target


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
