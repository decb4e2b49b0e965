"""itertools modelled on trackers: each call consumes its (finite) inputs at trace time.

The result is an IteratorVariable over the items the real function would produce, built
from the inputs' trackers (never copied values), so tensors and objects flow through.
count/repeat/cycle without a bound are lazy (`InfiniteIteratorVariable`): they feed
zip/islice/for loops, and cannot cross a graph break (the break is refused).
"""

from __future__ import annotations

import itertools
import operator

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import IteratorVariable, TupleVariable
from .lazy_iterators import lazy_chain, lazy_cycle, lazy_islice, pulls_lazily
from .sym_node import SymNodeVariable


class InfiniteIteratorVariable(IteratorVariable):
    """count(), repeat(x), cycle(it): items made on demand by `produce(index)`."""

    pulls_lazily = True

    def __init__(self, produce, rebuild):
        super().__init__([])
        self.produce = produce
        self.rebuild = rebuild  # (callable, args) that recreates the iterator at its position

    def next(self, tx) -> VariableTracker | None:
        self.items.append(self.produce(self.index))
        self.index += 1
        return self.items[-1]

    def take(self, tx, n: int) -> list[VariableTracker]:
        return [self.next(tx) for _ in range(n)]

    def unpack(self, tx):
        raise Unsupported("consuming an infinite iterator (count/repeat/cycle) whole")

    def reconstruct_remaining(self, cg) -> None:
        raise Unsupported("an infinite iterator live across a graph break")

    def reconstruct(self, cg) -> None:
        raise Unsupported("an infinite iterator escaping the frame")


def _effectful(vt: VariableTracker) -> bool:
    """An input whose items are made by running code (a generator, a user iterator)."""
    return pulls_lazily(vt) and not isinstance(vt, InfiniteIteratorVariable)


def _not_ahead(fn):
    """A model that takes its inputs' items at the call where CPython's iterator takes them
    as it is consumed: refused over an input whose items run code (they would run early)."""

    def handler(tx, *args, **kwargs):
        if any(_effectful(a) for a in [*args, *kwargs.values()]):
            raise Unsupported("an itertools iterator over a generator (modelled ahead of use)")
        return fn(tx, *args, **kwargs)

    return handler


def take(tx, it: VariableTracker, n: int | None) -> list[VariableTracker]:
    """The next `n` items of `it` (all of them when n is None)."""
    if isinstance(it, InfiniteIteratorVariable):
        if n is None:
            raise Unsupported("consuming an infinite iterator whole")
        return it.take(tx, n)
    if isinstance(it, IteratorVariable) and n is not None:
        out = []
        while len(out) < n and (item := it.next(tx)) is not None:
            out.append(item)
        return out
    items = it.unpack(tx)
    return items if n is None else items[:n]


def zip_items(tx, iterables: list[VariableTracker]) -> list[list[VariableTracker]]:
    """The items of each iterable, as many as zip() would take (infinite ones too)."""
    finite = [it for it in iterables if not isinstance(it, InfiniteIteratorVariable)]
    if not finite:
        raise Unsupported("zip of infinite iterators only")
    lists = {id(it): take(tx, it, None) for it in finite}
    n = min(len(v) for v in lists.values())
    return [lists[id(it)] if id(it) in lists else take(tx, it, n) for it in iterables]


def _const(vt: VariableTracker, what: str):
    if isinstance(vt, SymNodeVariable) and vt.python_type() is int:
        return vt.as_python_constant()  # specialised: the ShapeEnv guards its value
    if not vt.is_python_constant():
        raise Unsupported(f"{what} is not a constant")
    return vt.as_python_constant()


def _iterator(items) -> IteratorVariable:
    return IteratorVariable(list(items))


def _by_index(pool: list, index_tuples) -> IteratorVariable:
    return _iterator(TupleVariable([pool[i] for i in group]) for group in index_tuples)


def _chain(tx, *iterables):
    if any(_effectful(it) for it in iterables):
        return lazy_chain(tx, list(iterables))
    return _iterator(item for it in iterables for item in take(tx, it, None))


def _chain_from_iterable(tx, iterable):
    return _chain(tx, *take(tx, iterable, None))


def _product(tx, *iterables, repeat=None):
    pools = [take(tx, it, None) for it in iterables] * (
        _const(repeat, "product repeat") if repeat is not None else 1
    )
    groups = itertools.product(*[range(len(p)) for p in pools])
    return _iterator(TupleVariable([pools[k][i] for k, i in enumerate(g)]) for g in groups)


def _combinatoric(fn):
    def handler(tx, iterable, r=None):
        pool = take(tx, iterable, None)
        args = () if r is None else (_const(r, f"{fn.__name__} r"),)
        if fn is not itertools.permutations and not args:
            return None
        return _by_index(pool, fn(range(len(pool)), *args))

    return handler


def _zip_longest(tx, *iterables, fillvalue=None):
    lists = [take(tx, it, None) for it in iterables]
    fill = fillvalue if fillvalue is not None else ConstantVariable(None)
    n = max((len(x) for x in lists), default=0)
    return _iterator(TupleVariable([x[i] if i < len(x) else fill for x in lists]) for i in range(n))


