"""Every function of the case table: compiled equals eager, with the expected graphs and ops."""

from __future__ import annotations

import pytest
import torch
from cases import CASES
from oracle import clone_args, eager_op_count, graph_op_count

from framejit import graphcapture as fj


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_matches_eager(case):
    torch.manual_seed(0)
    args = case.make_args()
    expected = case.fn(*clone_args(args))
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(case.fn, backend=counter)
    actual = compiled(*clone_args(args))
    torch.testing.assert_close(actual, expected, equal_nan=True)
    assert counter.frame_count == case.frames
    if case.check_ops:
        assert graph_op_count(counter.graphs) == eager_op_count(case.fn, *clone_args(args))
    # a second call hits the cache: no new graphs, same answer
    again = compiled(*clone_args(args))
    torch.testing.assert_close(again, expected, equal_nan=True)
    assert counter.frame_count == case.frames
