"""Compile counts under dynamic shapes, framejit beside torch.compile (the yardstick).

Each case runs the same inputs through framejit and through torch.compile (backend: a
counter, so no kernels are built) and asserts framejit compiles no more frames than
torch.compile does, matching eager on every call.
"""

from __future__ import annotations

import pytest
import torch
from test_dynamic_shapes import LENGTHS, Attention, double_rows, sized_ops, toy_example

from framejit import graphcapture as fj

torch_dynamo = pytest.importorskip("torch._dynamo")
from torch._dynamo.testing import CompileCounter  # noqa: E402


def _framejit_frames(fn, inputs, dynamic) -> int:
    fj.reset()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, dynamic=dynamic)
    for args in inputs:
        torch.testing.assert_close(compiled(*args), fn(*args))
    fj.reset()
    return counter.frame_count


def _torch_frames(fn, inputs, dynamic) -> int:
    torch_dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(fn, backend=counter, dynamic=dynamic)
    for args in inputs:
        torch.testing.assert_close(compiled(*args), fn(*args))
    torch_dynamo.reset()
    return counter.frame_count


def _attention_inputs():
    return [(torch.randn(2, t, 8),) for t in LENGTHS[:6]]  # the 20-length run: test_dynamic_shapes


def _toy_inputs():
    return [(torch.randn(t), torch.randn(t)) for t in LENGTHS]


CASES = {
    "attention-automatic": (Attention, _attention_inputs, None),
    "toy-example-automatic": (lambda: toy_example, _toy_inputs, None),
    "sizes-0-1-dynamic-true": (
        lambda: double_rows,
        lambda: [(torch.randn(n, 3),) for n in (1, 0, 5, 6, 1)],
        True,
    ),
    "branch-on-size-dynamic-true": (
        lambda: sized_ops,
        lambda: [(torch.randn(n, 4), torch.randn(n, 4)) for n in (5, 3, 7, 2, 9)],
        True,
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_compiles_no_more_frames_than_torch_compile(name):
    make_fn, make_inputs, dynamic = CASES[name]
    torch.manual_seed(0)
    fn = make_fn()
    inputs = make_inputs()
    ours = _framejit_frames(fn, inputs, dynamic)
    theirs = _torch_frames(fn, inputs, dynamic)
    assert ours <= theirs, f"{name}: framejit {ours} frames, torch.compile {theirs}"
