"""What TENSOR_MATCH expects of a tensor, and the pure-Python check of it.

``TensorSpec.capture(t)`` snapshots everything a compiled graph specialises on (the
seed's ``check_tensor`` list): exact Python class (so subclasses are told apart),
dispatch key set with the thread-local include/exclude applied, dtype, device,
requires_grad, ndim, sizes and strides.  Dimensions marked dynamic are left out of
sizes (``None``), and so are strides that are products of a dynamic size.

``PyTensorGuards`` is the pure-Python body of ``___check_tensors``; the native one
(``native/tensor_guards.cpp``) has the same semantics and is used when it builds.
``TensorSpec.mismatch`` names the first difference for ``failure_reason``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch

_dispatch_keys = torch._C._dispatch_keys
_tls_include = torch._C._dispatch_tls_local_include_set
_tls_exclude = torch._C._dispatch_tls_local_exclude_set


def applied_dispatch_keys(t: torch.Tensor) -> torch._C.DispatchKeySet:
    """The tensor's dispatch keys with this thread's local include/exclude applied."""
    return (_dispatch_keys(t) | _tls_include()) - _tls_exclude()


def _dynamic_strides(
    sizes: tuple[int, ...], strides: tuple[int, ...], dynamic: frozenset[int]
) -> tuple[tuple[int | None, ...], tuple[int, ...] | None]:
    """Strides with those that are products of a dynamic size left out, and the dense order.

    For a dense tensor (strides a permutation of the contiguous layout) the stride of a
    dim is the product of the sizes of the dims inside it; it depends on a dynamic dim
    exactly when one of those inner dims is dynamic.  Such strides become None and the
    check instead requires them to equal that product of the actual sizes, walking the
    returned order (innermost dim first) — so the layout is still guarded.  Other
    layouts keep every stride (over-specialising is a recompile, never a wrong answer).
    """
    if not dynamic:
        return strides, None
    order = sorted(range(len(sizes)), key=lambda d: (strides[d], sizes[d]))
    expected = 1
    inner_dynamic = False
    out: list[int | None] = list(strides)
    for d in order:
        if strides[d] != expected and sizes[d] != 1:
            return strides, None  # not dense: keep every stride
        if inner_dynamic and strides[d] == expected:
            out[d] = None
        expected *= sizes[d]
        inner_dynamic = inner_dynamic or d in dynamic
    if None not in out:
        return strides, None
    return tuple(out), tuple(order)


@dataclass(frozen=True)
class TensorSpec:
    pytype: type
    dispatch_keys: int  # DispatchKeySet raw repr, thread-local include/exclude applied
    dtype: torch.dtype
    device: torch.device
    requires_grad: bool
    sizes: tuple[int | None, ...]
    strides: tuple[int | None, ...] | None  # None: not a strided layout, not checked
    # Dims innermost first; each None stride must equal the product of the actual sizes
    # of the dims before it in this order (see _dynamic_strides).
    dense_order: tuple[int, ...] | None = None

    @classmethod
    def capture(cls, t: torch.Tensor, dynamic_dims: Iterable[int] = ()) -> TensorSpec:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"TENSOR_MATCH needs a torch.Tensor, got {type(t).__name__}")
        if t.is_nested:
            raise TypeError(
                "TENSOR_MATCH does not support nested tensors (no fixed sizes to guard)"
            )
        dynamic = frozenset(d + t.dim() if d < 0 else d for d in dynamic_dims)
        bad = [d for d in dynamic if not 0 <= d < t.dim()]
        if bad:
            raise ValueError(f"dynamic dims {sorted(bad)} out of range for a {t.dim()}-d tensor")
        sizes = tuple(int(s) for s in t.size())
        strides: tuple[int | None, ...] | None = None
        dense_order = None
        if t.layout == torch.strided:
            raw = tuple(int(s) for s in t.stride())
            strides, dense_order = _dynamic_strides(sizes, raw, dynamic)
        return cls(
            pytype=type(t),
            dispatch_keys=applied_dispatch_keys(t).raw_repr(),
            dtype=t.dtype,
            device=t.device,
            requires_grad=t.requires_grad,
            sizes=tuple(None if d in dynamic else s for d, s in enumerate(sizes)),
            strides=strides,
            dense_order=dense_order,
        )

    @property
    def ndim(self) -> int:
        return len(self.sizes)

    def native_args(self) -> tuple:
        """The tuple the native TensorGuards constructor takes."""
        return (
            self.pytype,
            self.dispatch_keys,
            self.dtype,
            self.device,
            self.requires_grad,
            self.sizes,
            self.strides,
            self.dense_order,
        )

    def key_set(self) -> torch._C.DispatchKeySet:
        return torch._C.DispatchKeySet.from_raw_repr(self.dispatch_keys)

    def render(self, name: str) -> str:
        """The seed's readable per-tensor form (verbose parts / logs; never executed)."""
        return (
            f"check_tensor({name}, {self.pytype.__qualname__}, {self.key_set()}, {self.dtype}, "
            f"device={self.device.index}, requires_grad={self.requires_grad}, "
            f"size={list(self.sizes)}, stride={None if self.strides is None else list(self.strides)})"
        )

    def matches(self, t: Any, include: Any, exclude: Any) -> bool:
        """Pure-Python check; include/exclude are the thread's local dispatch key sets."""
        return self.mismatch(t, "", include, exclude) is None

    def mismatch(self, t: Any, name: str, include: Any = None, exclude: Any = None) -> str | None:
        """None when ``t`` matches, else a readable reason naming the first difference."""
        if include is None:
            include, exclude = _tls_include(), _tls_exclude()
        where = f"tensor '{name}'"
        if type(t) is not self.pytype:
            return f"{where} Python class mismatch. expected {self.pytype.__qualname__}, actual {type(t).__qualname__}"
        actual_keys = ((_dispatch_keys(t) | include) - exclude).raw_repr()
        if actual_keys != self.dispatch_keys:
            actual = torch._C.DispatchKeySet.from_raw_repr(actual_keys)
            return f"{where} dispatch key set mismatch. expected {self.key_set()}, actual {actual}"
        if t.dtype != self.dtype:
            return f"{where} dtype mismatch. expected {self.dtype}, actual {t.dtype}"
        if t.device != self.device:
            return f"{where} device mismatch. expected {self.device}, actual {t.device}"
        if t.requires_grad != self.requires_grad:
            return (
                f"{where} requires_grad mismatch. expected requires_grad={int(self.requires_grad)}"
            )
        if t.dim() != self.ndim:
            return f"{where} rank mismatch. expected {self.ndim}, actual {t.dim()}"
        size = t.size()
        for i, expected in enumerate(self.sizes):
            if expected is not None and size[i] != expected:
                return f"{where} size mismatch at index {i}. expected {expected}, actual {size[i]}"
        if self.strides is not None:
            if t.layout != torch.strided:
                return f"{where} layout mismatch. expected torch.strided, actual {t.layout}"
            stride = t.stride()
            for i, expected in enumerate(self.strides):
                if expected is not None and stride[i] != expected:
                    return f"{where} stride mismatch at index {i}. expected {expected}, actual {stride[i]}"
            product = 1
            for d in self.dense_order or ():
                if self.strides[d] is None and stride[d] != product:
                    return (
                        f"{where} stride mismatch at index {d}. expected {product} "
                        f"(dense layout, order {list(self.dense_order)}), actual {stride[d]}"
                    )
                product *= size[d]
        return None


class PyTensorGuards:
    """Pure-Python ``___check_tensors``: same call shape and semantics as the native one."""

    def __init__(self, specs: Iterable[TensorSpec]):
        self.specs = tuple(specs)

    def check(self, *tensors: Any, tensor_check_names: Any = None) -> bool:
        specs = self.specs
        if len(tensors) != len(specs):
            return False
        include, exclude = _tls_include(), _tls_exclude()
        for t, spec in zip(tensors, specs, strict=True):
            try:
                if spec.mismatch(t, "", include, exclude) is not None:
                    return False
            except Exception:
                return False
        return True
