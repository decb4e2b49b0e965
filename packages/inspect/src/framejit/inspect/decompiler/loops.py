"""``for`` and ``while`` loops.

``FOR_ITER`` makes ``for``; a backward jump to a non-``FOR_ITER`` instruction makes
``while`` (3.11 repeats the test at the bottom of the loop).  Each loop's ``Loop`` record
tells ``jumps.py`` which targets are its ``continue`` and ``break``.
"""

from __future__ import annotations

import ast

from .conditions import CondNode, literal
from .engine import Block, Loop, SandboxAbort, Unsupported
from .values import Iterator


class LoopOps:
    """Handlers and helpers for ``for`` and ``while`` loops."""

    def FOR_ITER(self, ins, blk: Block):
        if blk.sandbox:
            raise SandboxAbort("loop in a trial run")
        from .ops import Slot

        source = self.pop_raw(blk)
        iterable = source.expr if isinstance(source, Iterator) else self.expr(source, blk)
        exit_ = ins.target
        heads = {ins.index}
        closers = [s for h in heads for s in self.bc.backward_sources.get(h, []) if s < exit_]
        body_end = max(closers) if closers else exit_
        if body_end < exit_ - 1 or (closers and self.ins[body_end].opname != "JUMP"):
            # code after the last jump back still belongs to the body (``if c: continue; raise``)
            body_end = exit_
        slot = Slot()
        trial = self.run_until_complete(
            ins.index + 1, blk, slot, [*blk.stack, Iterator(iterable), slot]
        )
        if trial is None:
            raise Unsupported("for loop target")
        body_start, body_stack = trial
        break_target = self._break_target(ins.index + 1, body_end, exit_, blk.stop)
        loop = Loop(frozenset(heads), break_target, body_end, self._aliases(exit_, break_target))
        body = self.run(body_start, body_end, body_stack, blk, loops=(*blk.loops, loop))
        orelse = self.run(exit_, break_target, blk.stack, blk).out if break_target > exit_ else []
        blk.emit(ast.For(slot.build(), iterable, body.out or [ast.Pass()], orelse))
        return max(break_target, exit_)

    def _break_target(self, lo: int, hi: int, natural_exit: int, stop: int) -> int:
        targets = [
            ins.target
            for ins in self.ins[lo:hi]
            if ins.target is not None
            and ins.target >= natural_exit
            and ins.target > ins.index
            and ins.opname != "SEND"
        ]
        return min(max(targets), stop) if targets else natural_exit

    def _aliases(self, lo: int, break_target: int) -> frozenset[int]:
        """Positions before ``break_target`` from which only no-op instructions lead to it."""
        aliases = set()
        j = break_target - 1
        while j >= lo and self.ins[j].opname in self.bc.table.ignored:
            aliases.add(j)
            j -= 1
        return frozenset(aliases)

    def _head_aliases(self, head: int) -> set[int]:
        """``head`` and the no-op instructions right after it (``while 1:`` starts with a NOP)."""
        heads = {head}
        j = head
        while j < len(self.ins) - 1 and self.ins[j].opname in self.bc.table.ignored:
            j += 1
            heads.add(j)
        return heads

    def _loop_end(self, head: int) -> int:
        end = max(self.bc.backward_sources[head])
        changed = True
        while changed:
            changed = False
            for target, sources in self.bc.backward_sources.items():
                if (
                    head < target <= end
                    and self._first_real(target).opname != "FOR_ITER"
                    and max(sources) > end
                ):
                    end, changed = max(sources), True
        return end

    def _while_loop(self, head: int, blk: Block) -> int:
        end = self._loop_end(head)
        closing = self.ins[end]
        if (
            closing.is_cond_jump and closing.target > head
        ):  # 3.11: the test is repeated at the bottom
            nodes = self._trial_chain(head, blk)
            if nodes:
                test, _, false, fall = self._choose_chain(nodes)
                if fall == closing.target and self.bc.same_exit(false, end + 1):
                    return self._while_cond(head, test, fall, end + 1, blk)
        heads = self._head_aliases(head)
        self.in_progress.update(heads)
        bottom_test = (
            closing.is_cond_jump and closing.target == head
        )  # ``while True: ... if c: continue; break``
        break_target = self._break_target(head, end, end + 1, blk.stop)
        # with a bottom test, falling off the body is not a ``continue``: no body_end shortcut
        loop = Loop(
            frozenset(heads),
            break_target,
            -1 if bottom_test else end,
            self._aliases(end + 1, break_target),
        )
        body = self.run(head, end, blk.stack, blk, loops=(*blk.loops, loop))
        statements = body.out
        if bottom_test:
            if len(body.stack) != len(blk.stack) + 1:
                raise Unsupported("loop test at the bottom")
            stays = self._node(self.expr(body.stack[-1], blk), closing, end)
            statements.append(ast.If(literal(stays.test, not stays.jump_when), [ast.Break()], []))
        elif closing.opname != "JUMP" or closing.target not in heads:
            raise Unsupported("loop closed by an unrecognised jump")
        blk.emit(ast.While(ast.Constant(True), statements or [ast.Pass()], []))
        return max(break_target, end + 1)

    def _trial_chain(self, head: int, blk: Block) -> list[CondNode]:
        self.in_progress.add(head)  # the trial run must not start this loop again
        try:
            found = self._trial_test(head, blk)
        finally:
            self.in_progress.discard(head)
        if found is None:
            return []
        trial, j = found
        first = self._node(self.expr(trial.stack[-1], trial), self.ins[j], head)
        return [first, *self._chain_nodes(j + 1, blk)]

    def _while_cond(self, start: int, test: ast.expr, fall: int, false: int, blk: Block) -> int:
        """``while test:`` whose test spans ``[start, fall)`` and is repeated just before ``false``."""
        length = fall - start
        bottom = false - length
        top_sig = [i.signature() for i in self.ins[start:fall] if not i.is_jump]
        bottom_sig = [i.signature() for i in self.ins[bottom:false] if not i.is_jump]
        body_end = bottom if bottom >= fall and top_sig == bottom_sig else false
        heads = self._head_aliases(start) | self._head_aliases(fall)
        self.in_progress.update(heads)
        break_target = self._break_target(fall, body_end, false, blk.stop)
        loop = Loop(frozenset(heads), break_target, body_end, self._aliases(false, break_target))
        body = self.run(fall, body_end, blk.stack, blk, loops=(*blk.loops, loop))
        orelse = self.run(false, break_target, blk.stack, blk).out if break_target > false else []
        blk.emit(ast.While(test, body.out or [ast.Pass()], orelse))
        return max(break_target, false)

    def _bottom_tested_loop(self, fall: int, false: int) -> int | None:
        """The end of a loop starting at ``fall`` whose repeated test exits like ``false``."""
        if fall not in self.bc.backward_sources:
            return None
        end = self._loop_end(fall)
        closing = self.ins[end]
        if closing.is_cond_jump and closing.target == fall and self.bc.same_exit(false, end + 1):
            return end
        return None
