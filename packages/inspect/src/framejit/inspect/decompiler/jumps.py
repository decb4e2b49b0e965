"""What a jump means in the rebuilt source.

A jump to an enclosing loop's head or exit is ``continue``/``break``; a backward jump from
a handler to the code after its ``try`` ends the clause; the end of a loop body a resume
function jumped into re-enters the loop; what Python cannot say is a marked ``goto``
pseudo-statement that fails loudly if run.
"""

from __future__ import annotations

import ast

from .engine import Block, Loop
from .pseudo import PSEUDO_MARK


class JumpOps:
    """``JUMP`` and the helpers that name a jump's target."""

    def JUMP(self, ins, blk: Block):
        if ins.target < ins.index and ins.target in self.accepted_joins:
            return blk.stop  # a handler's way back to the code after its try: the clause ends
        stmt = self._loop_jump(ins.target, blk)
        if stmt is not None:
            blk.emit(stmt)
            return blk.stop if self._ends_block(ins.index, blk) else None
        if ins.target > ins.index:
            return min(ins.target, blk.stop)
        if self._reenter_loop(ins.target, blk):
            return ins.target
        blk.emit(self._goto(ins.target, "unstructured jump"))
        return blk.stop

    def _reenter_loop(self, target: int, blk: Block) -> bool:
        """A resume function jumped into a loop body; its end jumps back to the loop head.

        The rest of that iteration has been decompiled; the loop itself follows, starting
        from the head with the current stack (a ``for`` finds its iterator there).
        """
        if blk.loops or blk.stop < len(self.ins) or target in self.reentered:
            return False
        if target not in self.bc.backward_sources:
            return False
        self.reentered.add(target)
        return True

    def _loop_jump(self, target: int, blk: Block) -> ast.stmt | None:
        if not blk.loops:
            return None
        loop = blk.loops[-1]
        if target in loop.continue_targets:
            return ast.Continue()
        if target == loop.break_target or target in loop.break_aliases:
            return ast.Break()
        for outer in blk.loops[:-1]:
            if (
                target in outer.continue_targets
                or target == outer.break_target
                or target in outer.break_aliases
            ):
                if self._after_loop_goes_to(loop.break_target, target, outer):
                    return ast.Break()  # 3.12+ thread ``break`` through the jump after the loop
                return self._goto(target, "leaves an outer loop")
        return None

    def _after_loop_goes_to(self, exit_: int, target: int, outer: Loop) -> bool:
        """Whether the code right after a loop (at ``exit_``) does nothing but go to
        ``target`` of the enclosing loop ``outer``: then jumping there is a ``break``."""
        j = exit_
        while j < len(self.ins) and self.ins[j].opname in self.bc.table.ignored:
            j += 1
        if j == target or (j == outer.body_end and target in outer.continue_targets):
            return True
        if j >= len(self.ins) or self.ins[j].opname != "JUMP":
            return False
        lands = self.ins[j].target
        same_head = lands in outer.continue_targets and target in outer.continue_targets
        return lands == target or same_head

    def _goto(self, target: int, why: str) -> ast.stmt:
        """A jump with no Python equivalent: shown as a statement that fails loudly if run."""
        message = (
            f"{PSEUDO_MARK} goto offset {self._offset(target)} ({why}) has no Python equivalent"
        )
        return ast.Raise(
            ast.Call(ast.Name("NotImplementedError"), [ast.Constant(message)], []), None
        )

    def _lands(self, i: int) -> int:
        """Where control ends up from ``i`` through no-op instructions and plain jumps."""
        seen = set()
        while i < len(self.ins) and i not in seen:
            seen.add(i)
            if self.ins[i].opname in self.bc.table.ignored:
                i += 1
            elif self.ins[i].opname == "JUMP":
                i = self.ins[i].target
            else:
                break
        return i

    def _first_real(self, i: int):
        """The first instruction at or after ``i`` that is not a no-op (EXTENDED_ARG, NOP)."""
        while i < len(self.ins) - 1 and self.ins[i].opname in self.bc.table.ignored:
            i += 1
        return self.ins[i]

    def _offset(self, index: int) -> int:
        return self.ins[index].offset if index < len(self.ins) else self.ins[-1].offset + 2
