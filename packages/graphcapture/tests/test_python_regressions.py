"""Regressions from generated programs and torch's tests: each compared with eager."""

from __future__ import annotations

import collections
import functools
import threading
import typing

import torch

from framejit import graphcapture as fj

SEEN: dict = {}


def _setdefault_then_break(x, lst):
    SEEN.setdefault("seen", []).append(len(lst))
    SEEN["n"] = len(lst)
    y = x + 1
    print("", end="")  # graph break
    return y * len(SEEN["seen"])


def test_global_dict_setdefault_append_then_break():
    # was KeyError: 'seen' on the second call: the replay cleared the dict, then loaded
    # D['seen'] (the list it was about to put back) from the emptied dict
    SEEN.clear()
    expected = [_setdefault_then_break(torch.ones(2), [1, 2]) for _ in range(3)]
    eager_state = {k: (list(v) if isinstance(v, list) else v) for k, v in SEEN.items()}
    SEEN.clear()
    compiled = fj.compile(_setdefault_then_break, backend="eager")
    got = [compiled(torch.ones(2), [1, 2]) for _ in range(3)]
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)
    assert eager_state == SEEN


def test_replayed_values_are_built_before_any_store():
    box = {"a": [1], "b": [2]}

    def fn(x, d):
        a, b = d["a"], d["b"]
        a.append(3)
        d["a"], d["b"] = b, a  # the dict's new values are its old lists, swapped
        return x + 1

    expected_box = {"a": [2], "b": [1, 3]}
    counter = fj.testing.CompileCounter()
    fj.compile(fn, backend=counter)(torch.ones(1), box)
    assert box == expected_box
    assert box["b"] is not box["a"]


def test_concatenating_sequences_of_tensors():
    def fn(a, b):
        items = [a, b] + [a]  # noqa: RUF005 (concatenation is the construct under test)
        items += [b]
        pair = (a,) + (b,)  # noqa: RUF005
        return items, pair, [a] * 2

    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(torch.ones(2), torch.zeros(2))
    torch.testing.assert_close(got, fn(torch.ones(2), torch.zeros(2)))
    assert counter.frame_count == 0  # no tensor ops: nothing to compile, as torch.compile


def test_frozenset_of_functions_from_an_input_is_identity_guarded():
    def fn(x, funcs):
        return x.sin() if torch.sin in funcs else x.cos()

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.ones(3)
    both, only_cos = frozenset([torch.sin, torch.cos]), frozenset([torch.cos])
    torch.testing.assert_close(compiled(x, both), fn(x, both))
    torch.testing.assert_close(compiled(x, only_cos), fn(x, only_cos))  # another set: recompiles
    assert counter.frame_count == 2


def test_torch_dynamo_testing_unsupported_breaks_the_graph():
    # torch's own tests force graph breaks with this C function; it must not become a node
    from torch._dynamo.testing import unsupported

    def fn(a, b):
        x = (a + b) / 2.0
        x = unsupported(x, a)
        return x + 2.0

    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter)(torch.ones(2), torch.ones(2))
    torch.testing.assert_close(got, fn(torch.ones(2), torch.ones(2)))
    assert counter.frame_count == 2


def test_tensor_keyed_dict_as_kwargs_raises_as_eager():
    """`f(**{tensor: 1})`: eager's TypeError (keywords must be strings), not a crash."""

    def g(**kw):
        return kw

    def f(x):
        try:
            g(**{x: 1})
        except TypeError as e:
            return x + 1, str(e)
        return x, ""

    x = torch.ones(2)
    actual, expected = fj.compile(f)(x), f(x)
    torch.testing.assert_close(actual[0], expected[0])
    assert actual[1] == expected[1]


def _closure_over_a_frame_cell():
    x = torch.ones(2)

    def get_inner():
        def inner():
            return x + x

        return inner(), inner  # the rebuilt `inner` closes over the real cell of x

    return get_inner


def test_rebuilt_function_closing_over_a_real_cell():
    # was TypeError: unhashable type: 'cell' out of the compiled call: the cell was a
    # constant of the generated code, which frameeval hashes
    get_inner = _closure_over_a_frame_cell()

    def root():
        return get_inner()

    res, inner = fj.compile(root, backend="eager", fullgraph=True)()
    torch.testing.assert_close(res, torch.full((2,), 2.0))
    torch.testing.assert_close(inner(), res)


