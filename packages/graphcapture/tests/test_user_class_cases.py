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
