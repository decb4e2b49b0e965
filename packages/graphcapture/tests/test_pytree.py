"""torch.utils._pytree traced inline: flatten, unflatten, map, leaves and TreeSpecs over the
containers model code passes (lists, tuples, dicts, OrderedDict, defaultdict, deque,
namedtuples, structseqs, ModelOutput-like dict subclasses, None), with nested functions
(lambdas, closures) as the mapped function.  One graph where torch.compile takes one, eager's
values, and a registry change after compiling is seen (the registry is guarded)."""

from __future__ import annotations

import collections
import functools
import typing

import pytest
import torch
import torch.utils._pytree as pytree
from torch._dynamo.testing import CompileCounter

from framejit import graphcapture as fj
from framejit.graphcapture import events

NT = collections.namedtuple("NT", "a b")


class Output(collections.OrderedDict):
    """A dict subclass holding outputs by name, registered as transformers registers its
    ModelOutput classes (the unflatten function a functools.partial)."""


def _output_flatten(output):
    return list(output.values()), list(output.keys())


def _output_unflatten(values, context, output_type=None):
    return output_type(**dict(zip(context, values, strict=False)))


pytree.register_pytree_node(
    Output, _output_flatten, functools.partial(_output_unflatten, output_type=Output)
)


class Unregistered(collections.OrderedDict):
    """A dict subclass nobody registered: a leaf."""


def _trees(x):
    return {
        "list": [x, x + 1],
        "nested_tuple": (x, (x, x)),
        "dict": {"b": x, "a": [x, {"c": x}]},
        "ordered_dict": collections.OrderedDict(b=x, a=x),
        "defaultdict": collections.defaultdict(list, {"a": x}),
        "deque": collections.deque([x, 2.0, x]),
        "namedtuple": NT(x, [x]),
        "structseq": torch.return_types.qr((x, x * 2)),
        "none_leaf": [None, x],
        "dict_subclass": Output(logits=x, hidden=(x, x)),
        "unregistered_leaf": [Unregistered(a=x), x],
        "mixed": {"a": (x, NT(x, None)), "b": [collections.OrderedDict(c=x)], "d": 3},
    }


def _flatten_unflatten(t):
    leaves, spec = pytree.tree_flatten(t)
    return pytree.tree_unflatten(
        [v * 2 if isinstance(v, torch.Tensor) else v for v in leaves], spec
    )


def _map_closure(t):
    k = 3
    return pytree.tree_map(lambda v: v * k if isinstance(v, torch.Tensor) else v, t)


def _map_only_nested_def(t):
    def sine(v):
        return v.sin()

    return pytree.tree_map_only(torch.Tensor, sine, t)


def _leaves(t):
    return [v + 1 for v in pytree.tree_leaves(t) if isinstance(v, torch.Tensor)]


def _structure(t):
    spec = pytree.tree_structure(t)
    return spec.num_leaves, torch.ones(1) * spec.num_leaves


OPERATIONS = {
    "flatten_unflatten": _flatten_unflatten,
    "map_closure": _map_closure,
    "map_only_nested_def": _map_only_nested_def,
    "leaves": _leaves,
    "structure": _structure,
}


def _graphs(fn, *args) -> tuple[int, object]:
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        out = fj.compile(fn, fullgraph=True)(*args)
    finally:
        unsubscribe()
    return sum(len(r.graphs) for r in seen), out


@pytest.mark.parametrize("tree", list(_trees(torch.ones(1))))
@pytest.mark.parametrize("op", list(OPERATIONS))
def test_pytree_function_over_container(op, tree):
    fj.reset()
    fn = OPERATIONS[op]

    def f(x):
        return fn(_trees(x)[tree])

    x = torch.randn(3)
    count, out = _graphs(f, x)
    expected = f(x)
    assert type(out) is type(expected)
    torch.testing.assert_close(out, expected)
    torch._dynamo.reset()
    counter = CompileCounter()
    torch.compile(f, backend=counter, fullgraph=True)(x)
    assert count == counter.frame_count


