"""The user-class case table (cases_user_classes.py): fullgraph, equal to eager, graph/op counts;
plus the guards behind folded identity of objects read from the inputs."""

from __future__ import annotations

import pytest
import torch
from cases_user_classes import USER_CLASS_CASES, Box
from test_stdlib_cases import assert_same, check_case_matches_eager

from framejit import graphcapture as fj


def _same_objects(actual, expected) -> None:
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for x, y in zip(actual, expected, strict=True):
            _same_objects(x, y)
    elif isinstance(expected, Box):
        assert type(actual) is Box and vars(actual).keys() == vars(expected).keys()
        for k in vars(expected):
            torch.testing.assert_close(getattr(actual, k), getattr(expected, k))
    elif isinstance(expected, dict) and type(expected) is not dict:
        # a dict subclass: its contents and its attributes
        assert type(actual) is type(expected) and list(actual) == list(expected)
        for k in expected:
            _same_objects(dict.__getitem__(actual, k), dict.__getitem__(expected, k))
        assert vars(actual).keys() == vars(expected).keys()
        for k in vars(expected):
            _same_objects(vars(actual)[k], vars(expected)[k])
    elif "__slots__" in type(expected).__dict__ or "__slots__" in type(expected).__base__.__dict__:
        assert type(actual) is type(expected)  # slots (and a __dict__ a subclass adds)
        for k in type(expected).__mro__[0].__dict__.get("__slots__", ()) or expected.__slots__:
            assert hasattr(actual, k) == hasattr(expected, k)
            if hasattr(expected, k):
                _same_objects(getattr(actual, k), getattr(expected, k))
        assert getattr(actual, "__dict__", None) == getattr(expected, "__dict__", None)
    elif hasattr(expected, "__dataclass_fields__") and not isinstance(expected, type):
        assert type(actual) is type(expected)
        assert vars(actual).keys() == vars(expected).keys()
        for k in vars(expected):
            assert_same(getattr(actual, k), getattr(expected, k))
    else:
        assert_same(actual, expected)


@pytest.mark.parametrize("case", USER_CLASS_CASES, ids=[c.name for c in USER_CLASS_CASES])
def test_user_class_case_matches_eager(case):
    check_case_matches_eager(case, same=_same_objects)


def test_identity_of_input_objects_is_guarded():
    def fn(x, a, b):
        return x + 1 if a is b else x - 1

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter)
    x, a, b = torch.ones(2), Box(1), Box(2)
    torch.testing.assert_close(compiled(x, a, a), fn(x, a, a))
    torch.testing.assert_close(compiled(x, a, b), fn(x, a, b))  # must not reuse `a is b`
    torch.testing.assert_close(compiled(x, b, b), fn(x, b, b))
    assert counter.frame_count == 2


def test_eq_of_input_dataclasses_is_traced_not_folded():
    from cases_user_classes import Tag

    def fn(x, a, b):
        return x + 1 if a == b else x - 1

    compiled = fj.compile(fn, backend="eager")
    x = torch.ones(2)
    for a, b in [
        (Tag("a", 0), Tag("a", 0)),
        (Tag("a", 0), Tag("b", 0)),
        (Tag("c", 1), Tag("c", 1)),
    ]:
        torch.testing.assert_close(compiled(x, a, b), fn(x, a, b))


def test_contents_of_a_dict_subclass_read_in_the_trace_are_guarded():
    import cases_user_classes as cases

    def fn(x):
        return x * cases.REGISTRY.get("k")["scale"]

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.ones(2)
    saved = dict(cases.REGISTRY)
    try:
        torch.testing.assert_close(compiled(x), fn(x))
        dict.__setitem__(cases.REGISTRY, "k", {"scale": 5})  # a value changed
        torch.testing.assert_close(compiled(x), fn(x))
        dict.__setitem__(cases.REGISTRY, "other", {})  # the keys changed
        torch.testing.assert_close(compiled(x), fn(x))
    finally:
        dict.clear(cases.REGISTRY)
        dict.update(cases.REGISTRY, saved)
    assert counter.frame_count == 3


def test_a_metaclass_with_its_own_call_is_not_built_like_a_plain_class():
    class Counting(type):
        made = 0

        def __call__(cls, *args):
            Counting.made += 1
            return super().__call__(*args)

    class Thing(metaclass=Counting):
        def __init__(self, x):
            self.x = x

    def fn(x):
        return Thing(x + 1).x * 2

    compiled = fj.compile(fn, backend="eager")
    torch.testing.assert_close(compiled(torch.ones(2)), fn(torch.ones(2)))
    assert Counting.made == 2  # the metaclass __call__ ran once per call (side effect kept)


def test_equality_of_dict_subclass_objects_compares_contents_not_identity():
    import cases_user_classes as cases

    def fn(x):
        a, b, c = cases.Settings(a=1), cases.Settings(a=1), cases.Settings(a=2)
        return x + (a == b) + 2 * (a != c) + 4 * (a == {"a": 1}) + 8 * (cases.REGISTRY == {})

    compiled = fj.compile(fn, backend="eager")
    x = torch.zeros(1)
    torch.testing.assert_close(compiled(x), fn(x))
    torch.testing.assert_close(compiled(x), fn(x))
