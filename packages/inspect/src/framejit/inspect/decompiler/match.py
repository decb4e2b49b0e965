"""``match`` statements rebuilt from the bytecode CPython's pattern compiler emits.

Each case is read by a small stack machine of its own (``_PatternRun``) whose entries are
``Subject``s, the values being matched: ``MATCH_SEQUENCE`` / ``MATCH_MAPPING`` /
``MATCH_CLASS`` / comparisons refine the slot under test, ``UNPACK_SEQUENCE`` and
``BINARY_SUBSCR`` make its sub-slots, a store names a slot (a capture, or ``as`` when the
slot is also refined), and a slot popped untouched is ``_``.  Every conditional jump is a
*fail* jump: it must land in the case's chain of ``POP_TOP``s that pops exactly what the
jump leaves on the stack, which is what makes a run of instructions a case and not ordinary
code.  An or-pattern is one run per alternative, each ending in a jump to the common end.

The statement's layout (CPython's ``compiler_match``): every case but the last one that is
not ``case _`` starts with ``COPY 1`` of the subject and pops it after the pattern and the
guard; the bodies jump to the end; a trailing ``case _`` is the code between the last
case's fail label and that end.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .engine import Block, SandboxAbort, Unsupported
from .ops import BINARY_OPERATORS
from .values import Marker, constant

STORES = frozenset({"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF"})
SINGLETONS = (None, True, False)
_AFTER_STORES = STORES | {"POP_TOP", "SWAP"}
# how deep into the stack an instruction reaches (SWAP and COPY: their argument)
_REACH = dict.fromkeys(("POP_TOP", *STORES), 1)


class NoMatch(Exception):
    """The instructions are not a case of a match statement."""


@dataclass(eq=False)
class Subject(Marker):
    """A value being matched (the subject or a part of it) and what the pattern says of it."""

    kind: str | None = None  # "sequence" | "mapping" | "class" | "value" | "singleton" | "or"
    value: object = None  # the value's expression / the singleton
    length: int | None = None
    at_least: bool = False  # the length test is ``>=`` (a starred sequence, a mapping)
    items: list[Subject] | None = None  # sequence items (UNPACK), mapping values, class attributes
    star: int | None = None  # index of the starred item (UNPACK_EX)
    indexed: dict[int, Subject] = field(
        default_factory=dict
    )  # ``[a, *_, b]``: index -> slot (<0: from the end)
    keys: list[ast.expr] = field(default_factory=list)
    rest: Subject | None = None
    cls: ast.expr | None = None
    positional: int = 0
    kwd_names: tuple[str, ...] = ()
    alternatives: list[Subject] = field(default_factory=list)
    name: str | None = None
    links: list[Subject] = field(default_factory=list)  # the same capture in other or-alternatives

    def bind(self, name: str) -> None:
        for slot in (self, *self.links):
            if slot.name is not None:
                raise NoMatch("a value stored twice")
            slot.name = name

    def as_expr(self) -> ast.expr:
        raise SandboxAbort("pattern slot used as a value")

    # ------------------------------------------------------------ the pattern
    def pattern(self) -> ast.pattern:
        inner = self._inner()
        if inner is None:
            return ast.MatchAs(None, self.name)
        return ast.MatchAs(inner, self.name) if self.name else inner

    def _inner(self) -> ast.pattern | None:
        if self.kind == "value":
            return ast.MatchValue(self.value)
        if self.kind == "singleton":
            return ast.MatchSingleton(self.value)
        if self.kind == "or":
            return ast.MatchOr([alt.pattern() for alt in self.alternatives])
        if self.kind == "sequence":
            return ast.MatchSequence(self._sequence())
        if self.kind == "mapping":
            if self.items is None and self.keys:
                raise NoMatch("mapping pattern without its values")
            values = [s.pattern() for s in self.items or []]
            return ast.MatchMapping(
                list(self.keys), values, self.rest.name if self.rest is not None else None
            )
        if self.kind == "class":
            attrs = [s.pattern() for s in self.items or []]
            if len(attrs) != self.positional + len(self.kwd_names):
                raise NoMatch("class pattern attributes")
            return ast.MatchClass(
                self.cls, attrs[: self.positional], list(self.kwd_names), attrs[self.positional :]
            )
        return None

    def _sequence(self) -> list[ast.pattern]:
        if self.items is not None:
            out = [s.pattern() for s in self.items]
            if self.star is not None:
                out[self.star] = ast.MatchStar(self.items[self.star].name)
            return out
        wild = ast.MatchAs(None, None)
        if self.length is None:  # ``[*_]``: no length test at all
            return [ast.MatchStar(None)]
        if not self.at_least:
            if self.indexed:
                raise NoMatch("indexed items of a sequence of fixed length")
            return [wild] * self.length
        size = self.length + 1
        front = [i for i in self.indexed if i >= 0]
        star = max(front) + 1 if front else 0
        out: list[ast.pattern] = [wild] * size
        for index, slot in self.indexed.items():
            position = index if index >= 0 else size + index
            if (index >= 0) != (position < star) or not 0 <= position < size:
                raise NoMatch("sequence item around the star")
            out[position] = slot.pattern()
        out[star] = ast.MatchStar(None)
        return out


@dataclass
class _Test(Marker):
    """What a conditional jump tests: ``slot`` gets ``kind``/``value`` when it holds."""

    slot: Subject | None
    kind: str | None = None
    value: object = None
    length: int | None = None
    at_least: bool = False


@dataclass
class _Length(Marker):
    slot: Subject


@dataclass
class _FromEnd(Marker):
    """``len(subject) - k``: the index of an item after ``*_``."""

    slot: Subject
    k: int


@dataclass
class _Parts(Marker):
    """MATCH_KEYS' values / MATCH_CLASS' attributes (or None), for UNPACK_SEQUENCE."""

    slot: Subject


@dataclass
class _Value(Marker):
    expr: ast.expr

    def as_expr(self) -> ast.expr:
        return self.expr


@dataclass
class Fail:
    target: int
    depth: int  # what the jump leaves on the run's stack: the POP_TOPs its chain must have


class _PatternRun:
    """One case's (or one or-alternative's) pattern, run over its own stack."""

    def __init__(self, owner, start: int, stack: list, stop: int, alternative: bool = False):
        self.owner = owner
        self.ins = owner.ins
        self.pos = start
        self.stack = stack
        self.stop = stop
        self.alternative = alternative  # ends at the jump to the or-pattern's end
        self.fails: list[Fail] = []
        self.stores: list = []  # the store instructions, for global/nonlocal declarations
        self.refutable = False
        self.end_jump: int | None = None
        self.body_limit: int | None = None  # the case body ends here (3.12+'s copied tails)
        self.visited: set[int] = set()

    def pop(self):
        if not self.stack:
            raise NoMatch("pops below the pattern")
        return self.stack.pop()

    def slot(self, value) -> Subject:
        if not isinstance(value, Subject):
            raise NoMatch("pattern instruction on a non-pattern value")
        return value

    def run(self) -> int:
        """Run until the pattern's values are all consumed; returns where the case goes on."""
        ignored = self.owner.bc.table.ignored
        while self.pos < self.stop:
            if not self.stack and not self.alternative:
                return self.pos
            ins = self.ins[self.pos]
            self.visited.add(self.pos)
            if ins.opname in ignored:
                self.pos += 1
                continue
            if self.alternative and ins.opname == "JUMP":
                if ins.target <= ins.index:
                    raise NoMatch("backward jump in a pattern")
                self.end_jump = ins.index
                return self.pos
            if self.alternative and len(self.stack) < _REACH.get(
                ins.opname, ins.arg if ins.opname in ("SWAP", "COPY") else 0
            ):
                # 3.12+ copy the code after an or-pattern into each alternative: it starts
                # where the alternative's captures are rotated away or its subject popped
                if not all(isinstance(v, Subject) and v.kind is None for v in self.stack):
                    raise NoMatch("alternative ends with values on the stack")
                return self.pos
            handler = getattr(self, "op_" + ins.opname, None)
            if handler is None:
                raise NoMatch(f"{ins.opname} in a pattern")
            if self.stores and ins.opname not in _AFTER_STORES:
                # a case binds its names only once the whole pattern matched: a store before
                # a test is ordinary code (``if (x := f()) is None``), not a capture
                raise NoMatch("a store before the pattern's end")
            nxt = handler(ins)
            self.pos = self.pos + 1 if nxt is None else nxt
        raise NoMatch("pattern runs past its block")

    # ------------------------------------------------------------ stack
    def op_COPY(self, ins):
        if len(self.stack) < ins.arg:
            raise NoMatch("COPY below the pattern")
        top = self.stack[-1]
        if ins.arg == 1 and isinstance(top, Subject):
            after = self.owner._or_pattern(ins.index, top, self)
            if after is not None:
                return after
        self.stack.append(self.stack[-ins.arg])
        return None

    def op_SWAP(self, ins):
        if len(self.stack) < ins.arg:
            raise NoMatch("SWAP below the pattern")
        self.stack[-1], self.stack[-ins.arg] = self.stack[-ins.arg], self.stack[-1]

    def op_POP_TOP(self, ins):
        self.pop()

    # ------------------------------------------------------------ values
    def op_LOAD_CONST(self, ins):
        self.stack.append(_Value(constant(ins.argval)))

    def op_LOAD_GLOBAL(self, ins):
        if ins.push_null:
            raise NoMatch("call in a pattern")
        self.stack.append(_Value(ast.Name(ins.argval)))

    op_LOAD_NAME = op_LOAD_FAST = op_LOAD_DEREF = op_LOAD_CLASSDEREF = op_LOAD_GLOBAL

    def op_LOAD_ATTR(self, ins):
        base = self.pop()
        if not isinstance(base, _Value):
            raise NoMatch("attribute of a pattern slot")
        self.stack.append(_Value(ast.Attribute(base.expr, ins.argval)))

    def op_BUILD_TUPLE(self, ins):
        parts = [self.pop() for _ in range(ins.arg)][::-1]
        if not all(isinstance(p, _Value) for p in parts):
            raise NoMatch("tuple of pattern slots")
        self.stack.append(_Value(ast.Tuple([p.expr for p in parts], ast.Load())))

    # ------------------------------------------------------------ tests
    def op_MATCH_SEQUENCE(self, ins):
        slot = self.slot(self.stack[-1])
        slot.kind = "sequence" if ins.opname == "MATCH_SEQUENCE" else "mapping"
        self.stack.append(_Test(None))

    op_MATCH_MAPPING = op_MATCH_SEQUENCE

    def op_GET_LEN(self, ins):
        self.stack.append(_Length(self.slot(self.stack[-1])))

    def op_COMPARE_OP(self, ins):
        right, left = self.pop(), self.pop()
        op = str(ins.argval).replace("bool(", "").rstrip(")")
        if isinstance(left, _Length) and isinstance(right, _Value):
            count = right.expr.value if isinstance(right.expr, ast.Constant) else None
            if op not in ("==", ">=") or not isinstance(count, int):
                raise NoMatch("length test")
            self.stack.append(_Test(left.slot, length=count, at_least=op == ">="))
            return
        if isinstance(left, Subject) and isinstance(right, _Value) and op == "==":
            self.stack.append(_Test(left, "value", right.expr))
            return
        raise NoMatch("comparison in a pattern")

    def op_IS_OP(self, ins):
        right, left = self.pop(), self.pop()
        value = right.expr.value if isinstance(right, _Value) else object()
        if not isinstance(getattr(right, "expr", None), ast.Constant) or not any(
            value is s for s in SINGLETONS
        ):
            raise NoMatch("identity test in a pattern")
        if isinstance(left, Subject) and not ins.arg:
            self.stack.append(_Test(left, "singleton", value))
        elif isinstance(left, _Parts) and ins.arg and value is None:
            self.stack.append(_Test(None))  # ``MATCH_KEYS``/``MATCH_CLASS`` found something
        else:
            raise NoMatch("identity test in a pattern")

    def op_POP_JUMP_IF_FALSE(self, ins):
        test = self.pop()
        if ins.opname == "POP_JUMP_IF_FALSE" and isinstance(test, _Test):
            slot = test.slot
            if slot is not None and test.kind is not None:
                if slot.kind is not None:
                    raise NoMatch("two tests of one value")
                slot.kind, slot.value = test.kind, test.value
            elif slot is not None:
                slot.length, slot.at_least = test.length, test.at_least
        elif ins.opname == "POP_JUMP_IF_NONE" and isinstance(test, _Parts):
            pass  # the COPY of MATCH_KEYS' / MATCH_CLASS' result
        elif ins.opname == "POP_JUMP_IF_NOT_NONE" and isinstance(test, Subject):
            if test.kind is not None:
                raise NoMatch("two tests of one value")
            test.kind, test.value = "singleton", None  # 3.12+: ``case None``
        else:
            raise NoMatch("conditional jump on a non-test")
        if ins.target <= ins.index:
            raise NoMatch("backward jump in a pattern")
        self.refutable = True
        self.fails.append(Fail(ins.target, len(self.stack)))

    op_POP_JUMP_IF_NONE = op_POP_JUMP_IF_NOT_NONE = op_POP_JUMP_IF_FALSE

    # ------------------------------------------------------------ structure
    def op_UNPACK_SEQUENCE(self, ins):
        source = self.pop()
        if ins.opname == "UNPACK_EX":
            before, after = ins.arg & 0xFF, ins.arg >> 8
            count, star = before + 1 + after, before
        else:
            count, star = ins.arg, None
        items = [Subject() for _ in range(count)]
        owner = source.slot if isinstance(source, _Parts) else self.slot(source)
        if owner.items is not None or (star is not None and owner.kind != "sequence"):
            raise NoMatch("unpacking in a pattern")
        if isinstance(source, Subject) and owner.kind != "sequence":
            raise NoMatch("unpacking a value that is no sequence")
        owner.items, owner.star = items, star
        self.stack.extend(reversed(items))

    op_UNPACK_EX = op_UNPACK_SEQUENCE

    def op_BINARY_SUBSCR(self, ins):
        index, container = self.pop(), self.slot(self.pop())
        if isinstance(index, _FromEnd) and index.slot is container:
            key = -index.k
        elif isinstance(index, _Value) and isinstance(index.expr, ast.Constant):
            key = index.expr.value
        else:
            raise NoMatch("subscript in a pattern")
        if not isinstance(key, int) or key in container.indexed or container.kind != "sequence":
            raise NoMatch("subscript in a pattern")
        container.indexed[key] = item = Subject()
        self.stack.append(item)

    def op_BINARY_OP(self, ins):
        right, left = self.pop(), self.pop()
        count = right.expr.value if isinstance(right, _Value) else None
        if BINARY_OPERATORS.get(ins.arg) != (ast.Sub, False) or not (
            isinstance(left, _Length) and isinstance(count, int)
        ):
            raise NoMatch("arithmetic in a pattern")
        self.stack.append(_FromEnd(left.slot, count))

    def op_MATCH_KEYS(self, ins):
        keys = self.stack[-1]
        slot = self.slot(self.stack[-2])
        if not isinstance(keys, _Value) or slot.kind != "mapping":
            raise NoMatch("MATCH_KEYS layout")
        expr = keys.expr
        if isinstance(expr, ast.Constant) and isinstance(expr.value, tuple):
            slot.keys = [constant(k) for k in expr.value]
        elif isinstance(expr, ast.Tuple):
            slot.keys = list(expr.elts)
        else:
            raise NoMatch("MATCH_KEYS layout")
        self.stack.append(_Parts(slot))

    def op_MATCH_CLASS(self, ins):
        names, cls, slot = self.pop(), self.pop(), self.slot(self.pop())
        if not (isinstance(names, _Value) and isinstance(cls, _Value)) or slot.kind is not None:
            raise NoMatch("MATCH_CLASS layout")
        kwd = names.expr.value if isinstance(names.expr, ast.Constant) else None
        if isinstance(names.expr, ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in names.expr.elts
        ):
            kwd = tuple(e.value for e in names.expr.elts)
        if not isinstance(kwd, tuple):
            raise NoMatch("MATCH_CLASS layout")
        slot.kind, slot.cls, slot.positional, slot.kwd_names = "class", cls.expr, ins.arg, kwd
        self.stack.append(_Parts(slot))

    def op_BUILD_MAP(self, ins):
        """``**rest``: BUILD_MAP 0; SWAP 3; DICT_UPDATE 2; UNPACK_SEQUENCE n;
        (COPY k; SWAP 2; DELETE_SUBSCR) * n leaves a copy without the matched keys."""
        i = ins.index
        names = [(x.opname, x.arg) for x in self.ins[i : i + 4]]
        if ins.arg != 0 or names[1:3] != [("SWAP", 3), ("DICT_UPDATE", 2)]:
            raise NoMatch("dict in a pattern")
        if names[3][0] != "UNPACK_SEQUENCE":
            raise NoMatch("dict in a pattern")
        n = names[3][1]
        deletes = self.ins[i + 4 : i + 4 + 3 * n]
        if [x.opname for x in deletes] != ["COPY", "SWAP", "DELETE_SUBSCR"] * n:
            raise NoMatch("**rest layout")
        self.pop()  # the keys
        slot = self.slot(self.pop())
        if slot.kind != "mapping" or slot.rest is not None:
            raise NoMatch("**rest layout")
        slot.rest = rest = Subject()
        self.stack.append(rest)
        return i + 4 + 3 * n

    # ------------------------------------------------------------ captures
    def op_STORE_FAST(self, ins):
        self.slot(self.pop()).bind(self.owner.local_name(ins.argval))
        self.stores.append(ins)

    op_STORE_NAME = op_STORE_GLOBAL = op_STORE_DEREF = op_STORE_FAST


