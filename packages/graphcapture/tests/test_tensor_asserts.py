"""`assert <tensor>, "message"`: a run-time check in the graph that raises eager's exception,
or the graph break it was where the graph raising part-way would differ from eager.

PYTEST_DONT_REWRITE: the functions traced here hold plain `assert`s (pytest's rewrite of
them would be other bytecode)."""

from __future__ import annotations

import importlib.util
import logging

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


def with_message(x):
    y = x + 1
    assert (y > 0).all(), "negative"
    return y * 2


def without_message(x):
    assert x.sum()
    return x * 2


def many_elements(x):
    assert x > 0, "ambiguous"  # bool() of a tensor of 3: eager's RuntimeError
    return x * 2


def _raises_inside(y):
    assert (y > 0).all(), "negative"
    return y


def caught_in_caller(x):
    y = x + torch.rand(3) * 0  # a random op: the graph cannot be rerun from the start
    try:
        _raises_inside(y)
        z = 1
    except AssertionError:
        z = 2
    return y * z


def caught_here(x):
    y = x + torch.rand(3) * 0
    try:
        assert (y > 0).all(), "negative"
        z = 1
    except AssertionError:
        z = 2
    return y * z


def under_no_grad(x):
    with torch.no_grad():
        assert (x > 0).all()
        y = x * 2
    return y


def after_in_place(x):
    y = x.clone()
    x.add_(1)  # a backend applies the input mutation at the graph's end
    assert (y > 0).all(), "negative"
    return y


def after_side_effect(x, log):
    log.append(1)  # replayed after the graph: the raise would skip it
    assert (x > 0).all(), "negative"
    return x * 2


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # the same exception type and message as eager
        return (type(e), str(e))


# (fn, whether the check goes in the graph: one graph, no break)
ASSERTS = [
    (with_message, True),
    (without_message, True),
    (many_elements, True),
    (caught_in_caller, False),
    (caught_here, False),
    (under_no_grad, False),
    (after_in_place, False),
]


@pytest.mark.parametrize("fn,in_graph", ASSERTS, ids=[f.__name__ for f, _ in ASSERTS])
def test_assert_on_tensor_matches_eager(fn, in_graph):
    counter = CompileCounter()
    compiled = fj.compile(fn, backend=counter)
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    inputs = (torch.ones(3), -5 * torch.ones(3), torch.zeros(3), torch.tensor([1.0, -1.0, 1.0]))
    for i, x in enumerate(inputs):
        expected, actual = _outcome(fn, x.clone()), _outcome(compiled, x.clone())
        if isinstance(expected, tuple):
            assert actual == expected
        else:
            torch.testing.assert_close(actual, expected)
        if i == 0:
            unsubscribe()
            breaks = [b.reason for r in records for b in r.graph_breaks]
            if in_graph:
                assert (counter.frame_count, breaks) == (1, [])
            else:
                assert breaks == ["data-dependent branch: if on a Tensor"]
    assert torch.is_grad_enabled()


def test_assert_after_a_side_effect_keeps_it():
    compiled = fj.compile(after_side_effect, backend="eager")
    log = []
    with pytest.raises(AssertionError, match="negative"):
        compiled(-torch.ones(3), log)
    assert log == [1]


def test_assert_in_one_graph_under_fullgraph():
    compiled = fj.compile(with_message, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(3)), with_message(torch.ones(3)))
    with pytest.raises(AssertionError, match="negative"):
        compiled(-torch.ones(3))


@pytest.mark.skipif(
    importlib.util.find_spec("framejit.inductor_lite") is None,
    reason="framejit-inductor-lite is not installed (graphcapture's own session)",
)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_assert_compiles_with_inductor_lite(caplog, requires_grad):
    compiled = fj.compile(with_message, backend="inductor-lite", fullgraph=True)
    x = torch.ones(3, requires_grad=requires_grad)
    with caplog.at_level(logging.WARNING):
        torch.testing.assert_close(compiled(x), with_message(x))
    assert not [r for r in caplog.records if "running the graph eagerly" in r.getMessage()]
    with pytest.raises(AssertionError, match="negative"):
        compiled(-torch.ones(3, requires_grad=requires_grad))


def test_torch_assert_of_a_folded_truth_leaves_no_node():
    """torch._assert(x.shape[0] == 3, ...) is checked while tracing (shapes are guarded);
    as torch.compile, the graph gets no node for it."""

    def fn(x):
        torch._assert(x.shape[0] == 3, "bad")
        return x + 1

    counter = CompileCounter()
    torch.testing.assert_close(fj.compile(fn, backend=counter)(torch.ones(3)), fn(torch.ones(3)))
    assert (counter.frame_count, counter.op_count) == (1, 1)
