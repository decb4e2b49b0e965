"""The symbolic executor's core: blocks, the dispatch loop, stack helpers.

A *block* is a half-open range of instructions decompiled with a symbolic stack
(``ast`` expressions and ``values.Marker`` entries) into a list of statements.
Control structures (``control.py``) decompile their parts as nested blocks; the
opcode handlers (``ops.py``) are methods named after the canonical opcode, so
dispatch is ``getattr(self, ins.opname)``.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass, field

from .bytecode import Bytecode, Instr, read
from .values import Marker, to_expr


class Unsupported(Exception):
    """A construct the decompiler cannot recover (rendered as pseudo-code by the caller)."""


class SandboxAbort(Exception):
    """A trial run (condition chains, unpacking probes) met something it does not allow."""


@dataclass(frozen=True)
class Loop:
    """Where ``continue`` and ``break`` of the innermost loop jump to."""

    continue_targets: frozenset[int]
    break_target: int
    body_end: int = -1  # the loop-closing jump (the body block's stop)
    break_aliases: frozenset[int] = frozenset()  # no-op code that falls into break_target


@dataclass
class Block:
    stack: list
    stop: int
    loops: tuple[Loop, ...] = ()
    reach: frozenset[int] | set[int] = frozenset()
    sandbox: bool = False  # stop at the first top-level conditional jump; no statements allowed
    out: list[ast.stmt] = field(default_factory=list)
    floor: int = 0  # the stack depth this block may not pop below in sandbox mode
    expr_start: int = 0  # where the expression now on top of the stack began
    stopped_at: int | None = None
    end: int = 0

    def emit(self, stmt: ast.stmt) -> None:
        if self.sandbox:
            raise SandboxAbort("statement in a trial run")
        self.out.append(stmt)


@dataclass
class Shared:
    """State shared by a decompiler and the ones it starts for nested code objects."""

    temp_counter: int = 0

    def temp(self) -> str:
        self.temp_counter += 1
        return f"__temp_{self.temp_counter}"


class Engine:
    """Runs opcode handlers over blocks. Subclassed by the full decompiler."""

    def __init__(self, code: types.CodeType, shared: Shared | None = None) -> None:
        self.code = code
        self.bc: Bytecode = read(code)
        self.ins: list[Instr] = self.bc.instrs
        self.shared = shared or Shared()
        self.in_progress: set[int] = set()
        self.skip: set[int] = set()
        self.declared_global: set[str] = set()
        self.declared_nonlocal: set[str] = set()
        self.kw_names: tuple[str, ...] = ()
        self._reach_cache: dict[int, set[int]] = {}

    # ----------------------------------------------------------- blocks
    def run(
        self,
        start: int,
        stop: int,
        stack: list,
        parent: Block | None = None,
        *,
        loops: tuple[Loop, ...] | None = None,
        sandbox: bool = False,
        reach: set[int] | frozenset[int] | None = None,
    ) -> Block:
        """Decompile instructions ``[start, stop)`` starting from ``stack`` (a copy is taken)."""
        blk = Block(
            stack=list(stack),
            stop=min(stop, len(self.ins)),
            loops=loops if loops is not None else (parent.loops if parent else ()),
            reach=reach
            if reach is not None
            else (parent.reach if parent else self.bc.normal_reachable),
            sandbox=sandbox,
        )
        blk.floor = len(blk.stack)
        base = len(blk.stack)
        i = start
        while i < blk.stop:
            if i not in blk.reach or i in self.skip:
                i += 1
                continue
            if len(blk.stack) <= base:
                blk.expr_start = i
            ins = self.ins[i]
            if sandbox and ins.opname == "JUMP" and self._skips_only_cleanup(ins):
                i = ins.target  # past a chained comparison's cleanup, the test goes on
                continue
            if sandbox and (ins.is_cond_jump or ins.opname == "JUMP"):
                blk.stopped_at = i
                break
            nxt = self.structure_at(i, blk)
            if nxt is None:
                nxt = self.dispatch(ins, blk)
            i = i + 1 if nxt is None else nxt
        blk.end = i
        return blk

    def _skips_only_cleanup(self, ins: Instr) -> bool:
        """A forward jump over nothing but a chained comparison's ``POP_TOP`` cleanup."""
        skipped = self.ins[ins.index + 1 : ins.target]
        return (
            ins.target > ins.index
            and 0 < len(skipped) <= 4
            and all(i.opname in {"POP_TOP", "SWAP", "NOP", "JUMP"} for i in skipped)
            and any(i.opname == "POP_TOP" for i in skipped)
        )

    def dispatch(self, ins: Instr, blk: Block) -> int | None:
        if ins.opname in self.bc.table.ignored:
            return None
        handler = getattr(self, ins.opname, None)
        if handler is None:
            raise Unsupported(f"no handler for {ins.raw_opname}")
        return handler(ins, blk)

    def structure_at(self, i: int, blk: Block) -> int | None:  # overridden by control.py
        return None

    def reach_from(self, start: int) -> set[int]:
        """Instructions reachable from ``start`` (a handler) without exception edges."""
        if start not in self._reach_cache:
            from .bytecode import _reachable

            self._reach_cache[start] = _reachable(self.ins, start)
        return self._reach_cache[start]

    # ----------------------------------------------------------- stack helpers
    def pop_raw(self, blk: Block):
        if blk.sandbox and len(blk.stack) <= blk.floor:
            raise SandboxAbort("pops below the trial run's stack")
        if not blk.stack:
            raise Unsupported("stack underflow")
        return blk.stack.pop()

    def pop(self, blk: Block) -> ast.expr:
        return self.expr(self.pop_raw(blk), blk)

    def popn(self, blk: Block, n: int) -> list[ast.expr]:
        items = [self.pop(blk) for _ in range(n)]
        items.reverse()
        return items

    def expr(self, value, blk: Block) -> ast.expr:
        """A stack entry as an expression; subclasses render functions and comprehensions."""
        return to_expr(value)

    def next_ins(self, i: int, skip_ignored: bool = True) -> Instr | None:
        j = i + 1
        while j < len(self.ins) and skip_ignored and self.ins[j].opname in self.bc.table.ignored:
            j += 1
        return self.ins[j] if j < len(self.ins) else None

    @staticmethod
    def is_marker(value: object, kind: type = Marker) -> bool:
        return isinstance(value, kind)