def _python_types_as_dtypes(x):
    return (x * 5).to(bool).to(float).to(int) + 8, torch.zeros(2, dtype=float)


def test_python_scalar_types_where_a_dtype_goes():
    # was an internal error (SyntaxError in the graph's code: `float` printed as an arg)
    counter = fj.testing.CompileCounter()
    got = fj.compile(_python_types_as_dtypes, backend=counter, fullgraph=True)(torch.randn(3))
    expected = _python_types_as_dtypes(torch.randn(3))
    assert [g.dtype for g in got] == [e.dtype for e in expected] == [torch.int64, torch.float64]
    assert counter.frame_count == 1


class _Rows(typing.NamedTuple):
    a: torch.Tensor
    b: torch.Tensor

    def __getitem__(self, index):  # rows of both, as a batch container's indexing
        return _Rows(tuple.__getitem__(self, 0)[index], tuple.__getitem__(self, 1)[index])


def _named_tuple_with_own_getitem(rows):
    return rows.a + 1, rows[0], rows.b[1:]


def test_named_tuple_input_with_its_own_getitem():
    # the graph's inputs were read as rows[0], through the class's __getitem__ (TypeError
    # out of the graph), and rows[0] in the trace ignored it (a wrong answer)
    rows = _Rows(torch.randn(2), torch.randn(2))
    expected = _named_tuple_with_own_getitem(rows)
    compiled = fj.compile(_named_tuple_with_own_getitem, backend="eager", fullgraph=True)
    for _ in range(2):
        got = compiled(rows)
        torch.testing.assert_close(got[0], expected[0])
        assert type(got[1]) is _Rows
        torch.testing.assert_close(tuple(got[1]), tuple(expected[1]))
        torch.testing.assert_close(got[2], expected[2])


def _struct_sequences(x, y):
    r = torch.return_types.max((x, y))
    return r, r.values + 1, tuple(torch.return_types.qr((2 * x, y - 1)))


def _function_attributes(t):
    def wrapper():
        return t

    wrapper.__wrapped__ = _struct_sequences
    wrapper.tag = t + 1
    return wrapper, wrapper.tag * 2


def _thread_local_store(x, local):
    local.x = x
    return x + 1


def test_struct_sequences_function_attributes_and_thread_locals_in_one_graph():
    # each was a graph break: constructing a torch.return_types object, a store to a
    # function made in the frame, a store to a threading.local
    counter = fj.testing.CompileCounter()
    x, y = torch.randn(3, 2), torch.randn(2, 4)
    r, plus, qr = fj.compile(_struct_sequences, backend=counter, fullgraph=True)(x, y)
    assert type(r) is torch.return_types.max and r.values is x
    torch.testing.assert_close(plus, x + 1)
    assert type(qr) is tuple and qr[0] is not None
    wrapper, doubled = fj.compile(_function_attributes, backend=counter, fullgraph=True)(x)
    assert wrapper.__wrapped__ is _struct_sequences and wrapper() is x
    torch.testing.assert_close(wrapper.tag, x + 1)
    torch.testing.assert_close(doubled, (x + 1) * 2)
    local = threading.local()
    fj.compile(_thread_local_store, backend=counter, fullgraph=True)(x, local)
    assert local.x is x
    assert counter.frame_count == 3


_LINEAR = torch.nn.Linear(2, 1)


def _reads_grads(a):
    made = torch.ones(2, 2)
    outs = [made.grad]
    for p in _LINEAR.parameters():
        outs.append(None if p.grad is None else p.grad * 2)
    return outs, a.grad


def test_tensor_grad_is_read_where_it_is():
    # was a graph break ("Tensor.grad is not traced"); a backward between calls recompiles
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(_reads_grads, backend=counter, fullgraph=True)
    a = torch.ones(2, 2, requires_grad=True)
    assert compiled(a) == ([None, None, None], None)
    for _ in range(2):
        _LINEAR(a).sum().backward()
        (made, weight, bias), grad = compiled(a)
        assert made is None and grad is a.grad
        torch.testing.assert_close(weight, _LINEAR.weight.grad * 2)
        torch.testing.assert_close(bias, _LINEAR.bias.grad * 2)
    assert counter.frame_count == 2


class _Pair(typing.NamedTuple):
    a: torch.Tensor
    b: torch.Tensor


