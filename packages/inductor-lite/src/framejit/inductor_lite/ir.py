"""The loop-level IR: buffers (inputs, constants, computed, extern results) and the values
that lowering passes around (unrealized pointwise bodies, strided views of buffers).

A `Pointwise` value is an inner function over symbolic indices (the lowering DSL); it becomes
memory only when realized into a `ComputedBuffer`, whose body is then traced into data, a
`LoopBody` (loop_body.py).  A `BufferView` is a strided window on a buffer: views
(permute, expand, slice, select, ...) of realized data are index remappings, never copies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch

from .loop_body import LoopBody
from .ops import ops
from .sizes import canonical, known_eq, max1

Index = list[sympy.Expr]
InnerFn = Callable[[Index], Any]
ReductionFn = Callable[[Index, Index], Any]


def index_symbols(prefix: str, count: int) -> list[sympy.Symbol]:
    return [sympy.Symbol(f"{prefix}{i}", integer=True, nonnegative=True) for i in range(count)]


def contiguous_strides(size: Sequence[Any]) -> tuple[Any, ...]:
    strides: list[Any] = []
    running: Any = 1
    for dim in reversed(size):
        strides.append(running)
        running = canonical(running * max1(dim))
    return tuple(reversed(strides))


def numel(size: Sequence[int]) -> int:
    return math.prod(size)


def strided_index(
    index: Sequence[sympy.Expr], size: Sequence[int], stride: Sequence[int], offset: int = 0
) -> sympy.Expr:
    expr: sympy.Expr = sympy.Integer(offset)
    for i, n, s in zip(index, size, stride, strict=True):
        if n != 1 and s != 0:
            expr = expr + i * s
    return expr


def kernel_device(values: list[Any]) -> torch.device:
    """Where a graph's kernels run: the first CUDA input's device, else the CPU."""
    for value in values:
        if isinstance(value, torch.Tensor) and value.device.type == "cuda":
            return value.device
    return torch.device("cpu")


def same_device(a: torch.device, b: torch.device) -> bool:
    return a.type == b.type and (a.index is None or b.index is None or a.index == b.index)


# --------------------------------------------------------------------------- buffers


@dataclass(eq=False)
class Buffer:
    name: str
    size: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype

    @property
    def numel(self) -> int:
        return numel(self.size)

    def is_contiguous(self) -> bool:
        return all(
            n == 1 or known_eq(s, c)
            for n, s, c in zip(self.size, self.stride, contiguous_strides(self.size), strict=True)
        )


@dataclass(eq=False)
class InputBuffer(Buffer):
    position: int = 0


@dataclass(eq=False)
class ConstantBuffer(Buffer):
    target: str = ""


@dataclass(frozen=True)
class PointwiseBody:
    ranges: tuple[int, ...]
    loop: LoopBody  # the value at index `loop.index`


@dataclass(frozen=True)
class ReductionBody:
    ranges: tuple[int, ...]
    reduction_ranges: tuple[int, ...]
    reduction_type: str  # sum prod max min any all argmax argmin
    loop: LoopBody  # the value reduced, at `loop.index` and `loop.rindex`
    value_dtype: torch.dtype  # dtype of the loop's result
    # a column reduction (the weight and bias grads of a training step) reduces the leading
    # dims and keeps this many trailing ones: scheduled as a column group (scheduler.py)
    columns: int = 0


@dataclass(eq=False)
class ComputedBuffer(Buffer):
    body: PointwiseBody | ReductionBody | None = None

    @property
    def is_reduction(self) -> bool:
        return isinstance(self.body, ReductionBody)


@dataclass(eq=False)
class ExternCall:
    """One ATen call that stays in ATen (matmul, conv, anything not lowered)."""

    name: str
    op: Any
    args: tuple[Any, ...]  # BufferView | constants, nested in lists/tuples
    kwargs: dict[str, Any]
    outputs: list[ExternBuffer] = field(default_factory=list)
    reason: str = ""
    single_output: bool = True  # the result is one tensor, not a structure of them


@dataclass(eq=False)
class ExternBuffer(Buffer):
    call: ExternCall | None = None
    path: tuple[int, ...] = ()  # where the tensor sits in the call's result


# --------------------------------------------------------------------------- values


class TensorValue:
    size: tuple[int, ...]
    dtype: torch.dtype

    def make_loader(self) -> InnerFn:
        raise NotImplementedError


@dataclass(eq=False)
class Pointwise(TensorValue):
    size: tuple[int, ...]
    dtype: torch.dtype
    inner_fn: InnerFn
    op_count: int = 1
    read_count: int = 0
    heavy: int = 0  # transcendental ops inside: worth materializing when read twice

    def make_loader(self) -> InnerFn:
        return self.inner_fn


@dataclass(eq=False)
class BufferView(TensorValue):
    buffer: Buffer
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int = 0

    @property
    def dtype(self) -> torch.dtype:  # type: ignore[override]
        return self.buffer.dtype

    @classmethod
    def whole(cls, buffer: Buffer) -> BufferView:
        return cls(buffer, buffer.size, buffer.stride, 0)

    def is_whole(self) -> bool:
        return (
            self.offset == 0 and self.size == self.buffer.size and self.stride == self.buffer.stride
        )

    def make_loader(self) -> InnerFn:
        name, size, stride, offset = self.buffer.name, self.size, self.stride, self.offset

        def load(index: Index) -> Any:
            return ops.load(name, strided_index(index, size, stride, offset))

        return load


def cost_of(value: TensorValue) -> tuple[int, int]:
    """(ops, reads) of a value when inlined into a consumer."""
    if isinstance(value, Pointwise):
        return value.op_count, value.read_count
    return 0, 1
