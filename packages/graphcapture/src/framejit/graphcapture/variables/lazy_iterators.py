"""map, filter, zip, enumerate, islice, chain and cycle over inputs that make items on
request (generators, user iterators, infinite ones, these themselves): lazy, as eager's.

Over such an input an iterator built ahead of its consumer would run the input's body
at the wrong time (before the consumer's statements in between) and too far (past where
a `break`, a shorter zip input or a short-circuit stops).  `LazyIteratorVariable` pulls
from its inputs only when asked for an item, in CPython's order: zip asks each input in
turn and stops at the first exhausted one; islice skips and stops as islice_next does.
Across a graph break or out of the frame it is the real builtin again over its inputs
rebuilt (a generator among them is rebuilt only where that is exact: generators.py).

Consumers that stop early ask item by item (`pull_items`): any/all, `in`, set.isdisjoint
and issuperset, unpacking (n items and one more, as unpack_iterable takes).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import IteratorVariable, TupleVariable


def pulls_lazily(vt: VariableTracker) -> bool:
    """Does asking `vt` for an item run code (or never end)?"""
    return isinstance(vt, IteratorVariable) and vt.pulls_lazily


class LazyIteratorVariable(IteratorVariable):
    """`kind(*inputs)` whose next item is `pull(tx)` (None: exhausted, for good)."""

    pulls_lazily = True

    def __init__(self, kind, pull: Callable, inputs: list, rebuild: Callable):
        super().__init__([], kind)
        self.pull = pull
        self.inputs = inputs  # (reached by generators.earliest_suspended through vars())
        self.rebuild = rebuild  # rebuild(cg): the real iterator over the rebuilt inputs
        self.exhausted = False

    def next(self, tx) -> VariableTracker | None:
        if self.exhausted:
            return None
        item = self.pull(tx)
        self.exhausted = item is None
        return item

    unpack = IteratorVariable.drain

    def reconstruct(self, cg) -> None:
        if self.exhausted:
            cg.add_push_null(lambda: cg.load_const(iter))
            cg.build_tuple(0)
            cg.call(1)
            return
        cg.reconstruct_once(self, self.rebuild)

    def reconstruct_remaining(self, cg) -> None:
        self.reconstruct(cg)


def _rebuild_call(fn, args: list, extra: list = ()):
    """rebuild(cg) for `fn(*args, *extra constants)`."""

    def rebuild(cg) -> None:
        cg.add_push_null(lambda: cg.load_const(fn))
        for a in args:
            a.reconstruct(cg)
        for value in extra:
            cg.load_const(value)
        cg.call(len(args) + len(extra))

    return rebuild


def lazy_zip(tx, iterables: list) -> LazyIteratorVariable:
    its = [iterator_of(tx, it) for it in iterables]

    def pull(tx):
        items = []
        for it in its:  # zip_next: each in turn, stopping at the first exhausted one
            item = it.next(tx)
            if item is None:
                return None
            items.append(item)
        return TupleVariable(items)

    return LazyIteratorVariable(zip, pull, its, _rebuild_call(zip, its))


def lazy_map(tx, fn: VariableTracker, iterables: list) -> LazyIteratorVariable:
    its = [iterator_of(tx, it) for it in iterables]

    def pull(tx):
        items = []
        for it in its:
            item = it.next(tx)
            if item is None:
                return None
            items.append(item)
        return fn.call_function(tx, items, {})

    return LazyIteratorVariable(map, pull, [fn, *its], _rebuild_call(map, [fn, *its]))


def lazy_filter(tx, fn: VariableTracker, iterable) -> LazyIteratorVariable:
    it = iterator_of(tx, iterable)
    identity = fn.is_python_constant() and fn.as_python_constant() is None

    def pull(tx):
        while (item := it.next(tx)) is not None:
            keep = item if identity else fn.call_function(tx, [item], {})
            if keep.truth(tx):
                return item
        return None

    return LazyIteratorVariable(filter, pull, [fn, it], _rebuild_call(filter, [fn, it]))


def lazy_enumerate(tx, iterable, start: int) -> LazyIteratorVariable:
    it = iterator_of(tx, iterable)
    state = {"n": start}

    def pull(tx):
        item = it.next(tx)
        if item is None:
            return None
        state["n"] += 1
        return TupleVariable([ConstantVariable(state["n"] - 1), item])

    def rebuild(cg) -> None:
        _rebuild_call(enumerate, [it], [state["n"]])(cg)

    return LazyIteratorVariable(enumerate, pull, [it], rebuild)


def lazy_islice(tx, iterable, start: int, stop: int | None, step: int) -> LazyIteratorVariable:
    """islice_next of CPython: skip to the next index, stop at `stop` without pulling."""
    it = iterator_of(tx, iterable)
    state = {"cnt": 0, "next": start}

    def pull(tx):
        if stop is not None and state["cnt"] >= stop:
            return None
        while state["cnt"] < state["next"]:
            if it.next(tx) is None:
                return None
            state["cnt"] += 1
        if stop is not None and state["cnt"] >= stop:
            return None
        item = it.next(tx)
        if item is None:
            return None
        state["cnt"] += 1
        state["next"] += step
        if stop is not None and state["next"] > stop:
            state["next"] = stop
        return item

    def rebuild(cg) -> None:
        if state["cnt"]:
            raise Unsupported("an islice part-consumed live across a graph break")
        _rebuild_call(itertools.islice, [it], [start, stop, step])(cg)

    return LazyIteratorVariable(itertools.islice, pull, [it], rebuild)


def lazy_chain(tx, iterables: list) -> LazyIteratorVariable:
    pending = list(iterables)
    state: dict = {"it": None}

    def pull(tx):
        while True:
            if state["it"] is None:
                if not pending:
                    return None
                state["it"] = iterator_of(tx, pending.pop(0))
            item = state["it"].next(tx)
            if item is not None:
                return item
            state["it"] = None

    def rebuild(cg) -> None:
        rest = ([state["it"]] if state["it"] is not None else []) + pending
        _rebuild_call(itertools.chain, rest)(cg)

    return LazyIteratorVariable(itertools.chain, pull, [state, pending], rebuild)


def lazy_cycle(tx, iterable) -> LazyIteratorVariable:
    """cycle: the input's items as it makes them, saved; once it is exhausted, the saved
    ones over and over (an infinite input is never exhausted)."""
    it = iterator_of(tx, iterable)
    saved: list = []
    state = {"i": 0, "source_done": False}

    def pull(tx):
        if not state["source_done"]:
            item = it.next(tx)
            if item is not None:
                saved.append(item)
                return item
            state["source_done"] = True
        if not saved:
            return None
        item = saved[state["i"] % len(saved)]
        state["i"] += 1
        return item

    def rebuild(cg) -> None:
        raise Unsupported("itertools.cycle over a generator live across a graph break")

    return LazyIteratorVariable(itertools.cycle, pull, [it, saved], rebuild)


def iterator_of(tx, vt: VariableTracker) -> IteratorVariable:
    """iter(vt) as the trace knows it."""
    if isinstance(vt, IteratorVariable):
        return vt
    from .user_classes import user_iterator_of

    lazy = user_iterator_of(tx, vt)
    if lazy is not None:
        return lazy
    return IteratorVariable(vt.unpack(tx))


def pull_items(tx, vt: VariableTracker):
    """The items of `vt` one at a time, for a consumer that may stop early."""
    it = iterator_of(tx, vt)
    while (item := it.next(tx)) is not None:
        yield item


def unpack_exactly(tx, vt: VariableTracker, n: int) -> list[VariableTracker] | None:
    """`a, b = it` over an iterator that makes items on request: n items and one more to
    see that it ends (unpack_iterable); None: `vt` is not such an iterator."""
    if not pulls_lazily(vt):
        return None
    items = []
    for _ in range(n + 1):
        item = vt.next(tx)
        if item is None:
            break
        items.append(item)
    return items
