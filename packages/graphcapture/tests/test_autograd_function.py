"""torch.autograd.Function subclasses: `F.apply` inlined where no backward can run.

Inference, torch.no_grad, or inputs that need no grad: `forward` is traced under no_grad in
the caller's graph (fullgraph, one graph as torch.compile).  An input that requires grad
with grad mode on is a graph break (the custom backward is not traced): the values and the
gradients are eager's.
"""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj

W = torch.randn(3, requires_grad=True)  # read inside forward: no grad flows through it


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + x

    @staticmethod
    def backward(ctx, grad):
        return grad * 5  # not autograd's answer: shows whether the custom backward ran


class Recorder(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x)
        ctx.k = 2
        return x, y * ctx.k + W.sum(), ctx.needs_input_grad

    @staticmethod
    def backward(ctx, gx, gy, _):
        return gx, gy


class InPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


class WithSetupContext(torch.autograd.Function):
    @staticmethod
    def forward(x, scale):
        return x * scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def f_double(x):
    return Double.apply(x) + 1, Double().apply(x * 2)  # F().apply: the deprecated spelling


def f_recorder(x, y):
    a, b, needs = Recorder.apply(x, y)
    return a, a is x, b, b.requires_grad, needs


def f_in_place(x):
    y = x + 0
    return InPlace.apply(y) is y, y


def f_setup(x):
    return WithSetupContext.apply(x, 3.0)


class _HoldsApply(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = Double.apply  # a bound classmethod kept on the module, called in forward

    def forward(self, x):
        return self.fn(x) * 2


HOLDS_APPLY = _HoldsApply()


def f_stored_apply(x):
    return HOLDS_APPLY(x)


CASES = {
    "stored_apply": (f_stored_apply, lambda: [torch.randn(3)]),
    "double": (f_double, lambda: [torch.randn(3)]),
    "recorder": (f_recorder, lambda: [torch.randn(3), torch.randn(3)]),
    "in_place": (f_in_place, lambda: [torch.randn(3)]),
    "setup_context": (f_setup, lambda: [torch.randn(3)]),
}


def _same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            _same(a, e)
    elif isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected)
        assert actual.requires_grad == expected.requires_grad
    else:
        assert actual == expected


@pytest.mark.filterwarnings("ignore:.*should not be instantiated:DeprecationWarning")
@pytest.mark.parametrize("grad", ["inference", "no_grad"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_apply_inlined_in_one_graph(name, grad):
    fn, make = CASES[name]
    args = make()
    if grad == "no_grad":  # an input that requires grad, under no_grad: no backward either
        args[0].requires_grad_(True)
    context = torch.no_grad if grad == "no_grad" else torch.enable_grad
    with context():
        expected = fn(*[a.detach().requires_grad_(a.requires_grad) for a in args])
        counter = fj.testing.CompileCounter()
        actual = fj.compile(fn, backend=counter, fullgraph=True)(*args)
        _same(actual, expected)
        assert counter.frame_count == 1  # torch.compile: 1 as well


def test_input_that_requires_grad_breaks_and_runs_the_custom_backward():
    def fn(x):
        return (Double.apply(x * 2) * 3).sum()

    x = torch.randn(3, requires_grad=True)
    fn(x).backward()
    expected = x.grad.clone()
    x.grad = None
    fj.compile(fn)(x).backward()
    torch.testing.assert_close(x.grad, expected)  # 2 * 5 * 3: the custom backward ran
