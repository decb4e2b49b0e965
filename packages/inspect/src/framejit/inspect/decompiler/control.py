"""Control structures recovered from jumps and the exception table.

- conditions: a run of conditional jumps is a chain of tests; ``_formula``
  rebuilds the ``and``/``or``/``not`` expression whose truth leads to the
  fall-through, then the chain becomes ``if``/``elif``/``else``, a ternary,
  ``while``, or a loop's ``continue``/``break``.
- loops: ``FOR_ITER`` makes ``for``; a backward jump to a non-``FOR_ITER``
  instruction makes ``while`` (3.11 repeats the test at the bottom of the loop).
- exceptions: a handler starting with ``PUSH_EXC_INFO`` and the instructions the
  table routes to it make ``try``/``except``/``else``/``finally``; ``with`` is
  handled by BEFORE_WITH and the exit call in ``ops.py`` and folded in ``passes.py``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .engine import Block, Loop, SandboxAbort, Unsupported
from .opcodes import KEEP_JUMPS, POP_JUMPS
from .pseudo import PSEUDO_MARK
from .values import ExceptionValue, Iterator, WithEnd, WithExit, marker_stmt


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


def _literal(test: ast.expr, truth: bool) -> ast.expr:
    return test if truth else negate(test)


def _boolop(op: type, left: ast.expr, right: ast.expr) -> ast.expr:
    values = []
    for side in (left, right):
        values.extend(
            side.values if isinstance(side, ast.BoolOp) and isinstance(side.op, op) else [side]
        )
    return ast.BoolOp(op(), values)


class ControlFlow:
    """Handlers and helpers for jumps, loops and exception handlers."""

    def setup_control(self) -> None:
        self.jump_targets = {ins.target for ins in self.ins if ins.target is not None}
        self.try_regions = self._find_try_regions()
        self.reentered: set[int] = set()
        self.with_continuations = self._with_continuations()
        self.accepted_joins: set[int] = set()  # 3.12+: where handlers jump back after a try
        self.tries_done: set[int] = set()  # handlers whose try statement was built

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

    # ================================================================ structure entry
    def structure_at(self, i: int, blk: Block) -> int | None:
        if i in self.with_continuations and not blk.sandbox:
            depth = next(
                (
                    d
                    for d in range(len(blk.stack) - 1, -1, -1)
                    if isinstance(blk.stack[d], WithExit)
                ),
                None,
            )
            if depth is not None:  # the body never reached its normal exit: the with ends here
                del blk.stack[depth:]
                blk.emit(marker_stmt(WithEnd(False)))
            else:  # the with was left by return/break: this is reached only by a swallowed raise
                past = self._falls_off(i)
                if past is None:
                    raise Unsupported("code after a with reached only when __exit__ swallows")
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

    # ================================================================ conditions
    def _node(self, value: ast.expr, ins, start: int) -> CondNode:
        kind, when = POP_JUMPS[ins.opname]
        if kind == "none":
            value = ast.Compare(value, [ast.Is()], [ast.Constant(None)])
        return CondNode(value, when, start, ins.index, ins.target)

    def _chain_nodes(self, pos: int, blk: Block) -> list[CondNode]:
        """The conditional jumps right after ``pos`` whose tests are pure expressions."""
        nodes: list[CondNode] = []
        depth = len(blk.stack)
        while len(nodes) < 24 and pos < blk.stop:
            try:
                trial = self.run(pos, blk.stop, blk.stack, blk, sandbox=True)
            except (SandboxAbort, Unsupported, IndexError, KeyError, AttributeError):
                break
            j = trial.stopped_at
            if (
                j is None
                or trial.out
                or len(trial.stack) != depth + 1
                or not self.ins[j].is_cond_jump
            ):
                break
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
                return _literal(node.test, node.jump_when)
            if node.target == f and fall == t:
                return _literal(node.test, not node.jump_when)
            raise NoChain
        if node.target == f:
            return _boolop(
                ast.And,
                _literal(node.test, not node.jump_when),
                self._formula(nodes, lo + 1, hi, t, f, end),
            )
        if node.target == t:
            return _boolop(
                ast.Or,
                _literal(node.test, node.jump_when),
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
        return _literal(first.test, not first.jump_when), 1, first.target, first.index + 1

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

    def _bottom_tested_loop(self, fall: int, false: int) -> int | None:
        """The end of a loop starting at ``fall`` whose repeated test exits like ``false``."""
        if fall not in self.bc.backward_sources:
            return None
        end = self._loop_end(fall)
        closing = self.ins[end]
        if closing.is_cond_jump and closing.target == fall and self.bc.same_exit(false, end + 1):
            return end
        return None

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

    def _first_real(self, i: int):
        """The first instruction at or after ``i`` that is not a no-op (EXTENDED_ARG, NOP)."""
        while i < len(self.ins) - 1 and self.ins[i].opname in self.bc.table.ignored:
            i += 1
        return self.ins[i]

    def _head_aliases(self, head: int) -> set[int]:
        """``head`` and the no-op instructions right after it (``while 1:`` starts with a NOP)."""
        heads = {head}
        j = head
        while j < len(self.ins) - 1 and self.ins[j].opname in self.bc.table.ignored:
            j += 1
            heads.add(j)
        return heads

    def _offset(self, index: int) -> int:
        return self.ins[index].offset if index < len(self.ins) else self.ins[-1].offset + 2

    # ================================================================ loops
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
            statements.append(ast.If(_literal(stays.test, not stays.jump_when), [ast.Break()], []))
        elif closing.opname != "JUMP" or closing.target not in heads:
            raise Unsupported("loop closed by an unrecognised jump")
        blk.emit(ast.While(ast.Constant(True), statements or [ast.Pass()], []))
        return max(break_target, end + 1)

    def _trial_chain(self, head: int, blk: Block) -> list[CondNode]:
        self.in_progress.add(head)  # the trial run must not start this loop again
        try:
            trial = self.run(head, blk.stop, blk.stack, blk, sandbox=True)
        except (SandboxAbort, Unsupported, IndexError, KeyError, AttributeError):
            return []
        finally:
            self.in_progress.discard(head)
        j = trial.stopped_at
        if (
            j is None
            or trial.out
            or len(trial.stack) != len(blk.stack) + 1
            or not self.ins[j].is_cond_jump
        ):
            return []
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

    # ================================================================ exceptions
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
