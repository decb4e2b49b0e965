"""The stdlib case table (cases_stdlib.py): fullgraph, equal to eager, one graph, eager's ops."""

from __future__ import annotations

import pytest
import torch
from cases_stdlib import STDLIB_CASES
from oracle import clone_args, eager_op_count, graph_op_count

from framejit import graphcapture as fj


def assert_same(actual, expected) -> None:
    """assert_close, extended to sets and to the container types the cases return."""
    assert type(actual) is type(expected)
    if isinstance(expected, (set, frozenset)):
        assert actual == expected
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        if hasattr(expected, "default_factory"):
            assert actual.default_factory is expected.default_factory
        for k in expected:
            assert_same(actual[k], expected[k])
    elif isinstance(expected, (list, tuple)) or type(expected).__name__ == "deque":
        assert len(actual) == len(expected)
        for x, y in zip(actual, expected, strict=True):
            assert_same(x, y)
    elif callable(expected) and not isinstance(expected, torch.Tensor):
        assert type(actual) is type(expected)
    elif not isinstance(expected, torch.Tensor):
        assert actual == expected
    else:
        torch.testing.assert_close(actual, expected, equal_nan=True)


def check_case_matches_eager(case, same=assert_same) -> None:
    """Run a case eagerly and compiled (fullgraph when it expects one frame): equal results by
    `same`, the expected frame count, eager's op count where the case asks, and a cache hit on
    the second call."""
    torch.manual_seed(0)
    args = case.make_args()
    expected = case.fn(*clone_args(args))
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(case.fn, backend=counter, fullgraph=case.frames == 1)
    actual = compiled(*clone_args(args))
    same(actual, expected)
    assert counter.frame_count == case.frames
    if case.check_ops:
        assert graph_op_count(counter.graphs) == eager_op_count(case.fn, *clone_args(args))
    again = compiled(*clone_args(args))
    same(again, expected)
    assert counter.frame_count == case.frames


@pytest.mark.parametrize("case", STDLIB_CASES, ids=[c.name for c in STDLIB_CASES])
def test_stdlib_case_matches_eager(case):
    check_case_matches_eager(case)
