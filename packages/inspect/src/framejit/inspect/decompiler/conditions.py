"""Conditional jumps as Python tests: ``if``/``elif``/``else``, ternaries, ``and``/``or`` values.

A run of conditional jumps is a chain of tests (``CondNode``); ``_formula`` rebuilds the
``and``/``or``/``not`` expression whose truth leads to the fall-through, then the chain
becomes an ``if`` statement, a ternary, a ``while`` (``loops.py``) or a loop's
``continue``/``break`` (``jumps.py``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .engine import Block, SandboxAbort, Unsupported
from .opcodes import KEEP_JUMPS, POP_JUMPS


class NoChain(Exception):
    """The conditional jumps do not form one boolean expression."""


@dataclass
class CondNode:
    test: ast.expr
    jump_when: bool  # the jump is taken when ``test`` is this
    start: int  # first instruction evaluating ``test``
    index: int  # the jump instruction
    target: int


def negate(test: ast.expr) -> ast.expr:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return test.operand
    inverse = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in inverse:
        return ast.Compare(test.left, [inverse[type(test.ops[0])]()], test.comparators)
    return ast.UnaryOp(ast.Not(), test)


def literal(test: ast.expr, truth: bool) -> ast.expr:
    return test if truth else negate(test)


def _boolop(op: type, left: ast.expr, right: ast.expr) -> ast.expr:
    values = []
    for side in (left, right):
        values.extend(
            side.values if isinstance(side, ast.BoolOp) and isinstance(side.op, op) else [side]
        )
    return ast.BoolOp(op(), values)


class ConditionOps:
    """Handlers for conditional jumps and the statements and values they make."""

    def _node(self, value: ast.expr, ins, start: int) -> CondNode:
        kind, when = POP_JUMPS[ins.opname]
        if kind == "none":
            value = ast.Compare(value, [ast.Is()], [ast.Constant(None)])
        return CondNode(value, when, start, ins.index, ins.target)

    def _trial_test(self, pos: int, blk: Block) -> tuple[Block, int] | None:
        """A trial run from ``pos`` that stops at a conditional jump having pushed one value
        and emitted nothing (the jump's test is a pure expression): (run, jump index)."""
        try:
            trial = self.run(pos, blk.stop, blk.stack, blk, sandbox=True)
        except (SandboxAbort, Unsupported, IndexError, KeyError, AttributeError):
            return None
        j = trial.stopped_at
        if (
            j is None
            or trial.out
            or len(trial.stack) != len(blk.stack) + 1
            or not self.ins[j].is_cond_jump
        ):
            return None
        return trial, j

    def _chain_nodes(self, pos: int, blk: Block) -> list[CondNode]:
        """The conditional jumps right after ``pos`` whose tests are pure expressions."""
        nodes: list[CondNode] = []
        while len(nodes) < 24 and pos < blk.stop:
            found = self._trial_test(pos, blk)
            if found is None:
                break
            trial, j = found
            value = self.expr(trial.stack[-1], trial)
            nodes.append(self._node(value, self.ins[j], pos))
            pos = j + 1
        return nodes

    def _formula(
        self, nodes: list[CondNode], lo: int, hi: int, t: int, f: int, end: int
    ) -> ast.expr:
        """The test of ``nodes[lo:hi]`` that is true when control reaches ``t`` (else ``f``)."""

        def label(m: int) -> int:
            return end if m == len(nodes) else nodes[m].start

        node = nodes[lo]
        if hi - lo == 1:
            fall = label(hi)
            if node.target == t and fall == f:
                return literal(node.test, node.jump_when)
            if node.target == f and fall == t:
                return literal(node.test, not node.jump_when)
            raise NoChain
        if node.target == f:
            return _boolop(
                ast.And,
                literal(node.test, not node.jump_when),
                self._formula(nodes, lo + 1, hi, t, f, end),
            )
        if node.target == t:
            return _boolop(
                ast.Or,
                literal(node.test, node.jump_when),
                self._formula(nodes, lo + 1, hi, t, f, end),
            )
        m = next((m for m in range(lo + 1, hi) if nodes[m].start == node.target), None)
        if m is None:
            raise NoChain
        inner = {nodes[q].start for q in range(lo + 1, m)} | {label(m)}
        exits = {n.target for n in nodes[lo:m]} - inner
        rest = self._formula(nodes, m, hi, t, f, end)
        if exits == {t}:
            return _boolop(ast.Or, self._formula(nodes, lo, m, t, label(m), end), rest)
        if exits == {f}:
            return _boolop(ast.And, self._formula(nodes, lo, m, label(m), f, end), rest)
        raise NoChain

    def _choose_chain(self, nodes: list[CondNode]) -> tuple[ast.expr, int, int, int]:
        """(test, nodes used, false target E, true target T) for the longest consistent chain."""
        for k in range(len(nodes), 0, -1):
            fall, false = nodes[k - 1].index + 1, nodes[k - 1].target
            chain = [self._retarget(n, fall, false) for n in nodes[:k]]
            if k > 1 and (false == fall or any(n.target == n.index + 1 for n in chain)):
                continue
            allowed = {n.start for n in chain[1:]} | {fall, false}
            if any(n.target not in allowed for n in chain):
                continue
            try:
                return self._formula(chain, 0, k, fall, false, fall), k, false, fall
            except NoChain:
                continue
        first = nodes[0]
        return literal(first.test, not first.jump_when), 1, first.target, first.index + 1

    def _retarget(self, node: CondNode, fall: int, false: int) -> CondNode:
        """A test jumping to a duplicate of the chain's exit block jumps to the exit itself;
        one jumping past the chained-comparison cleanup at ``fall`` jumps to ``fall``."""
        at_fall = self.ins[fall] if fall < len(self.ins) else None
        skips_cleanup = (
            at_fall is not None and at_fall.opname == "JUMP" and self._skips_only_cleanup(at_fall)
        )
        if skips_cleanup and node.target == at_fall.target:
            return CondNode(node.test, node.jump_when, node.start, node.index, fall)
        for label in (false, fall):
            if node.target != label and self.bc.same_exit(node.target, label):
                return CondNode(node.test, node.jump_when, node.start, node.index, label)
        return node

    def POP_JUMP_IF_FALSE(self, ins, blk: Block):
        value = self.pop(blk)
        start = blk.expr_start
        nodes = [self._node(value, ins, start), *self._chain_nodes(ins.index + 1, blk)]
        test, k, false, fall = self._choose_chain(nodes)
        if false == fall:
            blk.emit(ast.If(test, [ast.Pass()], []))
            return fall
        jump = self.ins[false - 1] if false - 1 > ins.index else None
        if (
            jump is not None
            and jump.is_cond_jump
            and jump.target == fall
            and jump.index > nodes[k - 1].index
        ):
            return self._while_cond(start, test, fall, false, blk)
        loop_end = self._bottom_tested_loop(fall, false) if false > fall else None
        if loop_end is not None:  # the loop's exits are duplicated ``return`` blocks
            return self._while_cond(start, test, fall, loop_end + 1, blk)
        loop_stmt = self._loop_jump(false, blk)
        if loop_stmt is not None or false <= ins.index:
            loop = blk.loops[-1] if blk.loops else None
            if loop is not None and false in loop.continue_targets and blk.stop == loop.body_end:
                # the rest of the loop body runs only when the test holds
                body = self.run(fall, blk.stop, blk.stack, blk)
                blk.emit(ast.If(test, body.out or [ast.Pass()], []))
                return blk.stop
            stmt = loop_stmt or self._goto(false, "unstructured jump")
            blk.emit(ast.If(negate(test), [stmt], []))
            return fall
        return self._if_statement(test, fall, false, blk)

    POP_JUMP_IF_TRUE = POP_JUMP_IF_NONE = POP_JUMP_IF_NOT_NONE = POP_JUMP_IF_FALSE

    def _if_statement(self, test: ast.expr, fall: int, false: int, blk: Block) -> int:
        stop = blk.stop
        then_end, else_range, follow = min(false, stop), None, min(false, stop)
        last = self.ins[false - 1] if fall <= false - 1 < len(self.ins) and false <= stop else None
        if last is not None and last.opname == "JUMP" and self._loop_jump(last.target, blk) is None:
            if last.target > false:
                then_end = false - 1
                follow = min(last.target, stop)
                else_range = (false, follow)
            elif last.target == false:
                then_end = false - 1
        elif last is not None and last.opname in KEEP_JUMPS and last.target > false:
            return self._and_or_value(test, fall, false, last, blk)
        elif last is not None:
            # the branch ends in continue/break/return, but paths inside it jump past the
            # else part to the end of the whole if/elif chain: that part is an ``else``
            # (3.12+ also sends a nested test's false branch there directly)
            beyond = [
                i.target
                for i in self.ins[fall : false - 1]
                if (i.opname == "JUMP" or i.opname in POP_JUMPS)
                and i.target > false
                and self._loop_jump(i.target, blk) is None
            ]
            if beyond:
                follow = min(max(beyond), stop)
                else_range = (false, follow) if follow > false else None
        then_blk = self.run(fall, then_end, blk.stack, blk)
        else_blk = self.run(*else_range, blk.stack, blk) if else_range else None
        depth = len(blk.stack)
        if (
            else_blk is not None
            and not then_blk.out
            and not else_blk.out
            and len(then_blk.stack) == depth + 1
            and len(else_blk.stack) == depth + 1
        ):
            value = ast.IfExp(
                test, self.expr(then_blk.stack[-1], blk), self.expr(else_blk.stack[-1], blk)
            )
            blk.stack.append(value)
            return follow
        if not then_blk.out and len(then_blk.stack) == depth + 1 and else_blk is None:
            if false <= stop:
                raise Unsupported("conditional value without an else branch")
            # the block ends mid-statement (a try body's table range stops before its return)
            then_blk = self.run(fall, false, blk.stack, blk)
            follow = false
        orelse = else_blk.out if else_blk else []
        if false > stop and else_blk is None:
            orelse = self._leaving_jump(false, stop, blk)
        blk.emit(ast.If(test, then_blk.out or [ast.Pass()], orelse))
        return follow

    def _leaving_jump(self, false: int, stop: int, blk: Block) -> list[ast.stmt]:
        """The ``else`` of a test whose false branch jumps past the end of its block.

        Falling off the block goes wherever its parent goes; that is right only when the
        jump lands there too. A jump that lands on a loop's head or exit elsewhere (3.12+
        sends ``if a: ... elif b:`` arms straight to the loop-closing jump) is a
        ``continue``/``break`` of its own.
        """
        lands = self._lands(false)
        if lands == self._lands(stop):
            return []
        stmt = self._loop_jump(lands, blk)
        return [stmt] if stmt is not None else []

    def _and_or_value(self, test: ast.expr, fall: int, false: int, keep_jump, blk: Block) -> int:
        """``(a and b) or c`` / ``(a or b) and c``: a popping test, then a keeping jump."""
        then_blk = self.run(fall, keep_jump.index, blk.stack, blk)
        rest_blk = self.run(false, keep_jump.target, blk.stack, blk)
        depth = len(blk.stack)
        if (
            then_blk.out
            or rest_blk.out
            or len(then_blk.stack) != depth + 1
            or len(rest_blk.stack) != depth + 1
        ):
            raise Unsupported("mixed and/or expression")
        middle = self.expr(then_blk.stack[-1], blk)
        rest = self.expr(rest_blk.stack[-1], blk)
        if KEEP_JUMPS[keep_jump.opname]:  # JUMP_IF_TRUE_OR_POP
            value = _boolop(ast.Or, _boolop(ast.And, test, middle), rest)
        else:
            value = _boolop(ast.And, _boolop(ast.Or, negate(test), middle), rest)
        blk.stack.append(value)
        return keep_jump.target

    def JUMP_IF_FALSE_OR_POP(self, ins, blk: Block):
        left = self.pop(blk)
        sub = self.run(ins.index + 1, ins.target, blk.stack, blk)
        if sub.out or len(sub.stack) != len(blk.stack) + 1:
            raise Unsupported("and/or operand with statements")
        op = ast.Or if KEEP_JUMPS[ins.opname] else ast.And
        blk.stack.append(_boolop(op, left, self.expr(sub.stack[-1], blk)))
        return ins.target

    JUMP_IF_TRUE_OR_POP = JUMP_IF_FALSE_OR_POP
