"""Containers the frame reads from its inputs and closures (dicts keyed by Parameters,
torch.Size or ops; sets), and container operations from recent torch test/dynamo files:
each against eager, with torch.compile's frame count where it takes one graph, and with
the state changes between calls that the guards must catch."""

from __future__ import annotations

import collections
import collections.abc
import copy
from typing import NamedTuple

import pytest
import torch
import torch._dynamo.testing
from torch.utils._pytree import tree_flatten

from framejit import graphcapture as fj


def _frames(fn, *args, fullgraph=True):
    """Run fn under framejit and under torch.compile on copies of args: both results and
    frame counts."""
    fj.reset()
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=fullgraph)(*copy.deepcopy(args))
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=fullgraph)(*copy.deepcopy(args))
    return got, counter.frame_count, torch_counter.frame_count


def _same(got, expected) -> None:
    got_leaves, got_spec = tree_flatten(got)
    leaves, spec = tree_flatten(expected)
    assert got_spec == spec
    for a, b in zip(got_leaves, leaves, strict=True):
        if isinstance(b, torch.Tensor):
            torch.testing.assert_close(a, b)
        else:
            assert type(a) is type(b) and a == b


def _check(fn, *args):
    expected = fn(*copy.deepcopy(args))
    got, frames, torch_frames = _frames(fn, *args)
    _same(got, expected)
    assert frames == torch_frames
    return got


# ---------------------------------------------------------------- dicts with object keys
@pytest.mark.parametrize("factory", [dict, list, set])
def test_defaultdict_keyed_by_a_parameter(factory):
    dd = collections.defaultdict(factory)
    param = torch.nn.Parameter(torch.ones(2, 2))

    def fn(x):
        dd["a"] = x + 1
        dd[param] = 123
        dd["c"] = x * 2
        return dd["b"], dd[param] + 1

    x = torch.randn(3)
    expected = fn(x)  # the dict now holds the Parameter key: the compiled frame reads it
    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    got = compiled(x)
    assert got == expected
    assert list(dd) == ["a", param, "c", "b"]
    torch.testing.assert_close(dd["c"], x * 2)


def test_dict_keyed_by_torch_size_recompiles_on_another_size():
    def fn(x, cached):
        if x.shape not in cached:
            cached[x.shape] = x
        return x + cached[x.shape]

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x1, x2 = torch.randn(2, 3), torch.randn(2, 3)
    eager_cache, cache = {}, {}
    for x in (x1, x2, torch.randn(4)):
        torch.testing.assert_close(compiled(x, cache), fn(x, eager_cache))
        assert list(cache) == list(eager_cache)
    torch.testing.assert_close(cache[x1.shape], x1)


def test_dict_keyed_by_ops_and_functions():
    table = {torch.ops.aten.sum: 1, torch.add: 2, len: 3, torch.Tensor.add: 4}

    def fn(x):
        return x * len(table) + table[torch.add] + table.get(torch.ops.aten.sum, 0)

    _check(fn, torch.ones(3))


class _ByValue:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return isinstance(other, _ByValue) and other.v == self.v

    def __hash__(self):
        return hash(self.v)


def test_dict_keyed_by_objects_equal_by_value_is_a_break_not_a_guess():
    d = {_ByValue(1): 10}

    def fn(x):
        return x + d[_ByValue(1)]

    with pytest.raises(fj.GraphBreakInFullgraph):
        fj.compile(fn, backend="eager", fullgraph=True)(torch.ones(2))
    torch.testing.assert_close(fj.compile(fn, backend="eager")(torch.ones(2)), fn(torch.ones(2)))


def test_dict_keyed_by_user_objects_guards_their_identity():
    k1, k2 = object(), object()
    d = {k1: 1.0, "s": 2.0}

    def fn(x, k):
        return x * d.get(k, -1.0)

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x, k1), fn(x, k1))
    torch.testing.assert_close(compiled(x, k2), fn(x, k2))
    d[k2] = d.pop(k1)
    torch.testing.assert_close(compiled(x, k2), fn(x, k2))
    torch.testing.assert_close(compiled(x, k1), fn(x, k1))


