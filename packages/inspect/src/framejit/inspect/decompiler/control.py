"""Control structures recovered from jumps and the exception table.

``ControlFlow`` joins one mixin per kind of structure and decides, at each instruction,
whether a ``with`` continuation, a ``try`` or a ``while`` loop starts there:

- ``conditions``: chains of conditional jumps as ``if``/``elif``/``else``, ternaries and
  ``and``/``or`` values;
- ``jumps``: what a plain jump means (``continue``, ``break``, a marked ``goto``);
- ``loops``: ``for`` and ``while``;
- ``tries`` and ``except_star``: ``try``/``except``/``else``/``finally`` and ``except*``;
- ``withs``: the code after a ``with`` that only a swallowed exception reaches.
"""

from __future__ import annotations

from .conditions import ConditionOps, CondNode, NoChain, negate
from .engine import Block, SandboxAbort
from .except_star import ExceptStarOps
from .jumps import JumpOps
from .loops import LoopOps
from .tries import TryOps
from .withs import WithOps

__all__ = ["CondNode", "ControlFlow", "NoChain", "negate"]


class ControlFlow(ConditionOps, JumpOps, LoopOps, TryOps, ExceptStarOps, WithOps):
    """Handlers and helpers for jumps, loops and exception handlers."""

    def setup_control(self) -> None:
        self.jump_targets = {ins.target for ins in self.ins if ins.target is not None}
        self.try_regions = self._find_try_regions()
        self.reentered: set[int] = set()
        self.with_continuations = self._with_continuations()
        self.accepted_joins: set[int] = set()  # 3.12+: where handlers jump back after a try
        self.tries_done: set[int] = set()  # handlers whose try statement was built

    def structure_at(self, i: int, blk: Block) -> int | None:
        if i in self.with_continuations and not blk.sandbox:
            past = self._with_continuation(i, blk)
            if past is not None:
                return past
        handler = self._try_starting_at(i)
        if handler is not None:
            if blk.sandbox:
                raise SandboxAbort("try statement in a trial run")
            return self._try_statement(i, handler, blk)
        if (
            i in self.bc.backward_sources
            and i not in self.in_progress
            and self._first_real(i).opname not in ("FOR_ITER", "GET_ANEXT")
        ):
            if blk.sandbox:
                raise SandboxAbort("loop in a trial run")
            return self._while_loop(i, blk)
        return None
