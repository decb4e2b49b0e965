"""Lowerings of elementwise ATen ops: math, activations, comparisons, where, conversions."""

from __future__ import annotations

import math
from typing import Any

import torch

from .ir import same_device
from .lowering import (
    FLOAT_DTYPES,
    LoweringContext,
    NotLowered,
    aten,
    is_tensor,
    meta_args,
    opmath_dtype,
    pointwise,
    register,
    result_dtype,
)
from .ops import ops

# Unary ops that take floats (integer inputs are promoted to float by eager).
FLOAT_UNARY = {
    aten.exp.default: "exp",
    aten.exp2.default: "exp2",
    aten.expm1.default: "expm1",
    aten.log.default: "log",
    aten.log2.default: "log2",
    aten.log10.default: "log10",
    aten.log1p.default: "log1p",
    aten.sqrt.default: "sqrt",
    aten.rsqrt.default: "rsqrt",
    aten.sin.default: "sin",
    aten.cos.default: "cos",
    aten.tan.default: "tan",
    aten.tanh.default: "tanh",
    aten.sinh.default: "sinh",
    aten.cosh.default: "cosh",
    aten.asin.default: "asin",
    aten.acos.default: "acos",
    aten.atan.default: "atan",
    aten.asinh.default: "asinh",
    aten.acosh.default: "acosh",
    aten.atanh.default: "atanh",
    aten.erf.default: "erf",
    aten.erfc.default: "erfc",
    aten.sigmoid.default: "sigmoid",
    aten.reciprocal.default: "reciprocal",
    aten.silu.default: "silu",
}
# Unary ops defined for integers too (same dtype in and out).
SAME_DTYPE_UNARY = {
    aten.abs.default: "abs",
    aten.neg.default: "neg",
    aten.relu.default: "relu",
}
# Rounding ops are the identity on integers.
ROUNDING_UNARY = {
    aten.floor.default: "floor",
    aten.ceil.default: "ceil",
    aten.round.default: "round",
    aten.trunc.default: "trunc",
}
ARITHMETIC = {
    aten.add.Tensor: "add",
    aten.add.Scalar: "add",
    aten.sub.Tensor: "sub",
    aten.sub.Scalar: "sub",
    aten.mul.Tensor: "mul",
    aten.mul.Scalar: "mul",
    aten.maximum.default: "maximum",
    aten.minimum.default: "minimum",
}
FLOAT_BINARY = {
    aten.div.Tensor: "truediv",
    aten.div.Scalar: "truediv",
    aten.atan2.default: "atan2",
    aten.fmod.Tensor: "fmod",
    aten.fmod.Scalar: "fmod",
    aten.remainder.Tensor: "remainder",
    aten.remainder.Scalar: "remainder",
}
COMPARISONS = {
    aten.eq.Tensor: "eq",
    aten.eq.Scalar: "eq",
    aten.ne.Tensor: "ne",
    aten.ne.Scalar: "ne",
    aten.lt.Tensor: "lt",
    aten.lt.Scalar: "lt",
    aten.le.Tensor: "le",
    aten.le.Scalar: "le",
    aten.gt.Tensor: "gt",
    aten.gt.Scalar: "gt",
    aten.ge.Tensor: "ge",
    aten.ge.Scalar: "ge",
}
LOGICAL = {
    aten.logical_and.default: "logical_and",
    aten.logical_or.default: "logical_or",
    aten.logical_xor.default: "logical_xor",
}
BITWISE = {
    aten.bitwise_and.Tensor: "bitwise_and",
    aten.bitwise_and.Scalar: "bitwise_and",
    aten.bitwise_or.Tensor: "bitwise_or",
    aten.bitwise_or.Scalar: "bitwise_or",
    aten.bitwise_xor.Tensor: "bitwise_xor",
    aten.bitwise_xor.Scalar: "bitwise_xor",
}


def _require_float_out(ctx: LoweringContext) -> None:
    if ctx.out_dtype not in FLOAT_DTYPES:
        raise NotLowered(f"{ctx.node.target} with result dtype {ctx.out_dtype}")


CHEAP_FLOAT_UNARY = {"reciprocal", "sigmoid", "silu"}


def _float_unary(name: str):
    heavy = 0 if name in CHEAP_FLOAT_UNARY else 1

    def lower(ctx: LoweringContext, x: Any) -> Any:
        _require_float_out(ctx)
        return pointwise(ctx, _op(name), [x], heavy=heavy)

    return lower


def _op(name: str):
    return lambda *values: getattr(ops, name)(*values)


for _target, _name in FLOAT_UNARY.items():
    register(_target)(_float_unary(_name))


