"""Lowerings that create or gather data: full/arange, cat, constant_pad_nd, embedding,
index and gather.

Data-dependent indices go through `ops.indirect_index`, which bounds-checks in the kernel:
an out-of-range index makes the wrapper rerun the graph eagerly, so eager raises its own
IndexError.  Branches (cat, pad) load with clamped indices, so both sides of a select are
always in bounds.
"""

from __future__ import annotations

from typing import Any

import sympy
import torch

from .ir import Pointwise, TensorValue
from .lowering import (
    FLOAT_DTYPES,
    SUPPORTED_DTYPES,
    LoweringContext,
    NotLowered,
    aten,
    broadcast_loader,
    check_scalar,
    is_tensor,
    register,
)
from .ops import ops

INDEX_DTYPES = {torch.int64, torch.int32}


def _constant_value(ctx: LoweringContext, value: Any) -> Pointwise:
    check_scalar(value)
    dtype = ctx.out_dtype
    if dtype not in SUPPORTED_DTYPES:
        raise NotLowered(f"dtype {dtype}")
    return Pointwise(ctx.out_size, dtype, lambda index: ops.constant(value, dtype), 1, 0)


@register(aten.full.default)
def full(ctx: LoweringContext, size: Any, value: Any, **kwargs: Any) -> Any:
    return _constant_value(ctx, value)


@register(aten.scalar_tensor.default)
def scalar_tensor(ctx: LoweringContext, value: Any, **kwargs: Any) -> Any:
    return _constant_value(ctx, value)


@register(aten.full_like.default)
def full_like(ctx: LoweringContext, x: Any, value: Any, **kwargs: Any) -> Any:
    return _constant_value(ctx, value)


@register(aten.zeros.default)
def zeros(ctx: LoweringContext, size: Any, **kwargs: Any) -> Any:
    return _constant_value(ctx, 0)


@register(aten.ones.default)
def ones(ctx: LoweringContext, size: Any, **kwargs: Any) -> Any:
    return _constant_value(ctx, 1)


@register(aten.arange.start_step, aten.arange.start, aten.arange.default)
def arange(ctx: LoweringContext, *args: Any, **kwargs: Any) -> Any:
    if ctx.node.target is aten.arange.default:
        start, step = 0, 1
    else:
        start = args[0]
        step = args[2] if len(args) > 2 else 1
    dtype = ctx.out_dtype
    if dtype not in SUPPORTED_DTYPES or dtype == torch.bool:
        raise NotLowered(f"arange of {dtype}")
    for value in (start, step):
        check_scalar(value)
    compute = torch.float64 if dtype in FLOAT_DTYPES else torch.int64

    def inner(index: list[Any]) -> Any:
        position = ops.to_dtype(ops.index_expr(index[0], torch.int64), compute)
        value = ops.add(
            ops.constant(start, compute), ops.mul(position, ops.constant(step, compute))
        )
        return ops.to_dtype(value, dtype)

    return Pointwise(ctx.out_size, dtype, inner, 3, 0)


def _clamp(expr: Any, low: int, high: int) -> Any:
    return sympy.Max(low, sympy.Min(expr, high))


@register(aten.cat.default)
def cat(ctx: LoweringContext, tensors: list[Any], dim: int = 0) -> Any:
    out_size = ctx.out_size
    out_dtype = ctx.out_dtype
    if out_dtype not in SUPPORTED_DTYPES:
        raise NotLowered(f"cat of {out_dtype}")
    if not out_size:
        raise NotLowered("cat of 0-dim")
    dim %= len(out_size)
    parts: list[tuple[int, int, Any]] = []  # (start, length, loader)
    start = 0
    for value in tensors:
        if not is_tensor(value):
            raise NotLowered("cat of a non-tensor")
        if len(value.size) != len(out_size) or value.size[dim] == 0:
            continue  # legacy empty tensors take no part
        parts.append((start, value.size[dim], value.make_loader()))
        start += value.size[dim]
    if not parts or len(parts) > 16:
        raise NotLowered("cat with no or too many non-empty inputs")

    def inner(index: list[Any]) -> Any:
        result = None
        for part_start, length, load in reversed(parts):
            local = list(index)
            local[dim] = _clamp(index[dim] - part_start, 0, length - 1)
            value = ops.to_dtype(load(local), out_dtype)
            if result is None:
                result = value
            else:
                inside = ops.lt(
                    ops.index_expr(index[dim], torch.int64),
                    ops.constant(part_start + length, torch.int64),
                )
                result = ops.where(inside, value, result)
        return result

    ops_count = sum(getattr(t, "op_count", 0) for t in tensors if isinstance(t, TensorValue))
    return Pointwise(out_size, out_dtype, inner, ops_count + 2 * len(parts), len(parts))