@pytest.mark.parametrize("tree", ["list", "dict", "namedtuple", "dict_subclass", "mixed"])
def test_pytree_of_an_argument(tree):
    fj.reset()
    t = _trees(torch.randn(2))[tree]
    count, out = _graphs(_flatten_unflatten, t)
    assert count == 1
    torch.testing.assert_close(out, _flatten_unflatten(t))


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def test_a_node_registered_after_compiling_is_flattened():
    """The registry lookup is guarded: a class registered later is no longer a leaf."""
    fj.reset()

    def f(p):
        return len(pytree.tree_leaves(p))

    compiled = fj.compile(f)
    p = Pair(torch.ones(1), torch.ones(1))
    assert compiled(p) == 1
    pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda xs, _: Pair(*xs))
    try:
        assert compiled(p) == f(p) == 2
    finally:
        pytree._deregister_pytree_node(Pair)
    assert compiled(p) == f(p) == 1


T = typing.TypeVar("T")


@pytest.mark.parametrize(
    "annotate",
    [
        lambda: typing.Callable[[T], typing.Any],
        lambda: collections.abc.Callable[[int, T], typing.Any],
        lambda: collections.abc.Iterable[int],
        lambda: tuple[list[typing.Any], int],
    ],
    ids=["typing.Callable", "abc.Callable", "abc.Iterable", "builtin_generic"],
)
def test_annotation_subscripts_in_a_nested_def(annotate):
    """A nested def's annotations run when it is made (pytree.map_only's `wrapper(func:
    Callable[[T], Any])`): the subscript folds to the same hint object."""
    fj.reset()

    def f(x):
        def g(v: annotate()) -> annotate():
            return v + 1

        return g(x)

    x = torch.randn(2)
    count, out = _graphs(f, x)
    assert count == 1
    torch.testing.assert_close(out, x + 1)


@pytest.mark.parametrize("cls", [tuple, list, dict, int, str])
def test_getattr_default_on_a_builtin_type(cls):
    """`getattr(cls, "_fields", None)` of a C-defined class: the default, no guard needed
    (pytree.is_namedtuple_class)."""
    fj.reset()

    def f(x):
        return x + 1, getattr(cls, "_fields", None), hasattr(cls, "_make")

    count, out = _graphs(f, torch.ones(1))
    assert count == 1 and out[1:] == (None, False)


class A:
    pass


class B:
    pass


class C:
    pass


REGISTRY = {A: 1.0, B: 2.0, C: 3.0}

REGISTRY_READS = {
    "getitem": lambda x: x * REGISTRY[B],
    "get_present": lambda x: x * REGISTRY.get(C, 0.5),
    "get_absent": lambda x: x * REGISTRY.get(int, 0.5),
    "contains": lambda x: x * (2.0 if B in REGISTRY else 3.0),
    "len": lambda x: x * len(REGISTRY),
    "values": lambda x: x * sum(REGISTRY.values()),
    "items": lambda x: [x * v for k, v in REGISTRY.items() if k is not A],
    "copy_then_read": lambda x: x * dict(REGISTRY)[C],
}


@pytest.mark.parametrize("read", list(REGISTRY_READS))
def test_object_keyed_registry_reads(read):
    """A global dict keyed by classes (pytree's SUPPORTED_NODES): values are wrapped when
    read; each read is eager's, in one graph, and a change to what was read recompiles."""
    fj.reset()
    fn = REGISTRY_READS[read]
    x = torch.randn(3)
    count, out = _graphs(fn, x)
    assert count == 1
    torch.testing.assert_close(out, fn(x))
    compiled = fj.compile(fn)
    saved = dict(REGISTRY)
    try:
        for change in (lambda: REGISTRY.__setitem__(B, 7.0), lambda: REGISTRY.pop(A)):
            change()
            torch.testing.assert_close(compiled(x), fn(x))
        REGISTRY[int] = 9.0
        torch.testing.assert_close(compiled(x), fn(x))
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)


def test_tree_map_guards_only_the_nodes_it_reads():
    """tree_map over a list reads the registry's list entry: the other ~100 NodeDefs are not
    guarded (each was some twenty guards checked on every call)."""
    fj.reset()

    def f(t):
        return pytree.tree_map(lambda v: v + 1, t)

    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        fj.compile(f, fullgraph=True)([torch.ones(2), torch.ones(2)])
    finally:
        unsubscribe()
    parts = [p for r in seen for p in r.check_fn.code_parts if "SUPPORTED_NODES" in p]
    assert len(parts) < 2 * len(pytree.SUPPORTED_NODES)
