"""Every lowered elementwise op against eager, over dtypes and shapes (0-size, 1-size,
non-contiguous, broadcast, 0-dim).  Ops are batched into one graph per case to keep the
number of compiles small."""

from __future__ import annotations

import math

import pytest
import torch
import torch.fx
import torch.nn.functional as F

from framejit.inductor_lite import compile_fx

FLOAT_UNARY = [
    torch.exp, torch.expm1, torch.log, torch.log2, torch.log10, torch.log1p, torch.sqrt,
    torch.rsqrt, torch.sin, torch.cos, torch.tan, torch.tanh, torch.sinh, torch.cosh,
    torch.asin, torch.acos, torch.atan, torch.asinh, torch.acosh, torch.atanh, torch.erf,
    torch.erfc, torch.sigmoid, torch.reciprocal, torch.exp2, torch.abs, torch.neg, torch.relu,
    torch.floor, torch.ceil, torch.round, torch.trunc, torch.isnan, torch.isinf,
    F.silu, F.gelu, lambda x: F.gelu(x, approximate="tanh"), lambda x: F.leaky_relu(x, 0.2),
    lambda x: F.hardtanh(x, -0.5, 0.5), lambda x: torch.clamp(x, -0.3, 0.4),
    lambda x: torch.clamp(x, min=0.1), lambda x: x**2, lambda x: x**3, lambda x: x**0.5,
    lambda x: x**-1, lambda x: x**-2, lambda x: x**1.7, lambda x: x.to(torch.int64),
    lambda x: x.to(torch.bool), lambda x: x.to(torch.float64), lambda x: x.clone(),
    lambda x: F.dropout(x, 0.5, training=False), lambda x: x.to(torch.bfloat16),
]  # fmt: skip

FLOAT_BINARY = [
    torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.atan2,
    torch.fmod, torch.remainder, torch.pow, torch.eq, torch.ne, torch.lt, torch.le, torch.gt,
    torch.ge, torch.logical_and, torch.logical_or, torch.logical_xor,
    lambda a, b: torch.add(a, b, alpha=2), lambda a, b: torch.where(a > b, a, b),
    lambda a, b: a + 1.5, lambda a, b: 2 - b, lambda a, b: a * 3, lambda a, b: a / 7,
    lambda a, b: a < 0.25, lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    lambda a, b: torch.where(a > 0, a, 0.0), lambda a, b: a.masked_fill(b > 0, -1.0),
]  # fmt: skip

INT_OPS = [
    torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum, torch.eq, torch.lt,
    torch.ge, torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor, torch.div,
    lambda a, b: a + 3, lambda a, b: a * -2, lambda a, b: torch.abs(a), lambda a, b: -a,
    lambda a, b: torch.relu(a), lambda a, b: torch.where(a > b, a, b),
    lambda a, b: a.to(torch.float32), lambda a, b: torch.clamp(a, -2, 3), lambda a, b: a / 2,
    lambda a, b: torch.bitwise_not(a), lambda a, b: a > 1.5, lambda a, b: a * 0.5,
]  # fmt: skip

BOOL_OPS = [
    torch.logical_and, torch.logical_or, torch.logical_xor, torch.eq, torch.ne,
    torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor,
    lambda a, b: torch.logical_not(a), lambda a, b: torch.bitwise_not(a),
    lambda a, b: torch.where(a, 1.0, 2.0), lambda a, b: a.to(torch.float32),
    lambda a, b: a.to(torch.int64) + b, lambda a, b: a & True,
]  # fmt: skip


def unary_graph(x):
    return [op(x) for op in FLOAT_UNARY]


def _gelu_erf(v: float) -> float:
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def _gelu_tanh(v: float) -> float:
    inner = math.sqrt(2 / math.pi) * (v + 0.044715 * v**3) if math.isfinite(v) else v
    return 0.5 * v * (1 + math.tanh(inner))


# Eager's vectorised gelu is CPU-dependent at +-inf (AVX-512 returns nan at +inf, AVX2 inf):
# at non-finite inputs these ops are compared with a scalar reference computed in Python.
CPU_DEPENDENT_AT_INF = {
    FLOAT_UNARY.index(F.gelu): _gelu_erf,
    FLOAT_UNARY.index(F.gelu) + 1: _gelu_tanh,
}


def _reference_at_non_finite(x: torch.Tensor, expected: list[torch.Tensor]) -> list[torch.Tensor]:
    mask = ~torch.isfinite(x)
    if not mask.any():
        return expected
    fixed = list(expected)
    for position, scalar in CPU_DEPENDENT_AT_INF.items():
        value = fixed[position].clone()
        points = x[mask].double().tolist()
        value[mask] = torch.tensor([scalar(v) for v in points], dtype=torch.float64).to(x.dtype)
        fixed[position] = value
    return fixed


