"""Test setup: pipeline errors raise instead of falling back, and compiled kernels persist in
a disk cache shared between runs (so reruns compile nothing)."""

from __future__ import annotations

import os

os.environ.setdefault("FRAMEJIT_INDUCTOR_STRICT", "1")

import pytest
import torch
import torch.fx

from framejit.inductor_lite import compile_fx


def compile_and_check(fn, args, *, lowered=True, atol=None, rtol=None, gm=None):
    """Compile fn (traced with symbolic_trace unless gm is given), compare with eager."""
    gm = gm if gm is not None else torch.fx.symbolic_trace(fn)
    compiled = compile_fx(gm, list(args))
    expected = gm(*args)
    got = compiled(*args)
    kwargs = {"equal_nan": True}
    if atol is not None:
        kwargs.update(atol=atol, rtol=rtol)
    torch.testing.assert_close(got, expected, **kwargs)
    if lowered:
        assert compiled.kernel_count >= 1, compiled.source_code
        assert not compiled.fallback_reasons, compiled.fallback_reasons
    return compiled, got, expected


@pytest.fixture(autouse=True)
def _seeded():
    """Random inputs are the same on every run: a bf16 rounding tie must not make a test flaky."""
    torch.manual_seed(0)


@pytest.fixture
def check():
    return compile_and_check
