"""Stores to tensor attributes in the frame (`.data =`, `.grad =` / `._grad =`, own attrs)."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


def set_data_then_add(x, y):
    x.data = y
    x.add_(1)
    return x


def set_data_then_rebind_source(x, y):
    x.data = y
    y.data = torch.zeros([0])  # x keeps y's old storage
    return x * 2


def set_data_keeps_identity(x, y):
    z = x
    x.data = y
    y.data = torch.zeros([0])
    return torch.tensor(x is z)


def set_data_chain_returns_input(x, y):
    x.data = y
    y.data = torch.zeros([0])
    return x


def set_data_twice_on_target(x, y):
    x.data = y
    x.data = torch.ones(6)
    return x * 2


def set_data_cycle(x, y):
    x.data = y
    y.data = x
    return x + y


def _aot_backend(gm, example_inputs):
    """AOTAutograd with no compiler: it applies the inputs' set_ mutations after the graph."""
    from torch._functorch.aot_autograd import aot_module_simplified

    return aot_module_simplified(
        gm, example_inputs, fw_compiler=lambda g, _: g, keep_inference_input_mutations=True
    )


@pytest.mark.parametrize(
    "fn, requires_grad, graphs",
    [
        (set_data_then_add, False, 1),
        # chained swaps: x's placeholder is moved before y's, as AOTAutograd applies the
        # inputs' set_ mutations in placeholder order (else x got y's new, empty storage)
        (set_data_then_rebind_source, True, 1),
        (set_data_keeps_identity, True, 1),
        (set_data_chain_returns_input, True, 1),
        # other chains stay a break
        (set_data_twice_on_target, True, 2),
        (set_data_cycle, True, 2),
    ],
)
@pytest.mark.parametrize("backend", ["count", "aot"])
def test_set_data_on_inputs(fn, requires_grad, graphs, backend):
    if backend == "aot" and fn is set_data_then_add:
        pytest.skip("AOTAutograd refuses an in-place op on an input whose storage was swapped")
    cnt = CompileCounter()

    def counted(gm, example_inputs):
        compiled = cnt(gm, example_inputs)
        return _aot_backend(gm, example_inputs) if backend == "aot" else compiled

    compiled = fj.compile(fn, backend=counted, fullgraph=graphs == 1)
    for _ in range(3):
        inputs = [torch.arange(6.0, requires_grad=requires_grad) for _ in range(2)]
        copies = [t.detach().clone().requires_grad_(requires_grad) for t in inputs]
        expected = fn(*inputs)
        got = compiled(*copies)
        torch.testing.assert_close(got, expected)
        for a, b in zip(inputs, copies, strict=True):
            torch.testing.assert_close(a, b)
            if backend == "count":  # (AOTAutograd's set_ epilogue bumps the version)
                assert a._version == b._version  # `.data =` bumps no version, as eager
        if requires_grad:
            grad = torch.randn(6)
            inputs[0].backward(grad)
            copies[0].backward(grad.clone())
            torch.testing.assert_close(inputs[0].grad, copies[0].grad)
    assert cnt.frame_count == graphs


def test_set_data_other_dtype_breaks():
    def fn(x, y):
        x.data = y.to(dtype=torch.bfloat16)

    x1, x2 = torch.tensor([]), torch.tensor([])
    fn(x1, torch.arange(3.0))
    fj.compile(fn, backend="eager")(x2, torch.arange(3.0))
    assert x2.dtype == torch.bfloat16
    torch.testing.assert_close(x1, x2)


def grad_and_underscore_grad(x, y):
    x._grad = y + 1
    y.grad = x + 2
    return x.grad.data, y._grad.data


def test_grad_stores_on_inputs_are_one_slot():
    cnt = CompileCounter()
    x0, y0 = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
    x1, y1 = (t.detach().clone().requires_grad_() for t in (x0, y0))
    expected = grad_and_underscore_grad(x0, y0)
    got = fj.compile(grad_and_underscore_grad, backend=cnt, fullgraph=True)(x1, y1)
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(x1.grad, x0.grad)
    torch.testing.assert_close(y1.grad, y0.grad)
    assert cnt.frame_count == 1


def test_grad_store_eager_rejects_raises_as_eager():
    def fn(x):
        x.grad = torch.ones(3)
        return x + 1

    with pytest.raises(RuntimeError, match="size"):
        fj.compile(fn, backend="eager")(torch.ones(2, requires_grad=True))


def test_grad_cleared_on_input():
    def fn(x):
        before = x.grad
        x.grad = None
        return x * 2, before, x.grad

    x = torch.ones(3, requires_grad=True)
    x.grad = torch.full((3,), 5.0)
    out, before, after = fj.compile(fn, backend="eager", fullgraph=True)(x)
    torch.testing.assert_close(out, x * 2)
    assert after is None and x.grad is None
    torch.testing.assert_close(before, torch.full((3,), 5.0))
