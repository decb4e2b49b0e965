"""torch.vmap in a compiled frame: one graph node running the real vmap (fullgraph, one
graph as torch.compile), eager's values, the identity of what an in-place op hands back,
and a graph break (eager vmap, side effects once) for what the node cannot repeat."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj

LOG = []
W = torch.randn(3)


def scaled_sin(a, b):
    return (a * b).sin()


def two_outputs(a, b):
    return a + b, a.sum()


def logs(a):
    LOG.append(1)
    return a * 2


def reads_a_global_tensor(a):
    return a * W


def vmap_user_function(x, y):
    return torch.vmap(scaled_sin, in_dims=(0, None))(x, y) + 1


def vmap_lambda_out_dims(x, y):
    return torch.vmap(lambda a, b: a * b, in_dims=(1, 0), out_dims=1)(x, y)


def vmap_two_outputs(x, y):
    s, t = torch.func.vmap(two_outputs, in_dims=(0, None))(x, y)
    return s * 2, t


def vmap_torch_function(x, y):
    return torch.vmap(torch.sin)(x) + y


def vmap_in_place_is_its_operand(x, y):
    z = x.clone()
    w = torch.vmap(torch.Tensor.acos_)(z)
    return w is z, w is x, z


def _inputs():
    return torch.rand(4, 3), torch.rand(3)


@pytest.mark.parametrize("backend", ["eager", "inductor-lite"])
@pytest.mark.parametrize(
    "fn",
    [
        vmap_user_function,
        vmap_lambda_out_dims,
        vmap_two_outputs,
        vmap_torch_function,
        vmap_in_place_is_its_operand,
    ],
)
def test_vmap_is_one_node_of_the_graph(fn, backend):
    x, y = _inputs()
    if fn is vmap_lambda_out_dims:
        y = torch.rand(3, 4)
    graphs = []

    def counting(gm, example_inputs):
        graphs.append(gm)
        return fj.lookup_backend(backend)(gm, example_inputs)

    fj.reset()
    actual = fj.compile(fn, backend=counting, fullgraph=True)(x, y)
    torch.testing.assert_close(actual, fn(x, y))
    assert len(graphs) == 1


def test_vmap_returns_the_mutated_input_itself():
    def fn(x):
        return torch.vmap(torch.Tensor.acos_)(x)

    x = torch.rand(4, 2)
    expected = x.clone().acos_()
    fj.reset()
    result = fj.compile(fn, fullgraph=True)(x)
    assert result is x
    torch.testing.assert_close(x, expected)


@pytest.mark.parametrize("body", [logs, reads_a_global_tensor])
def test_vmap_of_what_the_node_cannot_repeat_breaks_the_graph(body):
    def fn(x):
        return torch.vmap(body)(x + 1) - 1

    x = torch.rand(4, 3)
    expected = fn(x)
    LOG.clear()
    fj.reset()
    torch.testing.assert_close(fj.compile(fn)(x), expected)
    assert len(LOG) == (1 if body is logs else 0)  # the function ran once, as in eager
    with pytest.raises(fj.GraphBreakInFullgraph):
        fj.reset()
        fj.compile(fn, fullgraph=True)(x)
