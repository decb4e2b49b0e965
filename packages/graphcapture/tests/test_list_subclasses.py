"""Objects of list subclasses (transformers' LogitsProcessorList / StoppingCriteriaList):
built in the frame or read from its inputs, the class's Python methods inlined and list's
own behaviour for the rest; each against eager, with the frame count torch.compile takes.
Mutations of an input object are replayed once, past a `__setitem__` the class overrides;
its contents are guarded without running the class's `__len__`/`__getitem__`."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo.testing
from test_stdlib_cases import assert_same

from framejit import graphcapture as fj


class Plain(list):
    pass


class Pipeline(list):
    """LogitsProcessorList, reduced: called, it runs each item in turn."""

    def __call__(self, x):
        for step in self:
            x = step(x)
        return x

    def length_times_10(self):
        return len(self) * 10

    def append_twice(self, x):
        self.extend([x, x])


class NoClear(Pipeline):
    def clear(self):
        pass


class Tagged(list):
    def __init__(self, items, tag):
        super().__init__(items)
        self.tag = tag

    def total(self):
        return sum(self) * len(self)


class Doubling(list):
    def append(self, x):
        super().append(x * 2)


SETITEM_CALLS: list = []


class CountingSetitem(list):
    def __setitem__(self, key, value):
        SETITEM_CALLS.append(key)
        list.__setitem__(self, key, value)


class Shifted(list):
    def __getitem__(self, i):
        return list.__getitem__(self, i + 1)


class Opaque(list):
    """test_skip_non_tensor's Foo: eager never calls these for `x[0]`."""

    def __iter__(self):
        raise RuntimeError("__iter__ called")

    def __len__(self):
        raise RuntimeError("__len__ called")


def _same(actual, expected) -> None:
    assert type(actual) is type(expected)
    if isinstance(expected, list) and type(expected) is not list:
        assert len(actual) == len(expected)
        for a, b in zip(actual, expected, strict=True):
            _same(a, b)
        assert vars(actual).keys() == vars(expected).keys()
        for k in vars(expected):
            _same(vars(actual)[k], vars(expected)[k])
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, b in zip(actual, expected, strict=True):
            _same(a, b)
    else:
        assert_same(actual, expected)


def _frames(fn, make_args, fullgraph):
    """fn's result under eager, framejit and torch.compile, each on fresh args; the args
    framejit and eager ran on, and both frame counts."""
    eager_args = make_args()
    expected = fn(*eager_args)
    fj.reset()
    counter = fj.testing.CompileCounter()
    got_args = make_args()
    got = fj.compile(fn, backend=counter, fullgraph=fullgraph)(*got_args)
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=fullgraph)(*make_args())
    return got, expected, got_args, eager_args, counter.frame_count, torch_counter.frame_count


X, Y = torch.randn(3), torch.randn(3)


def _in_frame_sum(a, b):
    lst = Pipeline()
    lst.extend([True])
    lst.append(a)
    lst.extend([b])
    lst.pop(0)
    lst.append(lst.length_times_10())
    return sum(lst)


def _escapes(a, b):
    l1 = Pipeline([a + 1])
    l2 = Pipeline([b + 2])
    l1.extend(l2)
    return l1, Tagged([a * 2], "t")


def _operators(a, b):
    lst = Plain([a, b])
    lst += [a * 3]
    joined = lst + [b]  # noqa: RUF005 (list.__add__ on the subclass is the point)
    before = [a] + lst  # noqa: RUF005
    return joined, before, lst * 2, type(lst[0:2]), lst[-1] + 1, bool(lst), 3 in Plain([3])


def _methods_and_super(a, b):
    d = Doubling()
    d.append(a)
    list.append(d, b)
    d.insert(0, b * 4)
    d[1] = d[1] + 1
    del d[2]
    t = Tagged([a, b], "x")
    return d, t.total(), t.tag, isinstance(t, list), type(t) is Tagged, d.copy(), list(d)


def _break_with_one_alive(a, b):
    t = Tagged([a * 2], "b")
    print("graph break")
    t.append(b)
    return t


# (function, whether torch.compile takes it in one graph: it breaks on `list.append(d, b)`)
IN_FRAME = [
    (_in_frame_sum, True),
    (_escapes, True),
    (_operators, True),
    (_methods_and_super, False),
]