@register(aten.constant_pad_nd.default)
def constant_pad_nd(ctx: LoweringContext, x: Any, pad: list[int], value: Any = 0) -> Any:
    check_scalar(value)
    out_dtype = ctx.out_dtype
    if out_dtype not in SUPPORTED_DTYPES:
        raise NotLowered(f"pad of {out_dtype}")
    load = x.make_loader()
    in_size = x.size
    ndim = len(in_size)
    lows = {ndim - 1 - k: pad[2 * k] for k in range(len(pad) // 2)}

    def inner(index: list[Any]) -> Any:
        source = list(index)
        inside = None
        for d, low in lows.items():
            position = index[d] - low
            source[d] = _clamp(position, 0, max(in_size[d] - 1, 0))
            expr = ops.index_expr(position, torch.int64)
            check = ops.logical_and(
                ops.ge(expr, ops.constant(0, torch.int64)),
                ops.lt(expr, ops.constant(in_size[d], torch.int64)),
            )
            inside = check if inside is None else ops.logical_and(inside, check)
        loaded = ops.to_dtype(load(source), out_dtype)
        if inside is None:
            return loaded
        return ops.where(inside, loaded, ops.constant(value, out_dtype))

    return Pointwise(ctx.out_size, out_dtype, inner, 4 * len(lows) + 2, 1)


def _index_loader(value: Any) -> Any:
    if not is_tensor(value) or value.dtype not in INDEX_DTYPES:
        raise NotLowered("index tensor of an unsupported dtype")
    return value.make_loader()


@register(aten.embedding.default)
def embedding(ctx: LoweringContext, weight: Any, indices: Any, *rest: Any, **kwargs: Any) -> Any:
    if len(weight.size) != 2:
        raise NotLowered("embedding with a non-2-D weight")
    load_index = _index_loader(indices)
    load_weight = weight.make_loader()
    rows = weight.size[0]
    n = len(indices.size)

    def inner(index: list[Any]) -> Any:
        row = ops.indirect_index(load_index(index[:n]), rows, False)
        return load_weight([row, index[n]])

    return Pointwise(ctx.out_size, weight.dtype, inner, 3, 2)


@register(aten.index.Tensor)
def index(ctx: LoweringContext, x: Any, indices: list[Any]) -> Any:
    tensors = [(d, t) for d, t in enumerate(indices) if t is not None]
    if len(tensors) != 1:
        raise NotLowered("index with more than one index tensor")
    dim, idx = tensors[0]
    load_index = _index_loader(idx)
    load_x = x.make_loader()
    size = x.size[dim]
    k = len(idx.size)

    def inner(out: list[Any]) -> Any:
        position = ops.indirect_index(load_index(out[dim : dim + k]), size, True)
        return load_x([*out[:dim], position, *out[dim + k :]])

    return Pointwise(ctx.out_size, x.dtype, inner, 3, 2)


@register(aten.gather.default)
def gather(ctx: LoweringContext, x: Any, dim: int, idx: Any, *, sparse_grad: bool = False) -> Any:
    if not x.size:
        raise NotLowered("gather on a 0-dim tensor")
    load_index = _index_loader(idx)
    load_x = x.make_loader()
    dim %= len(x.size)
    size = x.size[dim]

    def inner(out: list[Any]) -> Any:
        position = ops.indirect_index(load_index(out), size, False)
        source = list(out)
        source[dim] = position
        return load_x(source)

    return Pointwise(ctx.out_size, x.dtype, inner, 3, 2)


@register(aten.expand_copy.default)
def expand_copy(ctx: LoweringContext, x: Any, size: Any, **kwargs: Any) -> Any:
    load = broadcast_loader(x, ctx.out_size)
    return Pointwise(ctx.out_size, x.dtype, load, 1, 1)


@register(aten.index_select.default)
def index_select(ctx: LoweringContext, x: Any, dim: int, idx: Any) -> Any:
    if not x.size or len(idx.size) > 1:
        raise NotLowered("index_select on a 0-dim tensor or with a 0-dim index")
    load_index = _index_loader(idx)
    load_x = x.make_loader()
    dim %= len(x.size)
    size = x.size[dim]

    def inner(out: list[Any]) -> Any:
        source = list(out)
        source[dim] = ops.indirect_index(load_index([out[dim]] if idx.size else []), size, False)
        return load_x(source)

    return Pointwise(ctx.out_size, x.dtype, inner, 3, 2)
