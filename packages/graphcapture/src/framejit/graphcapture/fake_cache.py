"""The FakeTensorMode of a capture: torch's own dispatch cache, with its key built faster.

Every ATen op a capture propagates goes through ``FakeTensorMode``'s dispatch cache: a
hit builds the output from cached metadata, so most of an op's cost is making the key
(``_cache_key``: a ``TensorMetadata`` dataclass per tensor argument, flattened field by
field through generic recursion) and building the output FakeTensor from the entry
(``_output_from_cache_entry``: two context managers and a generator per int).  For the
common case — plain strided FakeTensors of this mode with static sizes, and Python
scalars, dtypes, devices and lists of them — ``CaptureFakeMode`` builds *the same key*
(element for element what torch's ``_cache_key`` builds, checked in
tests/test_fake_cache.py) in one pass, and a hit whose entry describes one tensor with
static sizes (fresh, or a view of one argument: no in-place alias, no tuple) becomes an
``empty_strided`` meta tensor (set to the argument's storage for a view) wrapped as a
FakeTensor, as torch's entry path makes it.  Anything else (a SymInt, a
sparse or constant-carrying tensor, a callable argument, an in-place op's entry, a
tuple output) goes to torch's own code unchanged, so what is cached and when a cache entry
applies stay torch's decisions.  ``_unsafe_view`` (the last op of every matmul over 3-d
inputs, which torch's cache refuses) is dispatched as ``view``, its twin below autograd.

The mode's ``__torch_dispatch__`` goes straight to the cache (torch's wraps every op in a
``torch._dynamo`` disable context and a call counter, about a sixth of a cached op's time);
the ops torch's ``dispatch`` answers before its cache, and everything while its debug log
is on, still take torch's ``dispatch``.
"""

from __future__ import annotations

import logging

import torch
from torch._prims_common import suggest_memory_format
from torch._subclasses.fake_tensor import (
    _DISPATCH_HANDLE_DIRECTLY,
    _DISPATCH_META_HANDLERS,
    FakeTensor,
    FakeTensorMode,
    SingletonConstant,
    _DispatchCacheKey,
)
from torch.fx.experimental.proxy_tensor import get_proxy_mode

# argument types torch's key appends as (type, value): other objects (callables, graph
# modules, symbolic values) take torch's own path
_PLAIN_ARGS = frozenset(
    {
        int,
        float,
        bool,
        complex,
        str,
        type(None),
        torch.dtype,
        torch.device,
        torch.layout,
        torch.memory_format,
    }
)
_CONTAINERS = (list, tuple, dict)
_strided = torch.strided
_get_default_device = torch._C._get_default_device
_DisableTorchDispatch = torch._C._DisableTorchDispatch


class _Bypass(Exception):
    """An argument the fast key does not describe: torch's _cache_key builds it."""


def _flatten(mode: FakeTensorMode, out: list, args) -> None:
    """torch's ``_prep_args_for_hash`` over plain arguments, appending to ``out``."""
    if isinstance(args, _CONTAINERS):
        out.append(type(args))
        out.append(f"length_{len(args)}")
    if isinstance(args, dict):
        _flatten(mode, out, args.keys())
        _flatten(mode, out, args.values())
        return
    for arg in args:
        kind = type(arg)
        if kind is FakeTensor:
            _tensor(mode, out, arg)
        elif kind in _PLAIN_ARGS:
            out.append(kind)
            out.append(arg)
        elif kind in _CONTAINERS:
            _flatten(mode, out, arg)
        else:
            raise _Bypass


def _tensor(mode: FakeTensorMode, out: list, t: FakeTensor) -> None:
    """``extract_tensor_metadata(t)._flatten_into(out, ...)`` for a plain strided fake."""
    if (
        t.fake_mode is not mode
        or t.constant is not None
        or t.layout is not _strided
        or t._has_symbolic_sizes_strides
        or t.is_quantized
    ):
        raise _Bypass
    nbytes = t.untyped_storage().nbytes()
    if type(nbytes) is not int:  # a static view of a dynamic tensor (x.select(0, 0))
        raise _Bypass
    memory_format = suggest_memory_format(t)
    if not t.is_contiguous(memory_format=memory_format):
        memory_format = None
    shape = t.shape
    stride = t.stride()
    out.append(t.dtype)
    out.append(torch.Size)
    out.append(f"length_{len(shape)}")
    for s in shape:
        out.append(int)
        out.append(s)
    out.append(tuple)
    out.append(f"length_{len(stride)}")
    for s in stride:
        out.append(int)
        out.append(s)
    out += (
        t.device,
        _strided,
        memory_format,
        t.storage_offset(),
        nbytes,
        t.requires_grad,
        False,  # is_quantized
        t.is_conj(),
        t.is_neg(),
        t.is_inference(),
        False,  # is_sparse
        None,  # is_coalesced
        None,  # dense_dim
        None,  # sparse_dim
    )