def _same_dtype_unary(name: str):
    def lower(ctx: LoweringContext, x: Any) -> Any:
        if ctx.out_dtype == torch.bool:
            raise NotLowered(f"{name} on bool")
        return pointwise(ctx, _op(name), [x])

    return lower


for _target, _name in SAME_DTYPE_UNARY.items():
    register(_target)(_same_dtype_unary(_name))


def _rounding_unary(name: str):
    def lower(ctx: LoweringContext, x: Any) -> Any:
        if ctx.out_dtype not in FLOAT_DTYPES:
            return pointwise(ctx, lambda v: v, [x])
        return pointwise(ctx, _op(name), [x])

    return lower


for _target, _name in ROUNDING_UNARY.items():
    register(_target)(_rounding_unary(_name))


def _arithmetic(name: str):
    def lower(ctx: LoweringContext, a: Any, b: Any, *, alpha: Any = None) -> Any:
        if ctx.out_dtype == torch.bool:
            raise NotLowered(f"{name} producing bool")
        compute = opmath_dtype(ctx.out_dtype)

        def fn(x: Any, y: Any) -> Any:
            if alpha is not None and alpha != 1:
                y = ops.mul(y, ops.constant(alpha, compute))
            return getattr(ops, name)(x, y)

        return pointwise(ctx, fn, [a, b])

    return lower


for _target, _name in ARITHMETIC.items():
    register(_target)(_arithmetic(_name))


def _float_binary(name: str):
    def lower(ctx: LoweringContext, a: Any, b: Any) -> Any:
        _require_float_out(ctx)
        return pointwise(ctx, _op(name), [a, b])

    return lower


for _target, _name in FLOAT_BINARY.items():
    register(_target)(_float_binary(_name))


@register(aten.div.Tensor_mode, aten.div.Scalar_mode)
def div_mode(ctx: LoweringContext, a: Any, b: Any, *, rounding_mode: str | None = None) -> Any:
    _require_float_out(ctx)
    if rounding_mode is None:
        return pointwise(ctx, ops.truediv, [a, b])
    if rounding_mode == "trunc":
        out, compute = ctx.out_dtype, opmath_dtype(ctx.out_dtype)

        def trunc_div(x: Any, y: Any) -> Any:
            # eager rounds a reduced-precision quotient to its dtype before truncating
            return ops.trunc(ops.to_dtype(ops.to_dtype(ops.truediv(x, y), out), compute))

        return pointwise(ctx, trunc_div, [a, b])
    raise NotLowered(f"div rounding_mode={rounding_mode!r}")


def _comparison(name: str):
    def lower(ctx: LoweringContext, a: Any, b: Any) -> Any:
        # eager compares in the common dtype: a Python scalar is first rounded to it
        compute = result_dtype(*meta_args(ctx)[:2])
        return pointwise(ctx, _op(name), [a, b], compute_dtype=compute)

    return lower


for _target, _name in COMPARISONS.items():
    register(_target)(_comparison(_name))


def _logical(name: str):
    def lower(ctx: LoweringContext, a: Any, b: Any) -> Any:
        return pointwise(ctx, _op(name), [a, b], compute_dtype=torch.bool)

    return lower


for _target, _name in LOGICAL.items():
    register(_target)(_logical(_name))


@register(aten.logical_not.default)
def logical_not(ctx: LoweringContext, a: Any) -> Any:
    return pointwise(ctx, ops.logical_not, [a], compute_dtype=torch.bool)


def _bitwise(name: str):
    def lower(ctx: LoweringContext, a: Any, b: Any) -> Any:
        if ctx.out_dtype in FLOAT_DTYPES:
            raise NotLowered("bitwise op on floats")
        return pointwise(ctx, _op(name), [a, b])

    return lower


for _target, _name in BITWISE.items():
    register(_target)(_bitwise(_name))


@register(aten.bitwise_not.default)
def bitwise_not(ctx: LoweringContext, a: Any) -> Any:
    if ctx.out_dtype in FLOAT_DTYPES:
        raise NotLowered("bitwise_not on floats")
    return pointwise(ctx, ops.bitwise_not, [a])


@register(aten.isnan.default, aten.isinf.default)
def isnan_isinf(ctx: LoweringContext, a: Any) -> Any:
    name = "isnan" if ctx.node.target is aten.isnan.default else "isinf"
    in_dtype = a.dtype if is_tensor(a) else torch.float64
    if in_dtype not in FLOAT_DTYPES:
        return pointwise(
            ctx, lambda v: ops.constant(False, torch.bool), [a], compute_dtype=in_dtype
        )
    return pointwise(ctx, _op(name), [a], compute_dtype=opmath_dtype(in_dtype))


