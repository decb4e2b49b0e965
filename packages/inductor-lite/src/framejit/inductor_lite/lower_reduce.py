"""Lowerings of reductions and the normalizations built from them (softmax, layer_norm, var).

Every reduction becomes a `ComputedBuffer` with a `ReductionBody`; its pointwise producers
are inlined into the body and its epilogues are fused by the scheduler.  var/std use two
passes (mean, then the sum of squared deviations), both fused into one kernel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from .ir import BufferView, Pointwise, ReductionBody, TensorValue
from .loop_body import trace
from .lowering import (
    FLOAT_DTYPES,
    LoweringContext,
    NotLowered,
    aten,
    opmath_dtype,
    pointwise,
    register,
)
from .ops import ops
from .sizes import MIN_SIZE, hint, hint_prod, is_symbolic


def normalize_dims(dims: Any, ndim: int) -> list[int]:
    if dims is None:
        dims = list(range(ndim))
    elif isinstance(dims, int):
        dims = [dims]
    dims = list(dims)
    if ndim == 0:
        if any(d not in (0, -1) for d in dims):
            raise NotLowered("bad reduction dim for a 0-dim tensor")
        return []
    if not dims:
        return list(range(ndim))
    return sorted({d % ndim for d in dims})


# A reduction that keeps the innermost dim reads memory with a stride in its inner loop
# (the generator loops over kept elements outside): past these sizes ATen's kernel, which
# vectorizes along the kept dim, wins by far (the weight grads of a training step) — unless
# it is a float sum over the leading dims and the generator renders column kernels (rows
# in parallel, the kept dims in the vectorized inner loop, fused with their producers).
COLUMN_REDUCTION_MIN = 256  # reduced elements
COLUMN_KEPT_MIN = 16  # kept innermost elements


def _strided_column_reduction(size: Sequence[Any], reduced: set[int]) -> bool:
    if not size or (len(size) - 1) in reduced or hint(size[-1]) < COLUMN_KEPT_MIN:
        return False
    return hint_prod([size[d] for d in reduced]) >= COLUMN_REDUCTION_MIN


def make_reduction(
    ctx: LoweringContext,
    x: TensorValue,
    dims: Sequence[int],
    reduction_type: str,
    out_dtype: torch.dtype,
    value_dtype: torch.dtype,
    keepdim: bool,
) -> BufferView:
    size = x.size
    reduced = set(dims)
    strided = _strided_column_reduction(size, reduced)
    if strided and not (
        ctx.graph.column_reductions
        and not is_symbolic(size)  # column kernels are generated for static sizes only
        and reduction_type == "sum"
        and value_dtype in (torch.float32, torch.float64)
        and list(dims) == list(range(len(dims)))
    ):
        raise NotLowered("reduction along outer dims only (a strided inner loop): ATen is faster")
    out_size = (
        tuple(1 if i in reduced else n for i, n in enumerate(size))
        if keepdim
        else tuple(n for i, n in enumerate(size) if i not in reduced)
    )
    reduction_ranges = tuple(size[d] for d in dims)
    loader = x.make_loader()
    kept = [i for i in range(len(size)) if i not in reduced]

    def inner(index: list[Any], rindex: list[Any]) -> Any:
        full: list[Any] = [0] * len(size)
        source = index if not keepdim else [index[i] for i in kept]
        for position, value in zip(kept, source, strict=True):
            full[position] = value
        for position, value in zip(dims, rindex, strict=True):
            full[position] = value
        return ops.to_dtype(loader(full), value_dtype)

    loop = trace(inner, out_size, ctx.graph.dtype_of, reduction_ranges, value_dtype)
    columns = len(size) - len(dims) if strided else 0
    body = ReductionBody(out_size, reduction_ranges, reduction_type, loop, value_dtype, columns)
    return ctx.graph.add_computed(out_size, out_dtype, body)


def _count(count: Any, dtype: torch.dtype) -> Any:
    """A number of elements as a value: a literal, or the size expression computed."""
    if is_symbolic(count):
        return ops.index_expr(count, dtype)
    return ops.constant(count, dtype)


def _div_by(
    ctx: LoweringContext,
    value: Any,
    count: Any,
    out_dtype: torch.dtype,
    compute: torch.dtype | None = None,
) -> Pointwise:
    compute = compute or opmath_dtype(out_dtype)
    return pointwise(
        ctx,
        lambda v: ops.truediv(v, _count(count, compute)),
        [value],
        compute_dtype=compute,
        out_dtype=out_dtype,
        out_size=value.size,
    )


@register(aten.sum.dim_IntList, aten.sum.default)
def sum_(
    ctx: LoweringContext, x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    out = ctx.out_dtype
    return make_reduction(
        ctx, x, normalize_dims(dim, len(x.size)), "sum", out, opmath_dtype(out), keepdim
    )


@register(aten.prod.default, aten.prod.dim_int)
def prod(
    ctx: LoweringContext, x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    out = ctx.out_dtype
    return make_reduction(
        ctx, x, normalize_dims(dim, len(x.size)), "prod", out, opmath_dtype(out), keepdim
    )


@register(aten.mean.dim, aten.mean.default)
def mean(
    ctx: LoweringContext, x: Any, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Any:
    out = ctx.out_dtype
    if out not in FLOAT_DTYPES:
        raise NotLowered("mean with a non-float result")
    dims = normalize_dims(dim, len(x.size))
    compute = opmath_dtype(out)
    total = make_reduction(ctx, x, dims, "sum", compute, compute, keepdim)
    return _div_by(ctx, total, math.prod(x.size[d] for d in dims), out)


def _minmax(reduction_type: str):
    def lower(ctx: LoweringContext, x: Any, dim: Any = (), keepdim: bool = False) -> Any:
        if ctx.out_dtype == torch.bool:
            raise NotLowered("amax/amin of bool")
        return make_reduction(
            ctx, x, normalize_dims(dim, len(x.size)), reduction_type, ctx.out_dtype,
            opmath_dtype(ctx.out_dtype), keepdim,
        )  # fmt: skip

    return lower


register(aten.amax.default)(_minmax("max"))
register(aten.amin.default)(_minmax("min"))


def _arg(reduction_type: str):
    def lower(ctx: LoweringContext, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        if x.dtype == torch.bool:
            raise NotLowered("argmax/argmin of bool")
        dims = normalize_dims(dim, len(x.size))
        if dim is None and keepdim:
            raise NotLowered("argmax with dim=None, keepdim=True")
        return make_reduction(
            ctx, x, dims, reduction_type, torch.int64, opmath_dtype(x.dtype), keepdim
        )

    return lower


register(aten.argmax.default)(_arg("argmax"))
register(aten.argmin.default)(_arg("argmin"))


def _anyall(reduction_type: str):
    def lower(ctx: LoweringContext, x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        if ctx.out_dtype != torch.bool:
            raise NotLowered(f"{reduction_type} producing {ctx.out_dtype}")
        return make_reduction(
            ctx,
            x,
            normalize_dims(dim, len(x.size)),
            reduction_type,
            torch.bool,
            torch.bool,
            keepdim,
        )

    return lower


for _name, _targets in {
    "any": (aten.any.default, aten.any.dim, aten.any.dims),
    "all": (aten.all.default, aten.all.dim, aten.all.dims),
}.items():
    register(*_targets)(_anyall(_name))


def _mean_and_var(
    ctx: LoweringContext,
    x: Any,
    dims: list[int],
    correction: float,
    keepdim: bool,
    out: torch.dtype,
    compute: torch.dtype | None = None,
) -> tuple[Pointwise, Pointwise]:
    """Two-pass mean and variance, both keepdim-shaped internally."""
    compute = compute or opmath_dtype(out)
    count = math.prod(x.size[d] for d in dims)
    total = make_reduction(ctx, x, dims, "sum", compute, compute, True)
    mean_kept = _div_by(ctx, total, count, compute)
    centered = pointwise(
        ctx, lambda a, m: ops.mul(ops.sub(a, m), ops.sub(a, m)), [x, mean_kept],
        compute_dtype=compute, out_dtype=compute, out_size=x.size,
    )  # fmt: skip
    squares = make_reduction(ctx, centered, dims, "sum", compute, compute, keepdim)
    if is_symbolic(count):
        if correction != int(correction) or correction > MIN_SIZE:
            raise NotLowered("a correction that may exceed a symbolic count")
        divisor = count - int(correction)
    else:
        divisor = max(count - correction, 0)
    var = _div_by(ctx, squares, divisor, out, compute)
    if not keepdim:
        mean_value = _div_by(
            ctx, make_reduction(ctx, x, dims, "sum", compute, compute, False), count, out
        )
    else:
        mean_value = _div_by(ctx, total, count, out)
    return mean_value, var


def _var_compute(ctx: LoweringContext) -> torch.dtype:
    """eager's CPU var/std accumulate in double (Welford over double, every float dtype):
    squares of |x| > 1.8e19 stay finite."""
    if ctx.meta.device.type == "cpu":
        return torch.float64
    return opmath_dtype(ctx.out_dtype)


@register(aten.var.correction, aten.std.correction)
def var(
    ctx: LoweringContext, x: Any, dim: Any = None, *, correction: Any = None, keepdim: bool = False
) -> Any:
    if ctx.out_dtype not in FLOAT_DTYPES:
        raise NotLowered("var of non-float")
    correction = 1 if correction is None else correction
    compute = _var_compute(ctx)
    is_std = ctx.node.target is aten.std.correction
    dims = normalize_dims(dim, len(x.size))
    out = compute if is_std else ctx.out_dtype
    value = _mean_and_var(ctx, x, dims, correction, keepdim, out, compute)[1]
    if not is_std:
        return value
    return pointwise(
        ctx, ops.sqrt, [value], compute_dtype=compute, out_dtype=ctx.out_dtype,
        out_size=value.size,
    )  # fmt: skip


# var_mean stays in ATen: eager computes it with Welford, whose mean of a row holding inf
# is nan (inf - inf), which a two-pass mean does not reproduce.


def _softmax_parts(
    ctx: LoweringContext, x: Any, dim: int, out: torch.dtype, keep_exps: bool = False
):
    compute = opmath_dtype(out)
    dims = normalize_dims(dim, len(x.size))
    peak = make_reduction(ctx, x, dims, "max", compute, compute, True)
    shifted = pointwise(
        ctx, ops.sub, [x, peak], compute_dtype=compute, out_dtype=compute, out_size=x.size
    )
    exps = pointwise(
        ctx, ops.exp, [shifted], compute_dtype=compute, out_dtype=compute, out_size=x.size
    )
    if keep_exps:  # computed once, kept in a per-row block for the sum and the scaling
        exps = ctx.realize(exps)
    total = make_reduction(ctx, exps, dims, "sum", compute, compute, True)
    return compute, shifted, exps, total


@register(aten._softmax.default)
def softmax(ctx: LoweringContext, x: Any, dim: int, half_to_float: bool) -> Any:
    if ctx.out_dtype not in FLOAT_DTYPES or half_to_float:
        raise NotLowered("softmax of non-float or half_to_float")
    compute, _, exps, total = _softmax_parts(ctx, x, dim, ctx.out_dtype, keep_exps=True)
    # as eager: scale by the reciprocal of the sum
    return pointwise(
        ctx, lambda e, t: ops.mul(e, ops.reciprocal(t)), [exps, total], compute_dtype=compute
    )


@register(aten._log_softmax.default)
def log_softmax(ctx: LoweringContext, x: Any, dim: int, half_to_float: bool) -> Any:
    if ctx.out_dtype not in FLOAT_DTYPES or half_to_float:
        raise NotLowered("log_softmax of non-float or half_to_float")
    compute, shifted, _, total = _softmax_parts(ctx, x, dim, ctx.out_dtype)
    return pointwise(
        ctx, lambda s, t: ops.sub(s, ops.log(t)), [shifted, total], compute_dtype=compute
    )


@register(aten.native_layer_norm.default)
def layer_norm(
    ctx: LoweringContext,
    x: Any,
    normalized_shape: Sequence[int],
    weight: Any,
    bias: Any,
    eps: float,
) -> Any:
    out = ctx.meta[0].dtype
    stat_dtype = ctx.meta[1].dtype
    if out not in FLOAT_DTYPES:
        raise NotLowered("layer_norm of non-float")
    compute = opmath_dtype(out)
    dims = list(range(len(x.size) - len(normalized_shape), len(x.size)))
    mean_value, var_value = _mean_and_var(ctx, x, dims, 0, True, compute)
    rstd = pointwise(
        ctx, lambda v: ops.rsqrt(ops.add(v, ops.constant(eps, compute))), [var_value],
        compute_dtype=compute, out_dtype=compute, out_size=var_value.size,
    )  # fmt: skip
    inputs: list[Any] = [x, mean_value, rstd]
    if weight is not None:
        inputs.append(weight)
    if bias is not None:
        inputs.append(bias)

    def normalize(a: Any, m: Any, r: Any, *affine: Any) -> Any:
        result = ops.mul(ops.sub(a, m), r)
        if weight is not None:
            result = ops.mul(result, affine[0])
        if bias is not None:
            result = ops.add(result, affine[-1])
        return result

    result = pointwise(
        ctx, normalize, inputs, compute_dtype=compute, out_dtype=out, out_size=x.size
    )
    stats_size = ctx.graph.sizes.exprs(ctx.meta[1].shape)

    def as_stat(v: Any) -> Pointwise:
        return pointwise(
            ctx, lambda a: a, [v], compute_dtype=compute, out_dtype=stat_dtype, out_size=stats_size
        )

    return (result, as_stat(mean_value), as_stat(rstd))
