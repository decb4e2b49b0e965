"""The lowering registry and the helpers every lowering uses (broadcasting, dtype handling).

A lowering turns one ATen call into IR values.  It raises `NotLowered` whenever it is not
sure of eager's exact semantics; the call then stays in ATen (an extern), which always works.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.fx

from .ir import BufferView, InnerFn, Pointwise, TensorValue, cost_of
from .ops import ops

if TYPE_CHECKING:
    from .graph_lowering import GraphLowering

aten = torch.ops.aten

# dtypes the C++ generator handles; anything else stays in ATen.
SUPPORTED_DTYPES = {
    torch.float32,
    torch.float64,
    torch.bfloat16,
    torch.float16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
}
FLOAT_DTYPES = {torch.float32, torch.float64, torch.bfloat16, torch.float16}

LOWERINGS: dict[Any, Callable[..., Any]] = {}

# Ops that stay in ATen by design: their library kernels beat generated loops.
EXTERN_BY_DESIGN = {
    aten.mm.default,
    aten.addmm.default,
    aten.bmm.default,
    aten.baddbmm.default,
    aten.convolution.default,
    aten._scaled_dot_product_flash_attention_for_cpu.default,
}


class NotLowered(Exception):
    """This call is left to ATen; the message says why (it is logged)."""


@dataclass
class LoweringContext:
    graph: GraphLowering
    node: torch.fx.Node

    @property
    def meta(self) -> Any:
        return self.node.meta.get("val")

    @property
    def out_dtype(self) -> torch.dtype:
        return self.meta.dtype

    @property
    def out_size(self) -> tuple[int, ...]:
        return self.graph.sizes.exprs(self.meta.shape)

    def arg_meta(self, position: int) -> Any:
        arg = self.node.args[position]
        return arg.meta.get("val") if isinstance(arg, torch.fx.Node) else arg

    def realize(self, value: TensorValue) -> BufferView:
        return self.graph.realize(value)


def register(*targets: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        for target in targets:
            LOWERINGS[target] = fn
        return fn

    return decorate


def opmath_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype eager computes in: reduced floats compute in float32."""
    return torch.float32 if dtype in (torch.bfloat16, torch.float16) else dtype


def is_tensor(value: Any) -> bool:
    return isinstance(value, TensorValue)


def check_scalar(value: Any) -> None:
    if not isinstance(value, (bool, int, float)):
        raise NotLowered(f"unsupported scalar argument {type(value).__name__}")


def broadcast_loader(value: TensorValue, out_size: Sequence[int]) -> InnerFn:
    loader = value.make_loader()
    lead = len(out_size) - len(value.size)
    size = value.size
    if lead < 0:
        raise NotLowered("operand has more dims than the result")

    def load(index: list[Any]) -> Any:
        return loader([0 if n == 1 else index[lead + i] for i, n in enumerate(size)])

    return load


def pointwise(
    ctx: LoweringContext,
    fn: Callable[..., Any],
    inputs: Sequence[Any],
    compute_dtype: torch.dtype | None = None,
    out_dtype: torch.dtype | None = None,
    out_size: Sequence[int] | None = None,
    input_dtypes: Sequence[torch.dtype | None] = (),
    heavy: int = 0,
) -> Pointwise:
    """Elementwise fn over broadcast inputs: cast each to compute_dtype, cast the result."""
    out_dtype = out_dtype or ctx.out_dtype
    # eager casts each operand to the common dtype, then a reduced float computes in float:
    # a float32 0-dim operand of a float16 op is rounded to float16 first (1e-8 becomes 0)
    through = out_dtype if compute_dtype is None and opmath_dtype(out_dtype) != out_dtype else None
    compute_dtype = compute_dtype or opmath_dtype(out_dtype)
    out_size = tuple(ctx.out_size if out_size is None else out_size)
    for value in (out_dtype, compute_dtype):
        if value not in SUPPORTED_DTYPES:
            raise NotLowered(f"dtype {value} not supported by the C++ generator")
    loaders: list[Callable[[list[Any]], Any]] = []
    op_count, read_count = 1, 0
    for position, value in enumerate(inputs):
        dtype = input_dtypes[position] if position < len(input_dtypes) else None
        dtype = dtype or compute_dtype
        if is_tensor(value):
            load = broadcast_loader(value, out_size)
            if through is not None and dtype is compute_dtype and value.dtype != through:
                load = lambda index, load=load: ops.to_dtype(load(index), through)  # noqa: E731
            loaders.append(lambda index, load=load, dtype=dtype: ops.to_dtype(load(index), dtype))
            extra_ops, extra_reads = cost_of(value)
            op_count += extra_ops
            read_count += extra_reads
            heavy += getattr(value, "heavy", 0)
        else:
            check_scalar(value)
            loaders.append(lambda index, value=value, dtype=dtype: ops.constant(value, dtype))

    def inner(index: list[Any]) -> Any:
        return ops.to_dtype(fn(*[load(index) for load in loaders]), out_dtype)

    return Pointwise(out_size, out_dtype, inner, op_count, read_count, heavy)


def result_dtype(*args: Any) -> torch.dtype:
    """torch's type promotion over fake tensors and Python scalars."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    scalars = [a for a in args if not isinstance(a, torch.Tensor)]
    if not tensors:
        raise NotLowered("no tensor operand")
    dtype = tensors[0].dtype if len(tensors) == 1 and not scalars else None
    if dtype is None:
        first, *rest = args
        dtype = torch.result_type(first, rest[0]) if len(args) == 2 else None
    if dtype is None:
        from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes

        _, dtype = elementwise_dtypes(
            *args, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT
        )
    return dtype


def meta_args(ctx: LoweringContext) -> list[Any]:
    return [a.meta.get("val") if isinstance(a, torch.fx.Node) else a for a in ctx.node.args]


# The op modules register themselves on import.
from . import lower_index, lower_pointwise, lower_reduce, lower_view  # noqa: E402, F401
