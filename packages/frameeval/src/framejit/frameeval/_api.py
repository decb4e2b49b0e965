"""The Python-facing frameeval API over the C module: callbacks, caches, skipping."""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from . import _native
from ._types import RUN_ONLY, SKIP, SKIP_CODE, CacheEntry, GuardedCode

_C = _native.load()
_registry: weakref.WeakSet[types.CodeType] = weakref.WeakSet()  # codes holding our co_extra
_C._configure(GuardedCode, SKIP_CODE, SKIP, RUN_ONLY, CacheEntry, _registry)

Frame = _C.Frame
CacheView = _C.CacheView
Locals = _C.Locals  # check_fn(L)'s L: read-only Mapping of arguments + free vars
Mapping.register(Locals)
always_true: Callable[[Any], bool] = _C.always_true


def _code_of(code_or_fn: Any) -> types.CodeType:
    if isinstance(code_or_fn, types.CodeType):
        return code_or_fn
    code = getattr(code_or_fn, "__code__", None)
    if code is None:
        code = getattr(getattr(code_or_fn, "__func__", None), "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(
            f"framejit.frameeval: expected a code object or a Python function, got {type(code_or_fn).__name__}"
        )
    return code


def set_callback(cb: Any) -> Any:
    """Set this thread's callback (a callable cb(frame, cache), None, SKIP or RUN_ONLY).

    Returns the previous setting.  The PEP 523 hook is installed while at least one thread has
    a setting other than None, and removed when none has.
    """
    return _C.set_callback(cb)


def get_callback() -> Any:
    """This thread's current setting (None when off)."""
    return _C.get_callback()


class callback:
    """``with callback(cb): ...`` sets this thread's callback and restores the previous one."""

    __slots__ = ("_cb", "_previous")

    def __init__(self, cb: Any) -> None:
        self._cb = cb
        self._previous: list[Any] = []

    def __enter__(self) -> Any:
        self._previous.append(set_callback(self._cb))
        return self._cb

    def __exit__(self, *exc_info: object) -> None:
        set_callback(self._previous.pop())


def cache_entries(code_or_fn: Any) -> list[CacheEntry]:
    """The cache of a code object (or function), most recently used first."""
    return _C.cache_entries(_code_of(code_or_fn))


def clear(code_or_fn: Any) -> None:
    """Drop the cache (and any skip mark) of one code object or function."""
    _C.clear(_code_of(code_or_fn))


def reset() -> None:
    """Drop every cache entry and skip mark framejit.frameeval has stored."""
    for code in list(_registry):
        _C.clear(code)
    _registry.clear()


def discard(code_or_fn: Any, check_fn: Any) -> bool:
    """Drop the cache entries of one code object whose check is ``check_fn``; whether any were."""
    return _C.discard(_code_of(code_or_fn), check_fn)


def skip(code_or_fn: Any) -> None:
    """Never intercept this code object (its cache is dropped)."""
    _C.skip(_code_of(code_or_fn))


def is_skipped(code_or_fn: Any) -> bool:
    """Whether a code object is marked skip (by skip() or a SKIP_CODE result)."""
    return _C.is_skipped(_code_of(code_or_fn))


def set_cache_limit(limit: int) -> int:
    """Set the per-code cache size limit (default 8); returns the previous one."""
    return _C.set_cache_limit(limit)


def get_cache_limit() -> int:
    return _C.get_cache_limit()


def hook_state() -> dict[str, Any]:
    """Diagnostics: whether our hook is installed, who is current, whether we chain."""
    return _C.hook_state()


def _skip_own_code() -> None:
    """frameeval's own Python functions are never handed to a callback."""
    for value in list(globals().values()):
        if isinstance(value, types.FunctionType) and value.__module__ == __name__:
            skip(value)
    for method in vars(callback).values():
        if isinstance(method, types.FunctionType):
            skip(method)


def stats(reset: bool = False) -> dict[str, int]:
    """Counters since start (or the last reset): hits, misses, callback_calls, in_place,
    new_function (how hits ran: code swapped in the pushed frame, or a new function call)."""
    return _C.stats(reset)


_skip_own_code()
