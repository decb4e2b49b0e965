"""View ops as index remappings: strided windows on buffers, index maps on pointwise values.

On a realized buffer the view is computed by running the op on a meta tensor with the same
strides, so every view op torch knows is exact.  On an unrealized pointwise value the view
becomes an affine map of indices when it is one (permute, expand, slice, select, squeeze,
splitting reshapes); otherwise the value is realized first.
"""

from __future__ import annotations

import contextlib
from typing import Any

import sympy
import torch

from .ir import BufferView, Pointwise, contiguous_strides
from .lowering import LoweringContext, NotLowered, aten, register
from .sizes import SymbolicUnsupported, is_symbolic, known_eq

VIEW_OPS = [
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.permute.default,
    aten.expand.default,
    aten.unsqueeze.default,
    aten.squeeze.default,
    aten.squeeze.dim,
    aten.squeeze.dims,
    aten.slice.Tensor,
    aten.select.int,
    aten.transpose.int,
    aten.t.default,
    aten.alias.default,
    aten.detach.default,
    aten.diagonal.default,
    aten.unfold.default,
]


def _meta_like(
    ctx: LoweringContext,
    size: tuple[Any, ...],
    stride: tuple[Any, ...],
    offset: Any,
    dtype: torch.dtype,
) -> torch.Tensor:
    """A tensor with this layout that computes nothing: a meta tensor, or for symbolic sizes
    a fake tensor of the capture's ShapeEnv, so views come out as size expressions."""
    if is_symbolic((*size, *stride, offset)):
        sizes, mode = ctx.graph.sizes, ctx.graph.fake_mode
        if mode is None:
            raise SymbolicUnsupported("symbolic sizes without a fake mode")
        with mode:
            return torch.empty_strided(
                [sizes.symint(n) for n in size], [sizes.symint(s) for s in stride], dtype=dtype
            ).as_strided(
                [sizes.symint(n) for n in size],
                [sizes.symint(s) for s in stride],
                sizes.symint(offset),
            )
    extent = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True) if n > 0)
    storage = torch.empty(max(extent, 1), dtype=dtype, device="meta")
    return storage.as_strided(size, stride, offset)


def _symbolic_args(ctx: LoweringContext, value: Any) -> Any:
    """Size expressions among a view op's arguments, as SymInts of the capture's ShapeEnv."""
    if isinstance(value, (list, tuple)):
        return type(value)(_symbolic_args(ctx, v) for v in value)
    if isinstance(value, sympy.Basic):
        return ctx.graph.sizes.symint(value)
    return value