def _chain_end(ins: list, target: int, depth: int) -> int:
    """Where the ``POP_TOP`` chain from ``target`` ends after ``depth`` pops."""
    j = target
    for _ in range(depth):
        if j >= len(ins) or ins[j].opname != "POP_TOP":
            raise NoMatch("fail jump with the wrong pops")
        j += 1
    return j


@dataclass
class _Case:
    pattern: ast.pattern
    guard: ast.expr | None
    body_start: int
    body_end: int  # where its fail chain starts (the next case's code), or -1: unknown
    next_case: int | None  # where the next case (or what follows the match) starts
    moved: set[int] | None = None  # a body placed after the code that follows the match


class MatchOps:
    """Mixed into the decompiler: entry points at ``COPY 1`` and the ``MATCH_*`` opcodes."""

    def COPY(self, ins, blk: Block):
        if ins.arg == 1 and not blk.sandbox and blk.stack and isinstance(blk.stack[-1], ast.expr):
            found = self._match_statement(ins.index, blk)
            if found is not None:
                return found
        return super().COPY(ins, blk)

    def MATCH_SEQUENCE(self, ins, blk: Block):
        if not blk.sandbox and blk.stack:
            found = self._match_statement(ins.index, blk, copied=False)
            if found is not None:
                return found
        raise Unsupported(f"{ins.raw_opname} outside a recognised match statement")

    MATCH_MAPPING = MATCH_SEQUENCE

    def MATCH_CLASS(self, ins, blk: Block):
        if not blk.sandbox and len(blk.stack) >= 3:
            found = self._match_statement(ins.index, blk, copied=False, loaded=2)
            if found is not None:
                return found
        raise Unsupported("MATCH_CLASS outside a recognised match statement")

    # ------------------------------------------------------------ the statement
    def _match_statement(
        self, start: int, blk: Block, copied: bool | None = None, loaded: int = 0
    ) -> int | None:
        """``match`` whose first case starts at ``start`` (its ``COPY 1`` when ``copied``);
        None when the code there is no match statement."""
        depth = len(blk.stack) - 1 - loaded
        subject = blk.stack[depth]
        if not isinstance(subject, ast.expr) or any(e is subject for e in blk.stack[:depth]):
            return None  # a copy of a value still in use is no subject (it would be read twice)
        outer = blk.stack[:depth]
        preloaded = [_Value(e) if isinstance(e, ast.expr) else e for e in blk.stack[depth + 1 :]]
        try:
            cases, end = self._cases(start, blk, outer, subject, copied, preloaded)
        except (NoMatch, SandboxAbort):
            return None
        del blk.stack[depth:]
        match_cases = []
        for case in cases:
            stop = case.body_end if case.body_end >= 0 else end
            body = self.run(case.body_start, stop, outer, blk)
            if case.moved is not None:
                self.skip.update(case.moved)  # decompiled here, not again after the match
            match_cases.append(ast.match_case(case.pattern, case.guard, body.out or [ast.Pass()]))
        blk.emit(ast.Match(subject, match_cases))
        return end

    def _cases(self, start, blk, outer, subject, copied, preloaded) -> tuple[list[_Case], int]:
        cases: list[_Case] = []
        pos = start
        while True:
            first = not cases
            case = None
            if copied is not False and self.ins[pos].opname == "COPY" and self.ins[pos].arg == 1:
                try:
                    case = self._case(pos, blk, outer, subject, copied=True)
                except (NoMatch, SandboxAbort):
                    case = None
            if case is not None:
                cases.append(case)
                pos = case.next_case
                copied = None
                continue
            # the last case that is not ``case _``: its pattern consumes the subject
            case = self._case(
                pos,
                blk,
                outer,
                subject,
                copied=False,
                preloaded=preloaded if first else [],
                entry=first,
            )
            cases.append(case)
            break
        ends = self._body_ends(cases, blk)
        last = cases[-1]
        follow = last.next_case
        if follow is None:  # an irrefutable last case: its body runs to the match's end
            follow = max(ends) if ends else blk.stop
            last.body_end = follow
            return cases, follow
        end = max(ends) if ends else follow
        if end > follow:  # a trailing ``case _``: the code between the fail label and the end
            cases.append(_Case(ast.MatchAs(None, None), None, follow, end, None))
            return cases, end
        return cases, follow

    def _body_ends(self, cases: list[_Case], blk: Block) -> list[int]:
        """Where the bodies jump when they finish: the end of the match statement."""
        ends = []
        for case in cases:
            last = case.body_end - 1
            while last > case.body_start and self.ins[last].opname in self.bc.table.ignored:
                last -= 1
            jump = self.ins[last] if case.body_end > case.body_start else None
            if (
                jump is not None
                and jump.opname == "JUMP"
                and jump.target > last
                and self._loop_jump(jump.target, blk) is None
            ):
                ends.append(jump.target)
        return ends

    def _case(
        self, pos, blk, outer, subject, copied: bool, preloaded=(), entry: bool = False
    ) -> _Case:
        root = Subject()
        start = pos + 1 if copied else pos
        run = _PatternRun(self, start, [root, *preloaded], blk.stop)
        after = run.run()
        fails = list(run.fails)
        guard, guard_fail = None, None
        if copied:
            nxt = self._skip_ignored(after)
            if self.ins[nxt].opname != "POP_TOP":
                guard, guard_fail, nxt = self._guard(nxt, blk, [*outer, subject])
                if self.ins[nxt].opname != "POP_TOP":
                    raise NoMatch("no pop of the subject after the pattern")
            body_start = nxt + 1
        else:
            body_start = after
            if fails:  # a test right after the pattern that fails like the pattern: a guard
                try:
                    guard, guard_fail, body_start = self._guard(after, blk, outer)
                except NoMatch:
                    guard = None
                labels = {_chain_end(self.ins, f.target, f.depth) for f in fails}
                if guard is not None and {guard_fail} != labels:
                    guard, body_start = None, after
            elif self._skip_ignored(after) < len(self.ins):
                try:
                    guard, guard_fail, body_start = self._guard(after, blk, outer)
                except NoMatch:
                    guard = None
                    body_start = after
        if guard_fail is not None:
            fails.append(Fail(guard_fail, 0))
        if not fails:
            # only the last case can be irrefutable; as the first one it is an assignment
            if copied or entry:
                raise NoMatch("a case that cannot fail")
            pattern = root.pattern()
            for store in run.stores:
                self._declare(store)
            return _Case(pattern, guard, body_start, -1, None)
        labels = {_chain_end(self.ins, f.target, f.depth) for f in fails}
        if len(labels) != 1:
            raise NoMatch("fail jumps that do not meet")
        (next_case,) = labels
        chain_start = min(f.target for f in fails)
        pattern = root.pattern()
        if chain_start < body_start:
            # 3.12+ may place the last case's body after the code that follows the match
            if copied or run.body_limit is not None:
                raise NoMatch("fail chain inside the pattern")
            body_end, past = self._tail_end(body_start, next_case, blk)
            for store in run.stores:
                self._declare(store)
            moved = {i for i in run.visited | set(range(after, past)) if i >= next_case}
            return _Case(pattern, guard, body_start, body_end, next_case, moved)
        for store in run.stores:
            self._declare(store)
        if run.body_limit is not None:
            chain_start = min(chain_start, run.body_limit)
        return _Case(pattern, guard, body_start, chain_start, next_case)

    def _tail_end(self, start: int, follow: int, blk: Block) -> tuple[int, int]:
        """(end of the body, end of its instructions) for a body moved past the match: it
        ends in a return/raise or a jump back to what follows the match, and no jump in it
        leaves it for anywhere else."""
        for k in range(start, blk.stop):
            ins = self.ins[k]
            if ins.opname == "JUMP" and ins.target == follow:
                end, past = k, k + 1
            elif ins.opname in ("RETURN_VALUE", "RAISE_VARARGS", "RERAISE"):
                end = past = k + 1
            else:
                continue
            inside = self.ins[start:end]
            if all(
                i.target is None or start <= i.target < past or i.target == follow for i in inside
            ):
                return end, past
        raise NoMatch("a moved case body without an end")

    def _skip_ignored(self, i: int) -> int:
        while i < len(self.ins) and self.ins[i].opname in self.bc.table.ignored:
            i += 1
        return i

    def _guard(self, pos: int, blk: Block, stack: list) -> tuple[ast.expr, int, int]:
        """``case ... if test``: the test's conditional jumps all fail to one label."""
        trial = Block(stack=list(stack), stop=blk.stop, loops=blk.loops, reach=blk.reach)
        nodes = self._chain_nodes(pos, trial)
        if not nodes:
            raise NoMatch("no guard")
        test, _k, false, fall = self._choose_chain(nodes)
        if false <= pos or fall <= pos:
            raise NoMatch("guard layout")
        return test, false, fall

    def _or_pattern(self, at: int, slot: Subject, parent: _PatternRun) -> int | None:
        """``p1 | p2 | ...`` on ``slot``: each alternative copies it, matches, and goes on with
        its captures (3.11: a jump to the common end; 3.12+: each its own copy of what follows);
        the last one's failure pops ``slot`` and fails the parent."""
        alternatives: list[tuple[Subject, list, list]] = []
        ends: list[tuple[int, int | None]] = []  # (where it goes on, where that copy stops)
        pos = at
        try:
            while self.ins[pos].opname == "COPY" and self.ins[pos].arg == 1:
                alt = Subject()
                run = _PatternRun(self, pos + 1, [alt], parent.stop, alternative=True)
                stop = run.run()
                if not run.fails:
                    return None
                nexts = {_chain_end(self.ins, f.target, f.depth) for f in run.fails}
                if len(nexts) != 1:
                    return None
                if run.end_jump is not None:
                    ends.append((self.ins[run.end_jump].target, None))
                else:
                    ends.append((stop, min(f.target for f in run.fails)))
                alternatives.append((alt, run.stack, run.stores))
                (pos,) = nexts
            if len(alternatives) < 2 or self.ins[pos].opname != "POP_TOP":
                return None
            after = self.ins[pos + 1]
            outer_fail = after.target if after.opname == "JUMP" else pos + 1
            if outer_fail <= pos:
                return None
        except (NoMatch, IndexError):
            return None
        if len({e for e, limit in ends if limit is None}) > 1:
            return None  # 3.11: the alternatives jump to one end
        if any(limit is not None for _, limit in ends):
            tails = {tuple(i.signature() for i in self.ins[start:limit]) for start, limit in ends}
            if None in {limit for _, limit in ends} or len(tails) != 1:
                return None  # the copies of what follows must be the same code
            limit = ends[0][1]
            parent.body_limit = (
                limit if parent.body_limit is None else min(parent.body_limit, limit)
            )
        end = ends[0][0]
        captures = [stack for _, stack, _ in alternatives]
        if len({len(c) for c in captures}) != 1:
            return None
        for j, first in enumerate(captures[0]):
            first.links = [c[j] for c in captures[1:]]
        slot.kind = "or"
        slot.alternatives = [alt for alt, _, _ in alternatives]
        parent.fails.append(Fail(outer_fail, len(parent.stack) - 1))
        parent.refutable = True
        parent.stack.extend(captures[0])
        return end