@register(aten.where.self)
def where(ctx: LoweringContext, cond: Any, a: Any, b: Any) -> Any:
    if not is_tensor(cond):
        raise NotLowered("where with a scalar condition")
    return pointwise(
        ctx, ops.where, [cond, a, b], compute_dtype=ctx.out_dtype, input_dtypes=[torch.bool]
    )


@register(aten.pow.Tensor_Scalar)
def pow_tensor_scalar(ctx: LoweringContext, a: Any, exponent: Any) -> Any:
    if ctx.out_dtype not in FLOAT_DTYPES:
        raise NotLowered("integer pow")
    special = {
        0: lambda x: ops.constant(1, opmath_dtype(ctx.out_dtype)),
        1: lambda x: x,
        2: lambda x: ops.mul(x, x),
        3: lambda x: ops.mul(ops.mul(x, x), x),
        0.5: ops.sqrt,
        -0.5: ops.rsqrt,
        -1: ops.reciprocal,
        -2: lambda x: ops.reciprocal(ops.mul(x, x)),
    }
    if isinstance(exponent, bool) or not isinstance(exponent, (int, float)):
        raise NotLowered("pow with a non-numeric exponent")
    if exponent in special:
        return pointwise(ctx, special[exponent], [a])
    return pointwise(ctx, ops.pow, [a, float(exponent)])


@register(aten.pow.Tensor_Tensor)
def pow_tensor_tensor(ctx: LoweringContext, a: Any, b: Any) -> Any:
    _require_float_out(ctx)
    return pointwise(ctx, ops.pow, [a, b])


@register(aten.clamp.default)
def clamp(ctx: LoweringContext, x: Any, min: Any = None, max: Any = None) -> Any:
    if ctx.out_dtype == torch.bool:
        raise NotLowered("clamp on bool")
    for bound in (min, max):
        if bound is not None and (
            not isinstance(bound, (int, float)) or (isinstance(bound, float) and math.isnan(bound))
        ):
            raise NotLowered("clamp with a non-scalar or nan bound")

    def fn(v: Any) -> Any:
        compute = opmath_dtype(ctx.out_dtype)
        if min is not None:
            v = ops.clamp_min(v, ops.constant(min, compute))
        if max is not None:
            v = ops.clamp_max(v, ops.constant(max, compute))
        return v

    return pointwise(ctx, fn, [x])


@register(aten.clamp_min.default)
def clamp_min(ctx: LoweringContext, x: Any, bound: Any) -> Any:
    return clamp(ctx, x, bound, None)


@register(aten.clamp_max.default)
def clamp_max(ctx: LoweringContext, x: Any, bound: Any) -> Any:
    return clamp(ctx, x, None, bound)


@register(aten.hardtanh.default)
def hardtanh(ctx: LoweringContext, x: Any, min_val: float = -1.0, max_val: float = 1.0) -> Any:
    _require_float_out(ctx)
    return clamp(ctx, x, min_val, max_val)


@register(aten.leaky_relu.default)
def leaky_relu(ctx: LoweringContext, x: Any, negative_slope: float = 0.01) -> Any:
    _require_float_out(ctx)
    compute = opmath_dtype(ctx.out_dtype)
    return pointwise(
        ctx,
        lambda v: ops.where(
            ops.gt(v, ops.constant(0, compute)),
            v,
            ops.mul(v, ops.constant(negative_slope, compute)),
        ),
        [x],
    )


@register(aten.gelu.default)
def gelu(ctx: LoweringContext, x: Any, *, approximate: str = "none") -> Any:
    _require_float_out(ctx)
    name = {"none": "gelu_erf", "tanh": "gelu_tanh"}.get(approximate)
    if name is None:
        raise NotLowered(f"gelu approximate={approximate!r}")
    return pointwise(ctx, _op(name), [x])


@register(aten._to_copy.default)
def to_copy(ctx: LoweringContext, x: Any, **kwargs: Any) -> Any:
    device = kwargs.get("device")
    if device is not None and not same_device(torch.device(device), ctx.graph.device):
        raise NotLowered(f"_to_copy to {device}, kernels run on {ctx.graph.device}")
    if kwargs.get("layout") not in (None, torch.strided):
        raise NotLowered("_to_copy to another layout")
    return pointwise(ctx, lambda v: v, [x], compute_dtype=ctx.out_dtype)


@register(aten.clone.default, aten.lift_fresh_copy.default)
def clone(ctx: LoweringContext, x: Any, **kwargs: Any) -> Any:
    return pointwise(ctx, lambda v: v, [x], compute_dtype=ctx.out_dtype)


@register(aten.fill.Scalar)
def fill(ctx: LoweringContext, x: Any, value: Any) -> Any:
    return pointwise(
        ctx, lambda: ops.constant(value, ctx.out_dtype), [], compute_dtype=ctx.out_dtype
    )
