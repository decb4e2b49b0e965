"""Weak references in the frame: input refs called, refs made in the frame, proxies."""

from __future__ import annotations

import gc
import weakref

import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


def referent_or_not(x_weak, y):
    x = x_weak()
    if x is not None:
        return torch.sin(y) + x
    return torch.cos(y)


def test_input_weakref_called_and_referent_dies():
    cnt = CompileCounter()
    compiled = fj.compile(referent_or_not, backend=cnt, fullgraph=True)
    weight, y = torch.randn(4), torch.randn(4)
    x_weak = weakref.ref(weight)
    torch.testing.assert_close(compiled(x_weak, y), referent_or_not(x_weak, y))
    del weight
    gc.collect()
    torch.testing.assert_close(compiled(x_weak, y), torch.cos(y))  # recompiled: None now
    assert cnt.frame_count == 2


def test_input_weakref_identity_against_another_input():
    def fn(x_weak, weight, y):
        if x_weak is not None and x_weak() is not weight:
            return torch.sin(y)
        return torch.cos(y)

    compiled = fj.compile(fn, backend="eager", fullgraph=True)
    weight, other, y = torch.randn(4), torch.randn(4), torch.randn(4)
    x_weak = weakref.ref(weight)
    torch.testing.assert_close(compiled(x_weak, weight, y), torch.cos(y))
    torch.testing.assert_close(compiled(x_weak, other, y), torch.sin(y))


def test_weakref_made_in_frame_called_and_returned():
    def fn(x, y):
        t = x * 2
        x_weak = weakref.ref(x)
        t_weak = weakref.ref(t)
        return x_weak() * y, t_weak, t

    cnt = CompileCounter()
    x, y = torch.randn(4), torch.randn(4)
    out, t_weak, t = fj.compile(fn, backend=cnt, fullgraph=True)(x, y)
    torch.testing.assert_close(out, x * y)
    assert t_weak() is t
    assert cnt.frame_count == 1


def test_weakref_proxy_attribute():
    class Trainer:
        def __init__(self, x):
            self.foo = x

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.trainer = None

        def forward(self):
            return self.trainer.foo + 1

    model, trainer = Model(), Trainer(torch.randn(4))
    model.trainer = weakref.proxy(trainer)
    compiled = fj.compile(model, backend="eager", fullgraph=True)
    torch.testing.assert_close(compiled(), trainer.foo + 1)
    trainer.foo = torch.randn(4)  # read again through the proxy at the next call
    torch.testing.assert_close(compiled(), trainer.foo + 1)
