"""Regressions found by benchmarks/fuzz_kernels.py (generated programs against eager)."""

from __future__ import annotations

import pytest
import torch
from conftest import compile_and_check
from torch.fx.experimental.proxy_tensor import make_fx

from framejit.inductor_lite import compile_fx


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_var_std_of_huge_values_accumulate_in_double_like_eager(dtype):
    """eager's CPU var/std run Welford in double: the squares of 3e20 stay finite and std
    comes out finite; a float accumulation overflowed to inf (fuzz seed 323)."""
    x = torch.tensor([[3e20, 1.0, -2.0, 3e20], [1.0, 2.0, 3.0, 4.0]]).to(dtype)

    def fn(x):
        return x.std([1], correction=0), x.var(1), x.std(), x.std(1, keepdim=True) + 1

    compile_and_check(fn, [x], gm=make_fx(fn)(x))


@pytest.mark.parametrize(
    "write",
    [
        lambda v: v[::2].zero_(),
        lambda v: v.fill_(3.0),
        lambda v: v.masked_fill_(torch.tensor([True, False, True]), 1.0),
        lambda v: v.index_fill_(1, torch.tensor([0, 2]), 4.0),
    ],
    ids=["zero_", "fill_", "masked_fill_", "index_fill_"],
)
@pytest.mark.filterwarnings("ignore:Use of .* on expanded tensors")
def test_fill_through_an_expanded_view_of_an_input_runs_eagerly(write):
    """Functionalization replays a fill of an expand's stride-0 dim as a sum of changes: x[0]
    became -2 * x[0] (fuzz seed 387).  Such graphs run eagerly, with the reason."""

    def fn(x):
        write(x.expand(2, 3))
        return x + 1

    x, y = torch.tensor([[2.5], [7.0]]), torch.tensor([[2.5], [7.0]])
    expected = fn(x)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [y.clone()])
    torch.testing.assert_close(compiled(y), expected)
    torch.testing.assert_close(y, x)
    assert "share memory" in compiled.fallback_reason


def test_fill_of_a_non_overlapping_view_still_compiles():
    def fn(x):
        x.expand(2, 3).clone()[0].zero_()
        x[0].fill_(1.0)
        return x * 2

    x = torch.tensor([[2.5], [7.0]])
    compile_and_check(fn, [x.clone()], lowered=True)  # fills are idempotent: reruns agree


@pytest.mark.parametrize("src", [torch.float64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("dst", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_float_to_integer_out_of_range_converts_like_eager(src, dst):
    """inf // 1 -> int64 -> float came back inf: GCC folds (double)(int64_t)x into trunc(x)
    (an out-of-range static_cast is undefined).  The kernel converts the way eager does on
    x86: NaN and out-of-range give the minimum, types under 32 bits wrap through int32
    (fuzz seed 5041: log1p(clamp(v.to(int64))) took the wrong sign)."""
    values = [float("inf"), -float("inf"), float("nan"), 1e20, 3e9, 7e4, 300.0, -1.0, -129.5, 2.7]
    x = torch.tensor(values, dtype=src)

    def fn(x):
        return x.to(dst) * 1.0, (x + 0).to(dst) + 1, torch.log1p(x.to(dst).clamp(-0.5, 8))

    compile_and_check(fn, [x], gm=make_fx(fn)(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_an_operand_of_another_dtype_is_rounded_to_a_reduced_common_dtype_first(dtype):
    """eager casts a float32 0-dim operand of a float16 op to float16 before computing in
    float: fmod(0, 1e-8) is fmod(0, 0), nan; the kernel read 1e-8 as float (fuzz seed 12109)."""
    x0 = torch.tensor(1e-8)
    v = torch.tensor([0.0, 1.0, 3.0], dtype=dtype)
    ints = torch.tensor([2049, 3, -7])

    def fn(x0, v, ints):
        return torch.fmod(v, x0), v + x0 * 0 + 1e-3, v * 0 + ints

    compile_and_check(fn, [x0, v, ints], gm=make_fx(fn)(x0, v, ints))