def test_hasattr_of_a_dict_is_its_type_s_answer():
    def fn(x):
        if hasattr(x, "to"):
            return x.to("cpu")
        if hasattr(x, "items"):
            return torch.cos(x["a"])
        return x

    _check(fn, {"a": torch.randn(3)})
    _check(fn, torch.randn(4))


# ---------------------------------------------------------------- sets read from inputs
def test_set_from_a_closure_is_guarded_by_contents():
    s = {1, 2}

    def fn(x):
        return torch.cos(x) * len(s) + (5 in s)

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x = torch.rand(4)
    torch.testing.assert_close(compiled(x), fn(x))
    s.add(3)
    torch.testing.assert_close(compiled(x), fn(x))
    s.discard(1)
    s.add(5)
    torch.testing.assert_close(compiled(x), fn(x))


def test_set_from_a_closure_mutated_in_the_frame():
    s = {1, 2}

    def fn(x):
        s.add(3)
        s.discard(1)
        return torch.cos(x) * len(x)

    x = torch.rand(4)
    expected = fn(x)
    s.clear()
    s.update({1, 2})
    torch.testing.assert_close(fj.compile(fn, backend="eager", fullgraph=True)(x), expected)
    assert s == {2, 3}


def test_set_argument_iterates_in_eager_order():
    def fn(x, s):
        out = []
        for v in s:  # a loop over the set, in its order
            out.append(v)
        s.add("zz")
        return x + len(out), out

    words = {"apple", "banana", "cherry", "kiwi", "plum"}
    eager_set, compiled_set = set(words), set(words)
    expected = fn(torch.ones(2), eager_set)
    got = fj.compile(fn, backend="eager", fullgraph=True)(torch.ones(2), compiled_set)
    assert got[1] == expected[1]
    assert list(compiled_set) == list(eager_set)
    got, frames, torch_frames = _frames(fn, torch.ones(2), {"a", "b"})
    assert frames == torch_frames == 1


def test_set_of_objects_guards_their_identity():
    a, b = object(), object()

    def fn(x, s, o):
        return x + (o in s)

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    x = torch.zeros(1)
    for s, o in (({a}, a), ({b}, a), ({a, b}, b)):
        torch.testing.assert_close(compiled(x, s, o), fn(x, s, o))


def test_complex_numbers_in_inputs_are_guarded_by_value():
    # a complex member of an input set, and a complex argument, are EQUALS_MATCHed (each
    # part by the float rule): a changed value recompiles rather than reusing the graph
    def fn(x, s, c):
        y = x.sin() if "PyTorch" in s else x.cos()
        return y * abs(c) + (1j in s)

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.tensor([1.0, 2.0])
    nan = float("nan")  # one object: a nan hashes by identity, which orders the set
    for s, c in (
        ({"PyTorch", 3.3, 1j, nan}, 2j),
        ({"PyTorch", 3.3, 1j, nan}, 2j),
        ({3.3, 1j, nan}, 2j),
        ({"PyTorch", 3.3, 2j, nan}, 3 + 4j),
    ):
        torch.testing.assert_close(compiled(x, s, c), fn(x, s, c))
    assert counter.frame_count == 3
    _got, frames, torch_frames = _frames(fn, x, {"PyTorch", 1j}, 2j)
    assert frames == torch_frames == 1


def test_set_isdisjoint_of_closure_sets():
    x = {"apple", "banana", "cherry"}
    y = {"google", "microsoft", "apple"}

    def fn(a):
        return a + 1 if x.isdisjoint(y) else a - 1

    _check(fn, torch.ones(2))