class _PairWithDict(_Pair):  # no __slots__: instances have a __dict__
    pass


def _tag_input_pair(pair):
    pair.c = pair.a + 1
    return pair, pair.c * 2


def _tag_new_pair(x):
    pair = _PairWithDict(x, x * 2)
    pair.c = x + 3
    return pair


def test_attribute_stores_on_named_tuples_with_a_dict():
    # were graph breaks (attribute store on a tuple); a field's own getter still refuses it
    pair = _PairWithDict(torch.ones(2), torch.zeros(2))
    got, doubled = fj.compile(_tag_input_pair, backend="eager", fullgraph=True)(pair)
    assert got is pair
    torch.testing.assert_close(pair.c, torch.full((2,), 2.0))
    torch.testing.assert_close(doubled, torch.full((2,), 4.0))
    made = fj.compile(_tag_new_pair, backend="eager", fullgraph=True)(torch.ones(2))
    assert type(made) is _PairWithDict
    torch.testing.assert_close(made.c, torch.full((2,), 4.0))


def _cool_name(x):
    """The wrapped function's doc."""
    return x.sin()


_cool_name.tag = "kept"


def test_functools_wraps_in_the_frame_copies_the_metadata():
    # the wrapper came back named 'uncool_name' with no __wrapped__ (torch's _repros_part2)
    def fn(x):
        y = x.cos()

        @functools.wraps(_cool_name)
        def uncool_name():
            return _cool_name(y)

        return uncool_name, uncool_name.__name__, uncool_name.tag

    x = torch.ones(3)
    expected = fn(x)
    got = fj.compile(fn, backend="eager", fullgraph=True)(x)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__", "tag"):
        assert getattr(got[0], attr) == getattr(expected[0], attr), attr
    assert got[1:] == expected[1:]
    torch.testing.assert_close(got[0](), expected[0]())


def test_builtin_iterators_keep_their_type():
    # map(...) escaped the frame as a tuple_iterator and type(map(...)) is map was False
    def fn(x):
        m = map(lambda a: a + 1, [x, x])  # noqa: C417 (the map object is the point)
        z = zip([x], [x + 1], strict=False)
        e = enumerate([x, x * 2], 3)
        f = filter(lambda t: True, [x])
        return type(m) is map, isinstance(z, zip), m, z, e, f

    x = torch.ones(2)
    expected = fn(x)
    got = fj.compile(fn, backend="eager", fullgraph=True)(x)
    assert [type(v) for v in got] == [type(v) for v in expected]
    assert got[:2] == expected[:2]
    for g, e in zip(got[2:], expected[2:], strict=True):
        torch.testing.assert_close(list(g), list(e))


def _lengths(lst):
    for _ in range(3):
        yield len(lst)


def test_generator_reading_what_its_consumer_changes_is_not_run_ahead():
    # the inlined generator ran to its end before the loop body: it yielded 0, 0, 0 where
    # eager yields 0, 1, 2 (the body appends to the list the generator reads)
    def fn(x, lst):
        for v in _lengths(lst):
            lst.append(v)
            x = x + v
        return x

    expected_list, got_list = [], []
    expected = fn(torch.zeros(2), expected_list)
    got = fj.compile(fn, backend="eager")(torch.zeros(2), got_list)
    torch.testing.assert_close(got, expected)
    assert got_list == expected_list == [0, 1, 2]


def _chunks(x):
    for i in range(0, 4, 2):
        yield x[i : i + 2]


class _Output(collections.OrderedDict):
    def __getitem__(self, k):
        if isinstance(k, str):
            inner = {k: v for (k, v) in self.items()}  # noqa: C416 (a comprehension is the point)
            return inner[k]
        return self.to_tuple()[k]

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


def test_generators_that_write_only_what_they_make_stay_in_one_graph():
    # writes after a yield to objects made since (a dict comprehension in __getitem__)
    # and a consumer building a new list are not what a run-ahead could get wrong
    def fn(x, out):
        doubled = [c * 2 for c in _chunks(x)]
        return out.to_tuple()[0] + doubled[1].sum()

    out = _Output(a=torch.ones(3), b=torch.zeros(3))
    x = torch.arange(4.0)
    torch.testing.assert_close(fj.compile(fn, backend="eager", fullgraph=True)(x, out), fn(x, out))
