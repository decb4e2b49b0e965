"""torch.autograd.Function subclasses: `F.apply` inlined where no backward can run.

Inference, torch.no_grad, or inputs that need no grad: `forward` is traced under no_grad in
the caller's graph (fullgraph, one graph as torch.compile).  An input that requires grad
with grad mode on: the call is one `F.apply` node of the graph (the custom backward runs,
one graph as torch.compile), or a graph break where its forward writes outside its ctx;
the values and the gradients are eager's.
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


def test_input_that_requires_grad_runs_the_custom_backward_in_one_graph():
    def fn(x):
        return (Double.apply(x * 2) * 3).sum()

    x = torch.randn(3, requires_grad=True)
    fn(x).backward()
    expected = x.grad.clone()
    x.grad = None
    counter = fj.testing.CompileCounter()
    fj.compile(fn, backend=counter, fullgraph=True)(x).backward()
    torch.testing.assert_close(x.grad, expected)  # 2 * 5 * 3: the custom backward ran
    assert counter.frame_count == 1


class RoundSTE(torch.autograd.Function):  # straight-through: round's derivative is zero
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


def f_training(x, y):
    a = RoundSTE.apply(x * 1.7)
    b = ScaledProduct.apply(a, y, 2.5)
    s, i = SinAndArgmax.apply(b)
    return (s * 2).sum() + i, i, s.requires_grad


def _eager_and_compiled(fn, args, backend, fullgraph=True):
    ref = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    expected = fn(*ref)
    expected[0].backward()
    actual = fj.compile(fn, backend=backend, fullgraph=fullgraph)(*args)
    actual[0].backward()
    _same(actual, expected)
    for a, r in zip(args, ref, strict=True):
        if r.requires_grad:
            torch.testing.assert_close(a.grad, r.grad)


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_functions_in_a_training_graph_follow_their_backward(needs):
    counter = fj.testing.CompileCounter()
    args = [torch.randn(5, requires_grad=n) for n in needs]
    _eager_and_compiled(f_training, args, counter)
    assert counter.frame_count == 1  # torch.compile: 1


EVENTS: list = []


class Logs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        EVENTS.append("forward")  # a write outside ctx: it would happen twice in the graph
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return grad * 5


def test_forward_writing_outside_its_ctx_breaks_and_writes_once():
    def fn(x):
        return (Logs.apply(x + 1) * 3).sum()

    x = torch.randn(3, requires_grad=True)
    EVENTS.clear()
    _eager_and_compiled(lambda x: (fn(x),), [x], "eager", fullgraph=False)
    assert EVENTS == ["forward", "forward"]  # once for eager, once compiled


def test_requires_grad_change_retraces():
    def fn(x):
        return RoundSTE.apply(x * 1.7).sum() * 2

    compiled = fj.compile(fn)
    torch.testing.assert_close(compiled(torch.ones(3)), fn(torch.ones(3)))
    x = torch.randn(3, requires_grad=True)
    compiled(x).backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 3.4))
