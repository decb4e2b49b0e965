"""Code after a ``with`` that only a swallowed exception reaches.

``with`` itself is handled by BEFORE_WITH and the exit call in ``ops.py`` and folded in
``passes.py``.  When the body always raises or returns, the code after the ``with`` is
reached only when ``__exit__`` swallows the exception: this module finds that code and
ends the ``with`` there.
"""

from __future__ import annotations

from .engine import Block, Unsupported
from .values import WithEnd, WithExit, marker_stmt


class WithOps:
    """The continuations of ``with`` statements whose body never falls off."""

    def _with_continuations(self) -> set[int]:
        """Where the code after a ``with`` goes on when ``__exit__`` swallowed the exception
        (``POP_JUMP_IF_TRUE T`` in the handler, ``T: POP_TOP; POP_EXCEPT; POP_TOP; POP_TOP``),
        for the withs whose body never gets there otherwise (it always raises or returns)."""
        found = set()
        for h, ins in enumerate(self.ins[:-1]):
            if ins.opname != "PUSH_EXC_INFO" or self.ins[h + 1].opname != "WITH_EXCEPT_START":
                continue
            jump = next(
                (j for j in self.ins[h + 2 : h + 12] if j.opname == "POP_JUMP_IF_TRUE"), None
            )
            t = jump.target if jump is not None else None
            if t is not None and self.bc.opnames(t, t + 4) == [
                "POP_TOP", "POP_EXCEPT", "POP_TOP", "POP_TOP"
            ]:  # fmt: skip
                c = t + 4
                while (
                    c < len(self.ins) and self.ins[c].opname == "JUMP" and self.ins[c].target != c
                ):
                    c = self.ins[c].target  # 3.12+ jump (even back) to the code after the with
                if c not in self.bc.normal_reachable and c < len(self.ins):
                    from .bytecode import _reachable

                    found.add(c)
                    self.bc.normal_reachable |= _reachable(self.ins, c)
        return found

    def _with_continuation(self, i: int, blk: Block) -> int | None:
        """At a with continuation ``i``: end the with whose body never reached its normal
        exit, or return where the code only a swallowed raise reaches ends (None: go on)."""
        depth = next(
            (d for d in range(len(blk.stack) - 1, -1, -1) if isinstance(blk.stack[d], WithExit)),
            None,
        )
        if depth is not None:  # the body never reached its normal exit: the with ends here
            del blk.stack[depth:]
            blk.emit(marker_stmt(WithEnd(False)))
            return None
        # the with was left by return/break: this is reached only by a swallowed raise
        past = self._falls_off(i)
        if past is None:
            raise Unsupported("code after a with reached only when __exit__ swallows")
        return past

    def _falls_off(self, i: int) -> int | None:
        """The end of ``i``'s code if it only closes enclosing withs and returns None (what
        the rebuilt source does implicitly at its end); None otherwise."""
        while i < len(self.ins):
            names = self.bc.opnames(i, i + 5)
            if names[:2] == ["LOAD_CONST", "RETURN_VALUE"] and self.ins[i].argval is None:
                return i + 2
            if names[:4] == ["LOAD_CONST", "LOAD_CONST", "LOAD_CONST", "CALL"]:
                i += 4
                if self.ins[i].opname == "GET_AWAITABLE":
                    i = self._past_await(i)
                    if i is None:
                        return None
                if self.ins[i].opname != "POP_TOP":
                    return None
                i += 1
                continue
            if self.ins[i].opname in self.bc.table.ignored:
                i += 1
                continue
            if self.ins[i].opname == "JUMP" and self.ins[i].target > i:
                i = self.ins[i].target
                continue
            return None
        return None
