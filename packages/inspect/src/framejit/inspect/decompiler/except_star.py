"""``except*`` handlers (exception groups) in 3.11's and 3.12+'s layouts.

The handler keeps the group and a list of what its clauses raised (the prologue), tests
each clause with ``CHECK_EG_MATCH``, then re-raises what no clause handled
(``PREP_RERAISE_STAR``, 3.12+: ``CALL_INTRINSIC_2``).
"""

from __future__ import annotations

import ast

from .engine import Block, Unsupported
from .values import ExceptionValue


class ExceptStarOps:
    """Reading an ``except*`` handler's clauses for ``tries.py``."""

    def _star_join(self, handler: int, limit: int) -> int | None:
        """The target of the jump that ends an ``except*`` handler (see ``_star_tail``)."""
        for j in range(handler, limit - 6):
            if (
                self.ins[j].opname in ("PREP_RERAISE_STAR", "CALL_INTRINSIC_2")
                and self.ins[j - 1].opname == "LIST_APPEND"
            ):
                end = self.ins[j + 5]
                return end.target if end.opname == "JUMP" else None
        return None

    def _star_prologue(self, handler: int) -> int:
        """``except*``: the handler keeps the group and a list of what the clauses raised
        (3.11: ``COPY 1; BUILD_LIST; SWAP 2``, 3.12+: ``BUILD_LIST; COPY 2``); the length of
        that prologue, 0 for another handler."""
        if self.bc.opnames(handler + 1, handler + 4) == ["COPY", "BUILD_LIST", "SWAP"]:
            return 3
        if self.bc.opnames(handler + 1, handler + 3) == ["BUILD_LIST", "COPY"]:
            return 2
        return 0

    def _is_star_handler(self, handler: int) -> bool:
        return self._star_prologue(handler) > 0

    def _star_tail(self, p: int) -> tuple[int, int] | None:
        """After the clauses: ``LIST_APPEND 1; PREP_RERAISE_STAR; COPY 1; POP_JUMP_IF_NOT_NONE
        R; POP_TOP; POP_EXCEPT`` then a jump past the try (3.11) or, 3.12+, a copy of the code
        after it up to ``R``: that copy's range, None for the jump."""
        names = self.bc.opnames(p, p + 6)
        if names[:1] != ["LIST_APPEND"] or names[1] not in (
            "PREP_RERAISE_STAR",
            "CALL_INTRINSIC_2",
        ):
            raise Unsupported("except* without its re-raise")
        if names[2:] != ["COPY", "POP_JUMP_IF_NOT_NONE", "POP_TOP", "POP_EXCEPT"]:
            raise Unsupported("except* without its re-raise")
        q = p + 6
        if self.ins[q].opname == "JUMP":
            return None
        return q, self.ins[p + 3].target

    def _star_clauses(self, handler: int, limit: int, blk: Block, reach) -> list[ast.ExceptHandler]:
        """``except* E as name:`` clauses: ``E; CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE no``,
        the store, the body (its own table entry adds what it raises to the list), a jump to
        the next clause; ``no: POP_TOP``; after the last, PREP_RERAISE_STAR re-raises the rest."""
        base = [*blk.stack, ExceptionValue(), ExceptionValue(), ExceptionValue()]
        clauses = []
        p = handler + 1 + self._star_prologue(handler)
        while p < limit and self.ins[p].opname != "LIST_APPEND":
            m = p
            while m < limit and self.ins[m].opname != "CHECK_EG_MATCH":
                m += 1
            test = self.ins[m + 2] if m + 2 < limit else None
            if test is None or self.bc.opnames(m + 1, m + 2) != ["COPY"]:
                raise Unsupported("except* clause layout")
            if test.opname != "POP_JUMP_IF_NONE" or self.ins[test.target].opname != "POP_TOP":
                raise Unsupported("except* clause layout")
            type_blk = self.run(p, m, base, blk, reach=reach)
            if len(type_blk.stack) != len(base) + 1 or type_blk.out:
                raise Unsupported("except* clause type")
            exc_type = self.expr(type_blk.stack[-1], blk)
            bind = self.ins[m + 3]
            name = bind.argval if bind.opname.startswith("STORE_") else None
            if name is None and bind.opname != "POP_TOP":
                raise Unsupported("except* clause layout")
            entry = self.bc.covering(m + 4)
            stop = entry.target if entry is not None and entry.target > m + 4 else test.target
            if entry is None or entry.target >= test.target:
                stop = next(
                    (j.index for j in self.ins[m + 4 : test.target] if j.opname == "JUMP"),
                    test.target,
                )
            for j in range(m + 4, stop - 1):  # 3.13 adds the rest to the list before the jump
                if self.bc.opnames(j, j + 2) == ["LIST_APPEND", "JUMP"] and self.ins[j].arg == 1:
                    stop = j
                    break
            body = self.run(m + 4, stop, base, blk, reach=reach)
            clauses.append(ast.ExceptHandler(exc_type, name, body.out or [ast.Pass()]))
            p = test.target + 1
        self.star_tail = self._star_tail(p)
        return clauses
