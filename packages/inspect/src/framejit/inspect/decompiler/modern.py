"""Handlers for the instructions CPython 3.12 and 3.13 added to the canonical set.

Written once over frameeval's canonical instructions (no version test here): inlined
comprehensions (PEP 709: ``LOAD_FAST_AND_CLEAR`` ... ``FOR_ITER`` ... restore), the
zero-argument ``super()`` attribute load, 3.13's ``CALL_KW``, ``SET_FUNCTION_ATTRIBUTE``
and f-string pieces (``CONVERT_VALUE``, ``FORMAT_SIMPLE``, ``FORMAT_WITH_SPEC``), and the
end of an ``await``/``yield from`` loop (``END_SEND``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .engine import Block, Unsupported
from .values import Iterator, Marker

BUILDS = {"BUILD_LIST": "list", "BUILD_SET": "set", "BUILD_MAP": "dict"}
CONVERSION_CALLS = {1: "str", 2: "repr", 3: "ascii"}
CONVERSION_CODES = {1: ord("s"), 2: ord("r"), 3: ord("a")}


@dataclass
class Converted(Marker):
    """A value CONVERT_VALUE turned with ``!s``/``!r``/``!a``, waiting for its FORMAT_*."""

    value: ast.expr
    conversion: int

    def as_expr(self) -> ast.expr:
        return ast.Call(ast.Name(CONVERSION_CALLS[self.conversion]), [self.value], [])


@dataclass
class InlineComprehension(Marker):
    """The list/set/dict an inlined comprehension builds (under its iterator)."""

    kind: str


class ModernOps:
    """Mixed into the decompiler."""

    # ------------------------------------------------------------ comprehensions (PEP 709)
    def LOAD_FAST_AND_CLEAR(self, ins, blk: Block):
        """``[x for x in it]`` inlined: save the names, build, loop, restore the names."""
        i = ins.index
        saved = []
        while self.ins[i].opname == "LOAD_FAST_AND_CLEAR":
            saved.append(self.ins[i].argval)
            i += 1
        shape = [self.ins[j].opname for j in range(i, i + 3)]
        if shape[0] != "SWAP" or shape[1] not in BUILDS or shape[2] != "SWAP":
            raise Unsupported("inlined comprehension layout")
        loop = i + 3
        if self.ins[loop].opname != "FOR_ITER":
            raise Unsupported("inlined comprehension without a loop")
        source = self.pop_raw(blk)
        if not isinstance(source, Iterator):
            raise Unsupported("inlined comprehension over a non-iterator")
        kind = BUILDS[shape[1]]
        exit_ = self.ins[loop].target
        inner = self.run(loop, exit_, [InlineComprehension(kind), source], blk)
        fors = [s for s in inner.out if isinstance(s, ast.For)]
        if len(fors) != 1:
            raise Unsupported("inlined comprehension with an unusual shape")
        from .functions import _fold_comprehension

        loop_stmt = fors[0]
        while loop_stmt.body and isinstance(loop_stmt.body[-1], ast.Continue):
            loop_stmt.body.pop()  # the jump back to FOR_ITER
        built = _fold_comprehension(loop_stmt, kind)
        if built is None:
            raise Unsupported("inlined comprehension with an unusual shape")
        generators, element = built
        node = {
            "list": lambda: ast.ListComp(element[0], generators),
            "set": lambda: ast.SetComp(element[0], generators),
            "dict": lambda: ast.DictComp(element[0], element[-1], generators),
        }[kind]()
        blk.stack.append(node)
        return self._restore_saved(exit_, saved, blk)

    def _restore_saved(self, end: int, saved: list[str], blk: Block) -> int:
        """Past the restore of the saved names: ``(SWAP 2; STORE_FAST name)+``, ``SWAP n+1;
        STORE_FAST name...``, or, when the result is stored at once, ``STORE_X result;
        STORE_FAST name...`` (the SWAPs folded)."""
        ins = self.ins[end : end + 2 * len(saved) + 1]
        n = len(saved)
        pairs = ins[: 2 * n]
        if [i.opname for i in pairs] == ["SWAP", "STORE_FAST"] * n and sorted(
            i.argval for i in pairs[1::2]
        ) == sorted(saved):
            return end + 2 * n
        stores = ins[1 : 1 + n]
        if (  # the swaps folded into one: ``SWAP n+1; STORE_FAST name...`` (result stays on top)
            ins
            and ins[0].opname == "SWAP"
            and ins[0].arg == n + 1
            and all(i.opname == "STORE_FAST" for i in stores)
            and sorted(i.argval for i in stores) == sorted(saved)
        ):
            return end + 1 + n
        if (
            ins
            and ins[0].opname.startswith("STORE_")
            and all(i.opname == "STORE_FAST" for i in stores)
            and sorted(i.argval for i in stores) == sorted(saved)
        ):
            self.dispatch(ins[0], blk)
            return end + 1 + n
        raise Unsupported("inlined comprehension restore")

    # ------------------------------------------------------------ super()
    def LOAD_SUPER_ATTR(self, ins, blk: Block):
        self_ = self.pop(blk)
        cls = self.pop(blk)
        super_fn = self.pop(blk)
        first = self.code.co_varnames[0] if self.code.co_argcount else None
        zero_arg = (
            isinstance(cls, ast.Name)
            and cls.id == "__class__"
            and isinstance(self_, ast.Name)
            and self_.id == first
        )
        call = ast.Call(super_fn, [] if zero_arg else [cls, self_], [])
        self.push_callable(ast.Attribute(call, ins.argval), bool(ins.arg & 1), blk)

    # ------------------------------------------------------------ calls and functions (3.13)
    def CALL_KW(self, ins, blk: Block):
        names = self.pop(blk)
        if isinstance(names, ast.Tuple) and all(isinstance(e, ast.Constant) for e in names.elts):
            names = ast.Constant(tuple(e.value for e in names.elts))
        if not (isinstance(names, ast.Constant) and isinstance(names.value, tuple)):
            raise Unsupported("CALL_KW without constant keyword names")
        self.kw_names = names.value
        return self.CALL(ins, blk)

    def SET_FUNCTION_ATTRIBUTE(self, ins, blk: Block):
        fn = self.pop_raw(blk)
        value = self.pop_raw(blk)
        self.function_attribute(fn, ins.arg, value, blk)
        blk.stack.append(fn)

    # ------------------------------------------------------------ f-strings (3.13)
    def CONVERT_VALUE(self, ins, blk: Block):
        blk.stack.append(Converted(self.pop(blk), ins.arg))

    def FORMAT_SIMPLE(self, ins, blk: Block):
        self._formatted(self.pop_raw(blk), None, blk)

    def FORMAT_WITH_SPEC(self, ins, blk: Block):
        spec = self.pop(blk)
        if not isinstance(spec, ast.JoinedStr):
            spec = ast.JoinedStr([spec])
        self._formatted(self.pop_raw(blk), spec, blk)

    def _formatted(self, value, spec, blk: Block) -> None:
        if isinstance(value, Converted):
            node = ast.FormattedValue(value.value, CONVERSION_CODES[value.conversion], spec)
        else:
            node = ast.FormattedValue(self.expr(value, blk), -1, spec)
        blk.stack.append(ast.JoinedStr([node]))

    # ------------------------------------------------------------ async for
    def GET_AITER(self, ins, blk: Block):
        blk.stack.append(Iterator(self.pop(blk)))

    def GET_ANEXT(self, ins, blk: Block):
        """``async for``: GET_ANEXT; await; store the target; body; jump back; END_ASYNC_FOR."""
        from .engine import Loop, SandboxAbort
        from .ops import Slot

        if blk.sandbox:
            raise SandboxAbort("loop in a trial run")
        if ins.target is None:
            raise Unsupported("async for without its END_ASYNC_FOR")
        source = self.pop_raw(blk)
        iterable = source.expr if isinstance(source, Iterator) else self.expr(source, blk)
        exit_ = ins.target
        end_for = exit_ - 1
        send = next((i for i in self.ins[ins.index : end_for] if i.opname == "SEND"), None)
        if send is None or send.target is None:
            raise Unsupported("async for layout")
        value_at = send.target + (self.ins[send.target].opname == "END_SEND")
        closers = [s for s in self.bc.backward_sources.get(ins.index, []) if s < end_for]
        body_end = max(closers) if closers else end_for
        if body_end < end_for - 1 or (closers and self.ins[body_end].opname != "JUMP"):
            body_end = end_for
        slot = Slot()
        trial = self.run_until_complete(value_at, blk, slot, [*blk.stack, Iterator(iterable), slot])
        if trial is None:
            raise Unsupported("async for target")
        body_start, body_stack = trial
        break_target = self._break_target(value_at, body_end, exit_, blk.stop)
        loop = Loop(
            frozenset({ins.index}), break_target, body_end, self._aliases(exit_, break_target)
        )
        body = self.run(body_start, body_end, body_stack, blk, loops=(*blk.loops, loop))
        orelse = self.run(exit_, break_target, blk.stack, blk).out if break_target > exit_ else []
        blk.emit(ast.AsyncFor(slot.build(), iterable, body.out or [ast.Pass()], orelse))
        return max(break_target, exit_)

    # ------------------------------------------------------------ await / yield from (3.12+)
    def END_SEND(self, ins, blk: Block):
        return None  # SEND already left the result where END_SEND would