# ---------------------------------------------------------------- sequences
def test_sequence_repeated_by_an_int_either_side():
    def fn(x):
        lst = [x, x + 1]
        alias = lst
        alias *= 2
        return sum(4 * [x]), lst, (x,) * 2, 2 * (x,)

    _check(fn, torch.ones(2))


def test_sorted_by_a_traced_key():
    def fn(x):
        rows = [("john", "A", 8), ("jane", "B", 5), ("dave", "B", 10)]
        ts = [x * 3, x[:1], x + 1]
        ts.sort(key=lambda t: t.shape[0])
        return (
            sorted(rows),
            sorted(rows, key=lambda r: r[2]),
            sorted(rows, key=lambda r: r[1], reverse=True),
            ts,
        )

    _check(fn, torch.ones(3))


class _Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor

    def add(self):
        return self.first + self.second

    @staticmethod
    def one():
        return 1

    @classmethod
    def name(cls):
        return cls.__name__

    @property
    def product(self):
        return self.first * self.second


def test_named_tuple_methods():
    def fn(a, b):
        p = _Pair(a, b)
        return p.add(), p.one(), p.name(), p.product, p._asdict()["second"]

    _check(fn, torch.ones(2), torch.full((2,), 3.0))


# ---------------------------------------------------------------- iteration and mappings
def test_namedtuple_made_in_the_frame():
    def fn(a, b):
        Point = collections.namedtuple("Point", ["x", "y", "xy"], defaults=(None, 1, None))
        tmp = Point(a, xy=b)
        return Point(tmp.x, tmp[1], tmp.xy + b)

    args = (torch.ones(2), torch.full((2,), 3.0))
    expected = fn(*args)
    got, frames, torch_frames = _frames(fn, *args)
    _same(tuple(got), tuple(expected))  # (eager makes a new class on each call)
    assert got._fields == expected._fields and frames == torch_frames == 1
    assert type(got).__name__ == "Point" and type(got).__module__ == __name__


def test_comprehension_frame_gets_a_range_iterator():
    # with no tensor work in fn, its comprehension's frame is the one compiled, called
    # with iter(range(n)): the remaining ints are guarded (another n recompiles)
    def fn(n):
        a = [tuple(range(-3, i)) for i in range(n)]
        return tuple(map(len, a))

    compiled = fj.optimize(nopython=True)(fn)
    assert compiled(4) == fn(4)
    assert compiled(6) == fn(6)


def test_tensor_dunder_iter_gives_its_rows():
    def fn(x):
        for y in x.__iter__():
            y.add_(1.0)
        return y

    counter = fj.testing.CompileCounter()
    x, expected_x = torch.randn(4, 3), None
    expected_x = x.clone()
    expected = fn(expected_x)
    torch.testing.assert_close(fj.compile(fn, backend=counter, fullgraph=True)(x), expected)
    torch.testing.assert_close(x, expected_x)
    assert (counter.frame_count, counter.op_count) == (1, 8)


def test_yield_from_a_container_and_a_generator():
    class Keys:
        def __init__(self, keys):
            self.keys = keys

        def __iter__(self):
            yield from self.keys

    def sub(x):
        yield x + 1
        return x * 10

    def outer(x):
        r = yield from sub(x)
        yield r

    def fn(x):
        return len(set(Keys([1, 2, 2]))) * x, list(outer(x))

    _check(fn, torch.ones(2))


class _Mapping(collections.abc.MutableMapping):
    def __init__(self, **items):
        self._d = dict(items)

    def __getitem__(self, key):
        return self._d[key]

    def __setitem__(self, key, value):
        self._d[key] = value

    def __delitem__(self, key):
        del self._d[key]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def test_double_star_and_update_from_a_mapping_class():
    m = _Mapping(a=torch.full((2,), 2.0))

    def gn(x, a=1):
        return x * a

    def fn(x):
        d = {"b": 1}
        d.update(m)
        return gn(x, **m), d

    _check(fn, torch.ones(2))


