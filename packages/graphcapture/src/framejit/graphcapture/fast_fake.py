"""FakeTensors for plain dense leaf tensors (a module's parameters and buffers), built directly.

``FakeTensorMode.from_tensor`` first describes some forty properties of the tensor
(``MetaTensorDesc``), then builds from them.  For a plain tensor or Parameter that is a
leaf, no view, starts its own storage, and has no conj/neg bit, quantization, sparsity,
nesting, functorch wrapping, inference flag or own grad dtype, what it builds is always the
same: an ``empty_strided`` meta tensor of the tensor's sizes, strides and dtype, wrapped as
a FakeTensor on the tensor's device, with ``requires_grad`` and Parameter-ness copied, and
recorded in the converter's tensor and storage memos.  ``fast_fake`` builds exactly that;
anything else, or a storage another converted tensor already uses (the aliasing the
general path reproduces), returns None for the general path.  A model's parameters are
most of the tensors a capture fakes, so this is most of that work.
"""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.utils._mode_utils import no_dispatch

_PLAIN = (torch.Tensor, torch.nn.Parameter)
_is_functorch_wrapped = torch._C._functorch.is_functorch_wrapped_tensor


def _plain(t: torch.Tensor) -> bool:
    return (
        type(t) in _PLAIN
        and t.layout is torch.strided
        and t.is_leaf
        and not t._is_view()
        and t.storage_offset() == 0
        and t.device.type != "meta"
        and not (
            t.is_quantized
            or t.is_nested
            or t.is_conj()
            or t.is_neg()
            or t.is_inference()
            or _is_functorch_wrapped(t)
        )
        and not (t.requires_grad and t.grad_dtype != t.dtype)
    )


def fast_fake(mode: FakeTensorMode, t: torch.Tensor) -> FakeTensor | None:
    """``mode.from_tensor(t, static_shapes=True)`` for a plain dense leaf (None otherwise)."""
    if not _plain(t):
        return None
    converter = mode.fake_tensor_converter
    meta_converter = converter.meta_converter
    describer = meta_converter.describer
    if describer.lookup_tensor.get(t) is not None:
        return None  # converted before: the general path returns its memo
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return None  # a resized-away storage: the general path empties the fake's too
    if describer.lookup_storage.get(storage) is not None:
        return None  # shares a storage already converted: the general path aliases it
    with no_dispatch():
        fake = FakeTensor(
            mode,
            torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta"),
            t.device,
        )
    if t.requires_grad:
        fake.requires_grad = True
    if isinstance(t, torch.nn.Parameter):
        fake._is_param = True
    meta_converter.storage_memo[describer.get_storage_id(storage)] = fake.untyped_storage()
    converter.set_tensor_memo(t, fake)
    return fake
