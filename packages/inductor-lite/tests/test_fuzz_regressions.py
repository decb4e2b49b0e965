"""Regressions found by benchmarks/fuzz_kernels.py (generated programs against eager)."""

from __future__ import annotations

import pytest
import torch
from conftest import compile_and_check
from torch.fx.experimental.proxy_tensor import make_fx


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_var_std_of_huge_values_accumulate_in_double_like_eager(dtype):
    """eager's CPU var/std run Welford in double: the squares of 3e20 stay finite and std
    comes out finite; a float accumulation overflowed to inf (fuzz seed 323)."""
    x = torch.tensor([[3e20, 1.0, -2.0, 3e20], [1.0, 2.0, 3.0, 4.0]]).to(dtype)

    def fn(x):
        return x.std([1], correction=0), x.var(1), x.std(), x.std(1, keepdim=True) + 1

    compile_and_check(fn, [x], gm=make_fx(fn)(x))