def test_double_star_with_a_key_given_twice_raises_eager_s_error():
    def gn(x, a=1):
        return x * a

    def fn(x):
        return gn(x, **{"a": 1}, **{"a": 2})

    with pytest.raises(TypeError, match="multiple values"):
        fj.compile(fn, backend="eager")(torch.ones(2))


def test_f_string_of_containers_of_constants():
    def fn(x):
        s = set("abcdef")
        s.discard("c")
        f, lst, d = frozenset([1, 2]), [1, "a", (2,)], {"a": [1, 2], 3: None}
        return x + 1, f"{s} != {f} {set()} {lst!r} {d} {(1,)} {frozenset()}"

    _check(fn, torch.ones(1))


def test_set_dunder_methods_called_on_the_type():
    def fn(x):
        p, q, r = set("abc"), set("bef"), set("ab")
        ops = [set.__and__(p, q), set.__or__(p, q), set.__xor__(p, q), set.__sub__(p, q)]
        cmps = [set.__gt__(p, r), set.__le__(r, p), set.__eq__(p, p), set.__ne__(p, q)]
        return x + 1, ops, cmps, frozenset.__or__(frozenset(p), q)

    _check(fn, torch.ones(1))

    def not_a_set(x):  # (torch.compile raises here; Python gives NotImplemented)
        return x + 1, set.__and__({1}, 1)

    got = fj.compile(not_a_set, backend="eager", fullgraph=True)(torch.ones(1))
    assert got[1] is NotImplemented


class _CustomSet(set):
    pass


class _CustomFrozenset(frozenset):
    pass


def test_bare_set_subclasses_keep_their_type():
    def fn(x):
        p, q, f, g = _CustomSet("abc"), _CustomSet("bef"), _CustomFrozenset("ab"), frozenset("ab")
        p.add("z")
        _CustomSet.add(p, "y")
        facts = (
            type(p) is _CustomSet,
            isinstance(p, set),
            type(p - q) is set,  # set operations give the base type
            p == {"a", "b", "c", "z", "y"},
            type(f.copy()) is frozenset,
            g.copy() is g,  # a frozenset's copy is itself
            type(f) is _CustomFrozenset,
        )
        return x + len(p), facts, p, f

    got = _check(fn, torch.ones(1))
    assert type(got[2]) is _CustomSet and type(got[3]) is _CustomFrozenset


def test_frozenset_identity_of_copies_and_rebuilds():
    # frozenset(fs) is fs itself and fs.copy() too (one tracker); a subclass's copy, or a
    # frozenset built from an iterable, is a new object: `is` and id() tell them apart
    def fn(x, q):
        a, f = frozenset("abc"), _CustomFrozenset("abc")
        facts = (
            frozenset(a) is a,
            frozenset(q) is q,
            id(frozenset.copy(a)) == id(a),
            id(f.copy()) != id(f),
            frozenset.copy(f) is not f,
            type(frozenset.copy(f)) is frozenset,
            frozenset({1, 2}) is frozenset({1, 2}),
            frozenset(f) is f,
        )
        return x + 1, facts

    got = _check(fn, torch.ones(1), frozenset("xy"))
    assert got[1] == fn(torch.ones(1), frozenset("xy"))[1]


def test_bare_set_subclass_read_from_the_inputs():
    def fn(x, s):
        s.add("q")
        return x + ("a" in s), f"{s}" if len(s) < 2 else len(s)

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    for items in ("ab", "", "zb"):
        eager_set, compiled_set = _CustomSet(items), _CustomSet(items)
        _same(compiled(torch.zeros(1), compiled_set), fn(torch.zeros(1), eager_set))
        assert type(compiled_set) is _CustomSet and compiled_set == eager_set
    _same(compiled(torch.zeros(1), {"a"}), fn(torch.zeros(1), {"a"}))  # a plain set recompiles