_aten = torch.ops.aten
_fake_log = logging.getLogger(FakeTensorMode.__module__)
_get_dispatch_mode = torch._C._get_dispatch_mode
_FAKE_KEY = torch._C._TorchDispatchModeKey.FAKE


def _torch_dispatch(self, func, types, args=(), kwargs=None):
    """FakeTensorMode.__torch_dispatch__ and .dispatch without their per-op wrappers."""
    if _get_dispatch_mode(_FAKE_KEY) is not None:
        raise AssertionError(f"FakeTensorMode should not be set when dispatching {func}")
    if (
        func in _DISPATCH_META_HANDLERS
        or func in _DISPATCH_HANDLE_DIRECTLY
        or not self.cache_enabled
        or _fake_log.isEnabledFor(logging.DEBUG)
    ):
        return self.dispatch(func, types, args, kwargs or {})
    return self._cached_dispatch_impl(func, types, args, kwargs or {})


class CaptureFakeMode(FakeTensorMode):
    """FakeTensorMode whose dispatch cache keys and hits cost less (see the module doc)."""

    def _cached_dispatch_impl(self, func, types, args, kwargs):
        if func is _aten._unsafe_view.default:
            # matmul/linear over 3-d inputs end in _unsafe_view, which torch's cache never
            # keeps ("unsafe view": not marked a view, yet it aliases).  Below autograd it is
            # view: fake_impls gives both one implementation (_view_meta), and the view
            # tracking that tells them apart happens above this dispatch, for the op called.
            func = _aten.view.default
        return super()._cached_dispatch_impl(func, types, args, kwargs)

    def _cache_key(self, state, func, args, kwargs):
        out = [
            func,
            torch.get_default_dtype(),
            _get_default_device(),
            torch.is_inference_mode_enabled(),
            self.shape_env.settings if self.shape_env else None,
            get_proxy_mode() is not None,
        ]
        try:
            if args:
                _flatten(self, out, args)
            if kwargs:
                _flatten(self, out, kwargs)
        except _Bypass:
            return super()._cache_key(state, func, args, kwargs)
        return _DispatchCacheKey(tuple(out))

    def _output_from_cache_entry(self, state, entry, key, func, args):
        if not entry.is_output_tuple:
            info = entry.output_infos[0]
            meta = info.metadata
            if (
                meta is not None
                and info.inplace_idx is None
                and info.constant_value is SingletonConstant
                and not (meta.is_conj or meta.is_neg or meta.is_sparse)
                and meta.layout is _strided
                and type(meta.storage_offset) is int
                and all(type(s) is int for s in meta.shape)
                and all(type(s) is int for s in meta.stride)
            ):
                view = isinstance(func, torch._ops.OpOverload) and func.is_view
                if view and type(args[info.view_idx]) is not FakeTensor:
                    return super()._output_from_cache_entry(state, entry, key, func, args)
                with _DisableTorchDispatch():
                    empty = torch.empty_strided(
                        meta.shape,
                        meta.stride,
                        dtype=meta.dtype,
                        device="meta",
                        requires_grad=meta.requires_grad,
                    )
                    if view:
                        # a view shares its input's storage, as torch's entry path sets it
                        storage = args[info.view_idx].untyped_storage()
                        empty.set_(storage, meta.storage_offset, meta.shape, meta.stride)
                return FakeTensor(self, empty, meta.device)
        return super()._output_from_cache_entry(state, entry, key, func, args)


# torch's __init_subclass__ would wrap a __torch_dispatch__ of the class body
CaptureFakeMode.__torch_dispatch__ = _torch_dispatch
