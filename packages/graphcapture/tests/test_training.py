"""Training through compiled graphs: gradients equal eager's, optimizer steps stay in sync."""

from __future__ import annotations

import copy

import torch
from torch import nn

from framejit import graphcapture as fj


def loss_fn(x, w, b):
    y = torch.tanh(x @ w + b)
    return (y**2).mean()


def test_gradients_of_requires_grad_inputs():
    torch.manual_seed(0)
    x = torch.randn(4, 3)
    w = torch.randn(3, 2, requires_grad=True)
    b = torch.randn(2, requires_grad=True)
    w2 = w.detach().clone().requires_grad_()
    b2 = b.detach().clone().requires_grad_()
    loss_fn(x, w, b).backward()
    compiled = fj.compile(loss_fn, backend="eager")
    loss = compiled(x, w2, b2)
    assert loss.requires_grad
    loss.backward()
    torch.testing.assert_close(w2.grad, w.grad)
    torch.testing.assert_close(b2.grad, b.grad)


def loss_with_break(x, w):
    h = (x * w).sin()
    print("break in the middle of training code")
    return (h * w).sum()


def test_gradients_across_a_graph_break():
    x = torch.randn(5)
    w = torch.randn(5, requires_grad=True)
    w2 = w.detach().clone().requires_grad_()
    loss_with_break(x, w).backward()
    fj.compile(loss_with_break, backend="eager")(x, w2).backward()
    torch.testing.assert_close(w2.grad, w.grad)


def test_training_loop_matches_eager():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    reference = copy.deepcopy(model)
    compiled = fj.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(5):
        x, target = torch.randn(8, 6), torch.randn(8, 1)
        for net, optimizer in ((compiled, opt), (reference, ref_opt)):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(net(x), target)
            loss.backward()
            optimizer.step()
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p, q)


def test_no_grad_inside_compiled_code():
    def fn(x, w):
        with torch.no_grad():
            scale = (w * 2).sum()
        return x * w * scale

    x = torch.randn(3)
    w = torch.randn(3, requires_grad=True)
    w2 = w.detach().clone().requires_grad_()
    fn(x, w).sum().backward()
    out = fj.compile(fn, backend="eager")(x, w2)
    out.sum().backward()
    torch.testing.assert_close(w2.grad, w.grad)
    assert torch.is_grad_enabled()