def _islice(tx, iterable, *args):
    bounds = [_const(a, "islice bound") for a in args]
    window = slice(*bounds)
    stop = window.stop
    if _effectful(iterable):
        return lazy_islice(tx, iterable, window.start or 0, stop, window.step or 1)
    if isinstance(iterable, InfiniteIteratorVariable):
        if stop is None:
            raise Unsupported("islice of an infinite iterator without a stop")
        items = take(tx, iterable, stop)
    else:
        items = take(tx, iterable, stop)
    return _iterator(items[slice(window.start, None, window.step)])


def _accumulate(tx, iterable, func=None, *, initial=None):
    from .builtins import binary_op

    items = take(tx, iterable, None)
    out = [] if initial is None or _is_none(initial) else [initial]
    for item in items:
        if not out:
            out.append(item)
        elif func is None or _is_none(func):
            out.append(binary_op(tx, operator.add, out[-1], item))
        else:
            out.append(func.call_function(tx, [out[-1], item], {}))
    return _iterator(out)


def _is_none(vt) -> bool:
    return vt.is_python_constant() and vt.as_python_constant() is None


def _count(tx, start=None, step=None):
    from .builtins import binary_op

    first = ConstantVariable(_const(start, "count() start") if start is not None else 0)
    by = ConstantVariable(_const(step, "count() step") if step is not None else 1)

    def produce(i):
        return binary_op(
            tx, operator.add, first, binary_op(tx, operator.mul, by, ConstantVariable(i))
        )

    return InfiniteIteratorVariable(produce, itertools.count)


def _repeat(tx, obj, times=None):
    if times is not None:
        return _iterator([obj] * _const(times, "repeat times"))
    return InfiniteIteratorVariable(lambda i: obj, itertools.repeat)


def _cycle(tx, iterable):
    if pulls_lazily(iterable):
        return lazy_cycle(tx, iterable)
    pool = take(tx, iterable, None)
    if not pool:
        return _iterator([])
    return InfiniteIteratorVariable(lambda i: pool[i % len(pool)], itertools.cycle)


def _starmap(tx, fn, iterable):
    return _iterator(fn.call_function(tx, args.unpack(tx), {}) for args in take(tx, iterable, None))


def _pairwise(tx, iterable):
    items = take(tx, iterable, None)
    return _iterator(TupleVariable([a, b]) for a, b in itertools.pairwise(items))


def _while(keep_taking: bool):
    def handler(tx, predicate, iterable):
        items = take(tx, iterable, None)
        for i, item in enumerate(items):
            if not predicate.call_function(tx, [item], {}).truth(tx):
                return _iterator(items[:i] if keep_taking else items[i:])
        return _iterator(items if keep_taking else [])

    return handler


def _compress(tx, data, selectors):
    items, keep = zip_items(tx, [data, selectors])
    return _iterator(d for d, s in zip(items, keep, strict=True) if s.truth(tx))


def _filterfalse(tx, predicate, iterable):
    items = take(tx, iterable, None)
    if _is_none(predicate):
        return _iterator(i for i in items if not i.truth(tx))
    return _iterator(i for i in items if not predicate.call_function(tx, [i], {}).truth(tx))


def _groupby(tx, iterable, key=None):
    items = take(tx, iterable, None)
    groups: list[tuple[VariableTracker, list]] = []
    for item in items:
        k = item if key is None or _is_none(key) else key.call_function(tx, [item], {})
        kc = _const(k, "groupby key")
        if groups and groups[-1][0].as_python_constant() == kc:
            groups[-1][1].append(item)
        else:
            groups.append((k, [item]))
    return _iterator(TupleVariable([k, IteratorVariable(g)]) for k, g in groups)


def _tee(tx, iterable, n=None):
    items = take(tx, iterable, None)
    count = _const(n, "tee n") if n is not None else 2
    return TupleVariable([IteratorVariable(items) for _ in range(count)])


ITERTOOLS_MODELS = {
    itertools.chain: _chain,
    itertools.chain.from_iterable: _not_ahead(_chain_from_iterable),
    itertools.product: _product,
    itertools.permutations: _combinatoric(itertools.permutations),
    itertools.combinations: _combinatoric(itertools.combinations),
    itertools.combinations_with_replacement: _combinatoric(itertools.combinations_with_replacement),
    itertools.zip_longest: _not_ahead(_zip_longest),
    itertools.islice: _islice,
    itertools.accumulate: _not_ahead(_accumulate),
    itertools.count: _count,
    itertools.repeat: _repeat,
    itertools.cycle: _cycle,
    itertools.starmap: _not_ahead(_starmap),
    itertools.pairwise: _not_ahead(_pairwise),
    itertools.takewhile: _not_ahead(_while(True)),
    itertools.dropwhile: _not_ahead(_while(False)),
    itertools.compress: _not_ahead(_compress),
    itertools.filterfalse: _not_ahead(_filterfalse),
    itertools.groupby: _not_ahead(_groupby),
    itertools.tee: _not_ahead(_tee),
}