def _apply_meta(
    ctx: LoweringContext, base: torch.Tensor, rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> torch.Tensor:
    target = ctx.node.target
    if target is aten.detach.default:
        target = aten.alias.default
    mode = getattr(base, "fake_mode", None)
    with mode if mode is not None else contextlib.nullcontext():
        out = target(base, *_symbolic_args(ctx, rest), **_symbolic_args(ctx, kwargs))
    if not isinstance(out, torch.Tensor):
        raise NotLowered("view op returned a non-tensor")
    return out


def _layout(ctx: LoweringContext, out: torch.Tensor) -> tuple[Any, Any, Any]:
    sizes = ctx.graph.sizes
    return sizes.exprs(out.shape), sizes.exprs(out.stride()), sizes.expr(out.storage_offset())


def view_of_buffer(
    ctx: LoweringContext, view: BufferView, rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> BufferView:
    base = _meta_like(ctx, view.size, view.stride, view.offset, view.dtype)
    out = _apply_meta(ctx, base, rest, kwargs)
    return BufferView(view.buffer, *_layout(ctx, out))


def affine_index_map(
    in_size: tuple[int, ...], out_size: tuple[int, ...], out_stride: tuple[int, ...], offset: int
):
    """Express a view of a contiguous tensor as in_index = f(out_index), or None if not affine."""
    cstrides = contiguous_strides(in_size)
    dims = [i for i, n in enumerate(in_size) if n > 1]
    start = [0] * len(in_size)
    for i in dims:
        start[i] = (offset // cstrides[i]) % in_size[i]
    if sum(start[i] * cstrides[i] for i in dims) != offset:
        return None
    coeffs: list[tuple[int, int, int]] = []  # (out dim, in dim, coefficient)
    reach = list(start)
    for j, (n, s) in enumerate(zip(out_size, out_stride, strict=True)):
        if n == 1 or s == 0:
            continue
        owner = None
        for i in sorted(dims, key=lambda d: -cstrides[d]):
            if s % cstrides[i] == 0:
                owner = i
                break
        if owner is None:
            return None
        coeff = s // cstrides[owner]
        coeffs.append((j, owner, coeff))
        reach[owner] += coeff * (n - 1)
    if any(reach[i] >= max(in_size[i], 1) for i in range(len(in_size))):
        return None

    def remap(index: list[Any]) -> list[Any]:
        result: list[Any] = [sympy.Integer(v) for v in start]
        for j, i, coeff in coeffs:
            result[i] = result[i] + coeff * index[j]
        return result

    return remap


def view_of_pointwise(
    ctx: LoweringContext, value: Pointwise, rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> Pointwise | None:
    if is_symbolic(value.size) or is_symbolic((rest, tuple(kwargs.values()))):
        # the index map below is integer arithmetic; dim moves and broadcasts are maps
        # whatever the sizes, anything else is realized, then viewed
        return symbolic_view_of_pointwise(ctx, value, rest)
    base = _meta_like(ctx, value.size, contiguous_strides(value.size), 0, value.dtype)
    out = _apply_meta(ctx, base, rest, kwargs)
    remap = affine_index_map(
        value.size, tuple(out.shape), tuple(out.stride()), out.storage_offset()
    )
    if remap is None:
        return None
    inner = value.inner_fn
    return Pointwise(
        tuple(out.shape),
        value.dtype,
        lambda index: inner(remap(index)),
        value.op_count,
        value.read_count,
        value.heavy,
    )


def _dim_order(ctx: LoweringContext, ndim: int, rest: tuple[Any, ...]) -> list[int] | None:
    """For a view that only reorders, adds or drops size-1 dims or broadcasts: for each
    output dim, the input dim it reads (None: a new or broadcast dim, read at 0)."""
    target = ctx.node.target
    if target in (aten.permute.default,):
        return [d % ndim for d in rest[0]] if ndim else None
    if target is aten.transpose.int:
        order = list(range(ndim))
        a, b = rest[0] % ndim, rest[1] % ndim
        order[a], order[b] = order[b], order[a]
        return order
    if target is aten.t.default and ndim == 2:
        return [1, 0]
    if target in (aten.alias.default, aten.detach.default):
        return list(range(ndim))
    if target is aten.unsqueeze.default:
        dim = rest[0] % (ndim + 1)
        return [*range(dim), None, *range(dim, ndim)]
    return None


def symbolic_view_of_pointwise(
    ctx: LoweringContext, value: Pointwise, rest: tuple[Any, ...]
) -> Pointwise | None:
    """Views of an unrealized value over symbolic sizes that move dims, add size-1 dims or
    broadcast (expand) are index maps; None for anything else (it is realized instead)."""
    out_size = ctx.out_size
    ndim = len(value.size)
    if ctx.node.target is aten.expand.default:
        lead = len(out_size) - ndim
        if lead < 0:
            return None
        source: list[int | None] = [None] * lead
        for i, n in enumerate(value.size):
            if n == 1 and out_size[lead + i] != 1:
                source.append(None)  # broadcast: read at 0
            elif known_eq(n, out_size[lead + i]):
                source.append(i)
            else:
                return None
    else:
        order = _dim_order(ctx, ndim, rest)
        if order is None or len(order) != len(out_size):
            return None
        source = order
    used = [i for i in source if i is not None]
    if len(used) != len(set(used)) or any(
        n != 1 and i not in used for i, n in enumerate(value.size)
    ):
        return None
    if not all(known_eq(out_size[j], value.size[i]) for j, i in enumerate(source) if i is not None):
        return None
    inner = value.inner_fn

    def remap(index: list[Any]) -> list[Any]:
        result: list[Any] = [sympy.Integer(0)] * ndim
        for j, i in enumerate(source):
            if i is not None:
                result[i] = index[j]
        return result

    return Pointwise(
        tuple(out_size),
        value.dtype,
        lambda index: inner(remap(index)),
        value.op_count,
        value.read_count,
        value.heavy,
    )


def lower_view(ctx: LoweringContext, x: Any, *rest: Any, **kwargs: Any) -> Any:
    if isinstance(x, Pointwise):
        mapped = view_of_pointwise(ctx, x, rest, kwargs)
        if mapped is not None:
            return mapped
        x = ctx.realize(x)
    if not isinstance(x, BufferView):
        raise NotLowered("view of a non-tensor")
    return view_of_buffer(ctx, x, rest, kwargs)


for _target in VIEW_OPS:
    register(_target)(lower_view)

MULTI_VIEW_OPS = [aten.split.Tensor, aten.split_with_sizes.default, aten.unbind.int]


def lower_multi_view(ctx: LoweringContext, x: Any, *rest: Any, **kwargs: Any) -> Any:
    """Ops returning several views (split, unbind): one strided window or index map each."""
    if isinstance(x, Pointwise) and is_symbolic(x.size):
        x = ctx.realize(x)
    if isinstance(x, Pointwise):
        base = _meta_like(ctx, x.size, contiguous_strides(x.size), 0, x.dtype)
        pieces = _apply_meta_multi(ctx, base, rest, kwargs)
        mapped = [
            affine_index_map(x.size, tuple(p.shape), tuple(p.stride()), p.storage_offset())
            for p in pieces
        ]
        if all(m is not None for m in mapped):
            inner = x.inner_fn
            return [
                Pointwise(
                    tuple(p.shape),
                    x.dtype,
                    lambda index, m=m: inner(m(index)),
                    x.op_count,
                    x.read_count,
                )
                for p, m in zip(pieces, mapped, strict=True)
            ]
        x = ctx.realize(x)
    if not isinstance(x, BufferView):
        raise NotLowered("view of a non-tensor")
    base = _meta_like(ctx, x.size, x.stride, x.offset, x.dtype)
    return [
        BufferView(x.buffer, *_layout(ctx, p)) for p in _apply_meta_multi(ctx, base, rest, kwargs)
    ]


def _apply_meta_multi(
    ctx: LoweringContext, base: torch.Tensor, rest: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[torch.Tensor]:
    mode = getattr(base, "fake_mode", None)
    with mode if mode is not None else contextlib.nullcontext():
        out = ctx.node.target(base, *_symbolic_args(ctx, rest), **_symbolic_args(ctx, kwargs))
    if not isinstance(out, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in out):
        raise NotLowered("multi-view op returned something else than tensors")
    return list(out)


for _target in MULTI_VIEW_OPS:
    register(_target)(lower_multi_view)
