"""torch.cond: a tensor predicate traced into two branch subgraphs and one `cond` node.

Each function runs under fj.compile beside eager (which runs torch.cond's own path): the
result matches, and a function whose branches both trace is one graph.  A branch that
writes outside itself, mutates or returns an input is a graph break (eager torch.cond then
compiles the call itself), and nothing of the branch ran while tracing.
"""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj

OUTER = torch.tensor([0.5, -1.5])
LINEAR = torch.nn.Linear(2, 2)


def simple(pred, x):
    return torch.cond(pred, lambda t: t.sin(), lambda t: t.cos(), (x,))


def nested(pred, x):
    def inner_true(t):
        return t * 10

    def inner_false(t):
        return t * -1

    def true_fn(p, t):
        return t.sin()

    def false_fn(p, t):
        return t + torch.cond(p, inner_true, inner_false, [t])

    return torch.cond(pred, true_fn, false_fn, [pred, x]) + 1


def closes_over_tensors_and_a_module(pred, x):
    def true_fn(t):
        return LINEAR(t) + OUTER

    def false_fn(t):
        return t * OUTER.sum()

    return torch.cond(pred, true_fn, false_fn, [x])


def two_results(pred, x):
    def true_fn(t):
        return t + 1, t * 2

    def false_fn(t):
        return t - 1, t / 2

    a, b = torch.cond(pred, true_fn, false_fn, (x,))
    return a * b


def constant_predicate(pred, x):
    return torch.cond(x.shape[0] > 1, lambda t: t + 1, lambda t: t - 1, (x,)) * pred


ONE_GRAPH = [simple, nested, closes_over_tensors_and_a_module, two_results, constant_predicate]


def _counting():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return graphs, backend


@pytest.mark.parametrize("fn", ONE_GRAPH, ids=[f.__name__ for f in ONE_GRAPH])
@pytest.mark.parametrize("pred", [True, False])
def test_one_graph_matches_eager(fn, pred):
    graphs, backend = _counting()
    compiled = fj.compile(fn, backend=backend, fullgraph=True)
    x = torch.tensor([0.25, 0.75])
    torch.testing.assert_close(compiled(torch.tensor(pred), x), fn(torch.tensor(pred), x))
    assert len(graphs) == 1


def test_both_branches_in_one_graph_serve_either_predicate():
    graphs, backend = _counting()
    compiled = fj.compile(nested, backend=backend, fullgraph=True)
    x = torch.tensor([0.25, 0.75])
    for pred in (True, False, True):
        torch.testing.assert_close(compiled(torch.tensor(pred), x), nested(torch.tensor(pred), x))
    assert len(graphs) == 1


LOG: list = []


def writes_a_list(pred, x):
    def true_fn(t):
        LOG.append(1)
        return t + 1

    return torch.cond(pred, true_fn, lambda t: t - 1, (x,))


def returns_its_input(pred, x):
    return torch.cond(pred, lambda t: t, lambda t: t - 1, (x,))


def mutates_its_input(pred, x):
    def true_fn(t):
        t.add_(1)
        return t * 2

    return torch.cond(pred, true_fn, lambda t: t - 1, (x,))


REFUSED = [
    (writes_a_list, "writes outside itself"),
    (returns_its_input, "returns one of its inputs"),
    (mutates_its_input, "mutates one of its inputs"),
]


@pytest.mark.parametrize("fn,reason", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_untraceable_branches_are_a_graph_break(fn, reason):
    x = torch.tensor([0.25, 0.75])
    LOG.clear()
    with pytest.raises(fj.GraphBreakInFullgraph, match=reason):
        fj.compile(fn, backend="eager", fullgraph=True)(torch.tensor(True), x)
    assert LOG == [] and x.tolist() == [0.25, 0.75]  # traced, never run
