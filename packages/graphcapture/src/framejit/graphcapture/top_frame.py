"""A Python frame around a callable that starts none capture sees, for compile() and optimize().

`fj.compile(torch.sin)` or `fj.compile(F.relu)` would capture nothing: a builtin runs no
Python frame, and the frames of code the trace rules do not capture (torch internals, the
stdlib) run untouched.  As torch.compile's `wrap_inline` does, such a callable is called
from a small function whose own frame is captured, so the call is traced inside it (a
torch function becomes a graph node, an inlinable Python function is traced inline).

The wrapper's code is compiled from source with a `<...>` filename, which the trace rules
treat as user code (framejit's own files are never captured).
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any

from . import trace_rules

_SOURCE = """\
def frame_around(fn):
    def inner(*args, **kwargs):
        return fn(*args, **kwargs)
    return inner
"""
_namespace: dict[str, Any] = {}
exec(compile(_SOURCE, "<framejit frame around a callable>", "exec"), _namespace)
_frame_around = _namespace["frame_around"]


def _python_code(fn) -> types.CodeType | None:
    """The code whose frame calling `fn` starts, when there is one."""
    for candidate in (fn, getattr(fn, "__func__", None)):
        code = getattr(candidate, "__code__", None)
        if isinstance(code, types.CodeType):
            return code
    call = inspect.getattr_static(type(fn), "__call__", None)
    if inspect.isfunction(call):
        return call.__code__
    return None


def needs_frame(fn) -> bool:
    """Does calling `fn` start no frame that capture sees?  (Classes are left alone: their
    construction runs `__init__`'s own frame.)"""
    if isinstance(fn, type):
        return False
    code = _python_code(fn)
    return code is None or not trace_rules.is_captured(code.co_filename)


def frame_around(fn):
    """`fn` called from a frame that capture sees (the names of `fn` copied onto it)."""
    inner = _frame_around(fn)
    # a code object of its own: compiled code is cached per code, so wrapped callables
    # do not share one cache (and its size limit)
    inner.__code__ = inner.__code__.replace(co_varnames=inner.__code__.co_varnames)
    try:
        functools.update_wrapper(inner, fn)
    except (AttributeError, TypeError):  # a callable without __name__/__dict__
        pass
    return inner
