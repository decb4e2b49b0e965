"""A graph calling a custom torch.autograd.Function (graphcapture puts `F.apply` in the graph
as one node when an input requires grad): AOTAutograd's joint trace runs the real apply, so
the compiled backward is the Function's own backward, not the derivative of its forward ops
(a straight-through round has zero derivative; a scaled gradient is not the product rule)."""

from __future__ import annotations

import torch
import torch.fx

from framejit.inductor_lite import compile_fx


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad):
        return grad


class ScaledProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_backward(x, y)
        ctx.k = k
        return x * y

    @staticmethod
    def backward(ctx, grad):
        x, y = ctx.saved_tensors
        gx = grad * y * ctx.k if ctx.needs_input_grad[0] else None
        gy = grad * x * 7 if ctx.needs_input_grad[1] else None
        return gx, gy, None


class SinAndArgmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        index = x.argmax()
        ctx.mark_non_differentiable(index)
        return x.sin(), index

    @staticmethod
    def backward(ctx, grad, _):
        return grad * 3


def ste_apply(x):
    return RoundSTE.apply(x)


def scaled_apply(x, y, k):
    return ScaledProduct.apply(x, y, k)


def sin_argmax_apply(x):
    return SinAndArgmax.apply(x)


for _name in ("ste_apply", "scaled_apply", "sin_argmax_apply"):
    torch.fx.wrap(_name)  # one call_function node each, as graphcapture records the call


def program(x, y):
    a = ste_apply(x * 1.7)
    b = scaled_apply(a, y, 2.5)
    s, i = sin_argmax_apply(b)
    return (s * 2).sum() + i, i


def test_compiled_backward_is_the_functions_own():
    gm = torch.fx.symbolic_trace(program)
    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=True)
    compiled = compile_fx(gm, [x, y])
    got = compiled(x, y)
    got[0].backward()
    assert not compiled.fallback_reasons, compiled.fallback_reasons
    rx, ry = (t.detach().clone().requires_grad_() for t in (x, y))
    expected = program(rx, ry)
    expected[0].backward()
    torch.testing.assert_close(got, expected)
    torch.testing.assert_close(x.grad, rx.grad)
    torch.testing.assert_close(y.grad, ry.grad)
    assert rx.grad.abs().sum() > 0  # round's own derivative would give zeros