@pytest.mark.parametrize("fn, torch_one_graph", IN_FRAME, ids=[f.__name__ for f, _ in IN_FRAME])
def test_list_subclass_built_in_the_frame(fn, torch_one_graph):
    make = lambda: (X.clone(), Y.clone())  # noqa: E731
    if torch_one_graph:
        got, expected, *_, frames, torch_frames = _frames(fn, make, True)
        assert frames == torch_frames == 1
    else:
        expected = fn(*make())
        counter = fj.testing.CompileCounter()
        got = fj.compile(fn, backend=counter, fullgraph=True)(*make())
        assert counter.frame_count == 1
    _same(got, expected)


def test_list_subclass_alive_across_a_graph_break(capsys):
    got, expected, *_, frames, torch_frames = _frames(
        _break_with_one_alive, lambda: (X.clone(), Y.clone()), False
    )
    _same(got, expected)
    assert frames == torch_frames


def _merge(default_list, custom_list):
    # transformers' _merge_criteria_processor_list, reduced
    if len(custom_list) == 0:
        return default_list
    for default in default_list:
        for custom in custom_list:
            if type(custom) is type(default):
                raise ValueError
    default_list.extend(custom_list)
    return default_list


@pytest.mark.parametrize("cls", [Pipeline, NoClear])
def test_input_list_subclass_extended_and_called(cls):
    def fn(x, left, right):
        return _merge(left, right)(x)

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.randn(16)
    l1 = cls([torch.nn.ReLU(), torch.nn.Sigmoid()])
    torch.testing.assert_close(compiled(x, l1, cls([])), l1(x))
    assert (counter.frame_count, counter.op_count) == (1, 2)
    l3 = cls([torch.nn.SiLU()])
    expected = l3(l1(x))
    torch.testing.assert_close(compiled(x, l1, l3), expected)
    assert type(l1) is cls and len(l1) == 3 and isinstance(l1[2], torch.nn.SiLU)
    assert (counter.frame_count, counter.op_count) == (2, 5)  # l1's length changed


def test_input_list_subclass_mutated_through_an_alias():
    def fn(a, b):
        a.extend(b)
        a.append_twice(b[2] + 1)
        a.append(b[3] + 2)
        return b

    lst = Pipeline([X, Y])
    assert fj.compile(fn, backend="eager", fullgraph=True)(lst, lst) is lst
    assert len(lst) == 7 and lst[0] is X and lst[1] is Y and lst[2] is X and lst[3] is Y
    assert lst[5] is lst[4]
    torch.testing.assert_close(lst[4], X + 1)
    torch.testing.assert_close(lst[6], Y + 2)


def test_input_mutation_replayed_once_past_an_overridden_setitem():
    def fn(lst, x):
        lst.append(x * 7)
        lst.insert(0, x)
        lst[1] = lst[1] + 1  # the class's __setitem__: traced, counted once
        return lst.pop()

    def make():
        return CountingSetitem([X.clone()]), Y.clone()

    counter = fj.testing.CompileCounter()  # (torch.compile raises here, in list.__setitem__)
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    for _ in range(2):  # compiled, then a cache hit
        SETITEM_CALLS.clear()
        eager_args = make()
        eager = fn(*eager_args)
        assert SETITEM_CALLS == [1]
        SETITEM_CALLS.clear()
        got_args = make()
        torch.testing.assert_close(compiled(*got_args), eager)
        assert SETITEM_CALLS == [1]
        _same(got_args[0], eager_args[0])
    assert counter.frame_count == 1


def test_overridden_getitem_is_inlined_and_contents_guarded():
    def fn(lst):
        return lst[0] + 1

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    a, b, c = torch.randn(3), torch.randn(3), torch.randn(3)
    torch.testing.assert_close(compiled(Shifted([a, b])), b + 1)
    torch.testing.assert_close(compiled(Shifted([a, b, c])), b + 1)
    assert counter.frame_count == 2  # its length is guarded
    torch.testing.assert_close(compiled(Shifted([b, c, a])), c + 1)
    assert counter.frame_count == 2


def test_guards_never_call_the_class_len_or_iter():
    def fn(x):
        return x[0] + x[1]

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    for _ in range(2):
        lst = Opaque()
        list.extend(lst, [X, Y])
        torch.testing.assert_close(compiled(lst), X + Y)
    assert (counter.frame_count, counter.op_count) == (1, 1)
