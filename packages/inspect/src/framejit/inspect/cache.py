"""What framejit cached on a function: ``debug_get_cache_entry_list`` and ``innermost_fn``.

The cache lives on the code object (frameeval stores it in ``co_extra``), so a
wrapper made by ``graphcapture.compile``/``optimize`` has to be unwrapped down
to the user's function first.  The unwrapping convention, which graphcapture
follows, is: a wrapper names what it wraps in one of ``WRAPPED_ATTRIBUTES``
(checked in that order), ``functools.wraps``' ``__wrapped__`` included.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

#: Attributes through which a wrapper names what it wraps, in the order they are tried.
WRAPPED_ATTRIBUTES = (
    "_framejit_orig",  # graphcapture's compile/optimize wrapper
    "_framejit_orig_fn",
    "_torchdynamo_orig_callable",  # the same role in torch._dynamo, for familiarity
    "_orig_mod",  # graphcapture.OptimizedModule around an nn.Module
    "__wrapped__",  # functools.wraps
)


def innermost_fn(fn: Any) -> Any:
    """The function at the bottom of nested compile/optimize (and ``functools.wraps``) wrappers."""
    seen: set[int] = set()
    while id(fn) not in seen:
        seen.add(id(fn))
        for attr in WRAPPED_ATTRIBUTES:
            try:
                inner = getattr(fn, attr, None)
            except Exception:
                inner = None
            if inner is not None and inner is not fn:
                fn = inner
                break
        else:
            break
    return fn


def code_of(fn_or_code: Any) -> types.CodeType:
    """The code object whose cache holds ``fn_or_code``'s compiled entries."""
    obj = innermost_fn(fn_or_code)
    if isinstance(obj, types.CodeType):
        return obj
    forward = getattr(type(obj), "forward", None)
    if forward is not None and hasattr(obj, "parameters"):  # an nn.Module: its forward
        obj = forward
    obj = getattr(obj, "__func__", obj)
    code = getattr(obj, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(
            f"debug_get_cache_entry_list() needs a function, method, nn.Module or code object, "
            f"got {type(fn_or_code).__name__}"
        )
    return code


@dataclass(frozen=True)
class CacheEntry:
    """One cached (guard, code) pair of a function, most recently used first in the list.

    ``check_fn`` is the guard function itself: ``check_fn.code_parts``,
    ``check_fn.__code__.co_freevars`` and ``check_fn.__closure__`` read as in
    TorchDynamo.  ``code`` is what runs when the guard holds.  ``payload`` is
    what the compiler stored with the entry (graphcapture: its CompileRecord).
    """

    check_fn: Any
    code: types.CodeType
    payload: Any = None

    @property
    def code_parts(self) -> list[str]:
        return list(getattr(self.check_fn, "code_parts", []))

    @property
    def closure_vars(self) -> dict[str, Any]:
        """The guard's free variables by name (``___check_tensors``, ``tensor_check_names`` ...)."""
        code = getattr(self.check_fn, "__code__", None)
        cells = getattr(self.check_fn, "__closure__", None) or ()
        if code is None:
            return {}
        return {
            name: cell.cell_contents for name, cell in zip(code.co_freevars, cells, strict=False)
        }

    def decompile(self) -> str:
        """Readable source of the code run when the guard holds."""
        from .decompiler import decompile

        return decompile(self.code)


def debug_get_cache_entry_list(fn_or_code: Any) -> list[CacheEntry]:
    """The cache entries framejit stored for a function (or code object), most recent first."""
    from framejit import frameeval as fe  # imported on use: the decompiler works without the C hook

    return [
        CacheEntry(e.check_fn, e.code, e.payload) for e in fe.cache_entries(code_of(fn_or_code))
    ]
