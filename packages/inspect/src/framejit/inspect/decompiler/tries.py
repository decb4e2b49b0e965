"""``try``/``except``/``else``/``finally`` rebuilt from the exception table.

A handler starting with ``PUSH_EXC_INFO`` and the instructions the table routes to it make
a try statement; a ``finally`` body is copied onto every way out of the try, and those
copies are skipped.  ``except*`` clauses are read by ``except_star.py``; ``with`` handlers
are left to ``ops.py`` and ``passes.py``.
"""

from __future__ import annotations

import ast

from .engine import Block, Unsupported
from .values import ExceptionValue


class TryOps:
    """Finding try regions and building ``try`` statements from them."""

    def _find_try_regions(self) -> dict[int, tuple[int, int]]:
        entries: dict[int, list] = {}
        for entry in self.bc.exceptions:
            if entry.target < len(self.ins) and self.ins[entry.target].opname == "PUSH_EXC_INFO":
                entries.setdefault(entry.target, []).append(entry)
        start = {h: min(e.start for e in es) for h, es in entries.items()}
        end = {h: max(e.end for e in es) for h, es in entries.items()}
        parent: dict[int, int] = {}
        for handler in entries:
            cover = self.bc.covering(handler)
            outer = self.bc.covering(cover.target) if cover else None
            if outer is not None and outer.target in entries and outer.target != handler:
                parent[handler] = outer.target
        changed = True
        while changed:
            changed = False
            for child, outer in parent.items():
                if start[child] < start[outer]:
                    start[outer], changed = start[child], True
        return {h: (start[h], end[h]) for h in entries}

    def _is_with_handler(self, handler: int) -> bool:
        nxt = self.ins[handler + 1] if handler + 1 < len(self.ins) else None
        return nxt is not None and nxt.opname in {"WITH_EXCEPT_START", "BEFORE_ASYNC_WITH"}

    def _try_starting_at(self, i: int) -> int | None:
        best = None
        for handler, (start, end) in self.try_regions.items():
            candidate = (
                start == i
                and handler not in self.in_progress
                and not self._is_with_handler(handler)
            )
            if candidate and (best is None or end > self.try_regions[best][1]):
                best = handler
        return best

    def _cleanup_of(self, handler: int) -> tuple[int | None, int | None]:
        cover = self.bc.covering(handler)
        if cover is None:
            return None, None
        cleanup = cover.target
        if self.bc.opnames(cleanup, cleanup + 3) == ["COPY", "POP_EXCEPT", "RERAISE"]:
            return cleanup, cleanup + 3
        return cleanup, None

    def _is_except_handler(self, handler: int) -> bool:
        j = handler + 1
        if j < len(self.ins) and self.ins[j].opname == "POP_TOP":
            return True
        simple = {
            "LOAD_GLOBAL",
            "LOAD_NAME",
            "LOAD_FAST",
            "LOAD_DEREF",
            "LOAD_ATTR",
            "LOAD_CONST",
            "BUILD_TUPLE",
        }
        if self._is_star_handler(handler):
            return True
        while j < len(self.ins) and self.ins[j].opname in simple:
            j += 1
        return j < len(self.ins) and self.ins[j].opname == "CHECK_EXC_MATCH"

    def _handler_join(self, handler: int, limit: int, body_end: int) -> int | None:
        """3.12+: where the handlers jump back to the code after the try (placed between the
        try body and the handler); None when they jump forward as 3.11 does."""
        joins = {
            i.target
            for i in self.ins[handler:limit]
            if i.opname == "JUMP" and body_end <= i.target < handler
        }  # ``body_end`` itself when the code after the try directly follows the body
        return min(joins) if len(joins) == 1 else None

    def _try_statement(self, start: int, handler: int, blk: Block) -> int:
        if handler in self.tries_done:
            # its code is being decompiled twice (two paths reach it): rebuilding it again
            # could differ from the first copy, and skipping it would drop the ``try``
            raise Unsupported("try statement reached twice")
        self.in_progress.add(handler)  # its body starts here too
        _, body_end = self.try_regions[handler]
        cleanup, after_cleanup = self._cleanup_of(handler)
        limit = cleanup if cleanup is not None else len(self.ins)
        if self._is_except_handler(handler):
            follow = self._try_except(start, body_end, handler, limit, after_cleanup, blk)
        else:
            follow = self._try_finally(start, body_end, handler, limit, blk)
        self.in_progress.discard(handler)
        self.tries_done.add(handler)
        return follow

    def _past_closing_jumps(self, start: int, body_end: int, limit: int) -> int:
        """``body_end`` moved past the jumps back into the body right after it: a jump
        cannot raise, so the table range stops before a loop's closing jump (3.12+), but
        the loop belongs to the try body."""
        j = body_end
        while j < limit:
            if self.ins[j].opname in self.bc.table.ignored:
                j += 1
            elif self.ins[j].opname == "JUMP" and start <= self.ins[j].target < body_end:
                j += 1
                body_end = j
            else:
                break
        return body_end

    def _copy_at(self, j: int, signature: list[tuple], stop: int) -> int | None:
        """End of a copy of ``signature`` starting at ``j`` (no-op instructions skipped), or None."""
        if not signature or j >= stop or self.ins[j].opname in self.bc.table.ignored:
            return None
        k = 0
        while j < stop and k < len(signature):
            ins = self.ins[j]
            j += 1
            if ins.opname in self.bc.table.ignored:
                continue
            if ins.signature() != signature[k]:
                return None
            k += 1
        return j if k == len(signature) else None

    def _try_finally(self, start: int, body_end: int, handler: int, limit: int, blk: Block) -> int:
        fin_start = handler + 1
        fin_end = limit - 1 if self.ins[limit - 1].opname == "RERAISE" else limit
        ignored = self.bc.table.ignored
        # each way out of the finally body ends in RERAISE in the handler, but continues with
        # the code after the try (often a duplicated ``return``) in the copies: leave it out
        signature = [
            i.signature()
            for i in self.ins[fin_start:fin_end]
            if i.opname not in ignored and i.opname != "RERAISE"
        ]
        covered = {j for e in self.bc.handler_entries(handler) for j in range(e.start, e.end)}
        # the finally body is copied onto every way out of the try: the normal path right
        # after the body, and before each return/break/continue inside it
        copies: dict[int, int] = {}
        j = start
        while j < handler:
            copy_end = self._copy_at(j, signature, handler) if j not in covered else None
            if copy_end is not None:
                copies[j] = copy_end
                self.skip.update(range(j, copy_end))
                j = copy_end
            else:
                j += 1
        body = self.run(start, body_end, blk.stack, blk)
        after = max(body_end, min(body.end, handler))
        while after < handler and self.ins[after].opname in ignored and after not in copies:
            after += 1
        if after in copies:
            after = copies[after]
            if len(body.stack) > len(blk.stack):
                # ``return value`` in the body: the value waits while the finally copy runs
                tail = self.run(after, after + 1, body.stack, blk)
                body.out.extend(tail.out)
                after += 1
        handler_stack = [*blk.stack, ExceptionValue(), ExceptionValue()]
        final = self.run(fin_start, fin_end, handler_stack, blk, reach=self.reach_from(handler))
        blk.emit(ast.Try(body.out or [ast.Pass()], [], [], final.out or [ast.Pass()]))
        return after

    def _try_except(
        self, start: int, body_end: int, handler: int, limit: int, after_cleanup, blk: Block
    ) -> int:
        body_end = self._past_closing_jumps(start, body_end, handler)
        body = self.run(start, body_end, blk.stack, blk)
        body_end = max(body_end, min(body.end, handler))  # a branch may run past the table range
        reach = self.reach_from(handler)
        star = self._is_star_handler(handler)
        join = (
            self._star_join(handler, limit)
            if star
            else self._handler_join(handler, limit, body_end)
        )
        if join is not None and join < handler and join in self.skip:
            # the handlers go back to a copy of an enclosing ``finally``: what follows that
            # copy comes after the enclosing try; left as marked gotos (except*: pseudo-code)
            if star:
                raise Unsupported("except* handler that returns through a finally copy")
            join = None
        if join is not None and body_end <= join < handler:
            self.accepted_joins.add(join)  # the handlers' jumps back there end their clauses
        elif star and join is not None and join > handler:
            pass  # 3.11: the handler jumps forward past the try (and a late else)
        else:
            join = None
        handlers: list[ast.ExceptHandler] = (
            self._star_clauses(handler, limit, blk, reach) if star else []
        )
        base = [*blk.stack, ExceptionValue()]
        p = limit if star else handler + 1
        while p < limit:
            first = self.ins[p]
            if first.opname == "RERAISE":
                break
            if first.opname == "POP_TOP":  # bare ``except:``
                clause = self.run(p + 1, limit, base, blk, reach=reach)
                handlers.append(ast.ExceptHandler(None, None, clause.out or [ast.Pass()]))
                break
            match = p
            while match < limit and self.ins[match].opname != "CHECK_EXC_MATCH":
                match += 1
            if match + 2 >= limit:
                raise Unsupported("except clause layout")
            type_blk = self.run(p, match, [*base, ExceptionValue()], blk, reach=reach)
            exc_type = self.expr(type_blk.stack[-1], blk)
            jump = self.next_ins(match)
            bind = self.next_ins(jump.index) if jump is not None else None
            if jump is None or bind is None or jump.target is None:
                raise Unsupported("except clause layout")
            next_clause = jump.target
            name = bind.argval if bind.opname.startswith("STORE_") else None
            clause = self.run(bind.index + 1, next_clause, base, blk, reach=reach)
            handlers.append(ast.ExceptHandler(exc_type, name, clause.out or [ast.Pass()]))
            p = next_clause
        boundary = after_cleanup if after_cleanup is not None else limit
        ends = [
            i.target for i in self.ins[handler:limit] if i.opname == "JUMP" and i.target >= boundary
        ]
        before = self.ins[handler - 1]
        else_end = handler
        if (
            before.opname == "JUMP"
            and before.target > handler
            and self._loop_jump(before.target, blk) is None
        ):
            ends.append(before.target)
            else_end = handler - 1
        follow = min(ends) if ends else boundary
        if else_end > blk.stop > body_end:
            # 3.12+ puts the handler at the end of the code: an ``else`` that falls into the
            # code after an enclosing ``if`` ends where that block ends
            else_end = follow = blk.stop
        if join is not None and body_end <= join < else_end:
            # 3.12+: the handler jumps back into the normal path: what follows is after the try
            else_end = follow = join
        orelse = []
        late_else = (
            star
            and join is not None
            and before.opname == "JUMP"
            and boundary <= before.target < join
            and before.target in ends
        )
        if late_else:
            # 3.11 puts an ``except*``'s else after the handler, which jumps past it
            orelse = self.run(before.target, join, blk.stack, blk).out
            follow = join
        elif else_end > body_end:
            if len(body.stack) > len(
                blk.stack
            ):  # the body's last value is used after its range (return)
                body.out.extend(self.run(body_end, else_end, body.stack, blk).out)
            else:
                orelse = self.run(body_end, else_end, blk.stack, blk).out
                if len(orelse) == 1 and isinstance(orelse[0], (ast.Break, ast.Continue)):
                    body.out.extend(orelse)  # ``try: x = f(); break``: the jump cannot raise
                    orelse = []
        after: list[ast.stmt] = []
        tail = self.star_tail if star else None
        if tail is not None:
            # 3.12+ copied the code after the try into the handler's end: it is that code
            same = self._copy_at(
                body_end, [i.signature() for i in self.ins[tail[0] : tail[1]]], else_end + 1
            )
            if not orelse or same is None:
                raise Unsupported("except* followed by code only the handler runs")
            orelse, after = [], orelse
        node = ast.TryStar if star else ast.Try
        blk.emit(node(body.out or [ast.Pass()], handlers, orelse, []))
        blk.out.extend(after)
        # code after a try whose body always returns is reached only through a handler
        if ends and follow < len(self.ins) and follow not in blk.reach:
            extra = self.reach_from(follow)
            self.bc.normal_reachable.update(extra)
            if isinstance(blk.reach, set):
                blk.reach.update(extra)
        return min(follow, blk.stop)