def binary_graph(a, b):
    return [op(a, b) for op in FLOAT_BINARY]


def int_graph(a, b):
    return [op(a, b) for op in INT_OPS]


def bool_graph(a, b):
    return [op(a, b) for op in BOOL_OPS]


def make(shape, dtype, layout):
    if dtype == torch.bool:
        base = torch.randn(shape) > 0
    elif dtype.is_floating_point:
        base = (torch.randn(shape) * 2).to(dtype)
        if base.numel() > 2:
            base.view(-1)[0] = float("nan")
            base.view(-1)[1] = float("inf")
    else:
        base = torch.randint(-5, 6, shape, dtype=dtype)
    if layout == "transposed" and base.dim() == 2:
        return base.t().contiguous().t()
    if layout == "sliced" and base.dim() == 2:
        return torch.cat([base, base], dim=1)[:, ::2]
    return base


SHAPES = [
    ((5, 7), (5, 7), "contiguous"),
    ((5, 7), (5, 7), "transposed"),
    ((6, 4), (6, 4), "sliced"),
    ((5, 7), (7,), "contiguous"),  # broadcast
    ((0, 3), (0, 3), "contiguous"),
    ((1,), (1,), "contiguous"),
    ((), (), "contiguous"),
    ((3, 1, 4), (1, 5, 4), "contiguous"),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shapes", SHAPES[:5] + SHAPES[6:7], ids=str)
def test_float_unary(dtype, shapes):
    x = make(shapes[0], dtype, shapes[2])
    gm = torch.fx.symbolic_trace(unary_graph)
    compiled = compile_fx(gm, [x])
    got = compiled(x)
    expected = _reference_at_non_finite(x, gm(x))
    torch.testing.assert_close(got, expected, equal_nan=True)
    assert compiled.kernel_count >= 1 and not compiled.fallback_reasons


def test_gelu_at_inf_matches_a_cpu_independent_reference():
    x = torch.tensor([math.inf, -math.inf, math.nan, 0.0, 3.0] * 7)
    gm = torch.fx.symbolic_trace(lambda v: (F.gelu(v), F.gelu(v, approximate="tanh")))
    got = compile_fx(gm, [x])(x)
    for value, scalar in zip(got, (_gelu_erf, _gelu_tanh), strict=True):
        reference = torch.tensor([scalar(v) for v in x.double().tolist()]).float()
        torch.testing.assert_close(value, reference, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_float_binary(check, dtype, shapes):
    a = make(shapes[0], dtype, shapes[2])
    b = make(shapes[1], dtype, shapes[2])
    check(binary_graph, [a, b])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
@pytest.mark.parametrize("shapes", [SHAPES[0], SHAPES[1], SHAPES[3], SHAPES[4], SHAPES[6]], ids=str)
def test_int_ops(check, dtype, shapes):
    a = make(shapes[0], dtype, shapes[2])
    b = make(shapes[1], dtype, shapes[2])
    check(int_graph, [a, b])


@pytest.mark.parametrize("shapes", [SHAPES[0], SHAPES[1], SHAPES[3], SHAPES[6]], ids=str)
def test_bool_ops(check, shapes):
    a = make(shapes[0], torch.bool, shapes[2])
    b = make(shapes[1], torch.bool, shapes[2])
    check(bool_graph, [a, b])


def test_mixed_dtype_promotion(check):
    def promote(i, f, d, b):
        return [i + f, f * d, i / 3, b + i, f > i, d - b.to(torch.float64), i * 2.5, f + 1]

    args = [
        torch.randint(-3, 4, (4, 5)),
        torch.randn(4, 5),
        torch.randn(5, dtype=torch.float64),
        torch.randn(4, 5) > 0,
    ]
    check(promote, args)


def test_bf16_trunc_division_rounds_the_quotient_first(check):
    torch.manual_seed(0)
    a = (torch.randn(4096) * 2).bfloat16()
    b = (torch.randn(4096) * 2).bfloat16()
    check(lambda x, y: torch.div(x, y, rounding_mode="trunc"), [a, b])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_float16_computes_in_float32_like_eager(check, layout):
    x = make((5, 7), torch.float16, layout)
    y = make((5, 7), torch.float16, layout)
    gm = torch.fx.symbolic_trace(unary_graph)
    compiled = compile_fx(gm, [x])
    torch.testing.assert_close(compiled(x), _reference_at_non_finite(x, gm(x)), equal_nan=True)
    assert compiled.kernel_count >= 1 and not compiled.fallback_reasons
    check(binary_graph, [x, y])
    check(
        lambda a, b: [a.to(torch.bfloat16) * b.to(torch.bfloat16), (a + b).to(torch.float32)],
        [x, y],
    )
