"""The captured graph reads as torch.compile's: its inputs named after their sources
(L['x'] -> L_x_, the node l_x_) and each node carrying the user line it came from, so the
readable code (print_readable, the graph_code log) groups the ops by line as torch's does."""

from __future__ import annotations

import functools

import pytest
import torch
import torch._dynamo
import torch._dynamo.testing
from torch._dynamo.testing import normalize_gm

from framejit import graphcapture as fj


def _printed(compile_fn, fn, args):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(normalize_gm(gm.print_readable(print_output=False)))
        return gm.forward

    compile_fn(fn, backend)(*args)
    return graphs


def _mul3(x, y, z):
    return x * y * z


def _add(x, y):
    return x + y


def one_line(x, y):
    return x * y + 1


def lines_and_helpers(x, y):
    a = x * 2
    b = _add(a, y)
    return torch.relu(b) - _mul3(x, 4, 5)


def partial_keywords(x):
    p = functools.partial(_mul3, x, 4, z=x)
    return torch.mul(p(), x)


def similar_names(x, x_):
    return x + x_


def stored_in_a_cell(x):
    y = x.sin()

    def inner():
        return y + 1

    return inner() * 2


@pytest.mark.parametrize(
    ("fn", "nargs"),
    [
        (one_line, 2),
        (lines_and_helpers, 2),
        (partial_keywords, 1),
        (similar_names, 2),
        (stored_in_a_cell, 1),
    ],
)
def test_graph_prints_like_torch_compile(fn, nargs):
    args = [torch.randn(2, 2) for _ in range(nargs)]
    torch._dynamo.reset()
    expected = _printed(
        lambda f, b: torch.compile(f, backend=b, fullgraph=True, dynamic=False), fn, args
    )
    fj.reset()
    actual = _printed(
        lambda f, b: fj.compile(f, backend=b, fullgraph=True, dynamic=False), fn, args
    )
    assert actual == expected


def test_nodes_carry_their_source_line():
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    fj.reset()
    fj.compile(lines_and_helpers, backend=backend, fullgraph=True)(torch.ones(2), torch.ones(2))
    (gm,) = graphs
    traces = [n.stack_trace for n in gm.graph.nodes if n.op == "call_function"]
    assert all(t and __file__ in t for t in traces)
    assert any("return x + y" in t for t in traces)  # an inlined helper's own line


def _doubled(self):  # a helper whose parameter is called `self`, as Tensor methods' are
    self = self * 2
    return self + 1


class _WithHelper(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        return _doubled(x) + self.lin(x)


def test_a_local_named_self_does_not_name_a_node():
    # the forward reads its parameters through `self`: a node called so would shadow it
    model, x = _WithHelper(), torch.randn(2, 3)
    fj.reset()
    torch.testing.assert_close(fj.compile(model, fullgraph=True)(x), model(x))
