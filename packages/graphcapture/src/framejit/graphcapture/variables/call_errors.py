"""The TypeError of a call to a Python function whose arguments do not bind, with eager's
message.

The same call is made on a stub: a function with the signature of the one called (its
parameter names, which of them have defaults, its qualified name) and an empty body, so
CPython words the error itself and no user code runs.  Stubs are cached by signature.
"""

from __future__ import annotations

import functools
import inspect
import keyword

from ..exc import Unsupported
from .exceptions import observed


def binding_error(code, qualname: str, n_defaults: int, kwdefaults, n_args: int, kw_names):
    """What raising for `code(*n_args positional, **kw_names)` raises: the observed
    TypeError eager raises, or a graph break where the stub binds (or cannot be made)."""
    flags = code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    nparams = code.co_argcount + code.co_kwonlyargcount + bin(flags).count("1")
    stub = _stub(
        code.co_varnames[:nparams], code.co_argcount, code.co_posonlyargcount,
        code.co_kwonlyargcount, flags, n_defaults, tuple(sorted(kwdefaults)), code.co_name,
        qualname,
    )  # fmt: skip
    if stub is not None:
        try:
            stub(*[None] * n_args, **dict.fromkeys(kw_names))
        except TypeError as e:
            return observed(TypeError, *e.args, reason=f"TypeError: {e}")
    return Unsupported(f"TypeError: arguments of {qualname}() do not bind")


@functools.lru_cache(maxsize=256)
def _stub(names, argcount, posonly, kwonly, flags, n_defaults, kwdefaults, name, qualname):
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in names):
        return None
    params = [
        n + ("=None" if i >= argcount - n_defaults else "") for i, n in enumerate(names[:argcount])
    ]
    if posonly:
        params.insert(posonly, "/")
    rest = list(names[argcount + kwonly :])
    if flags & inspect.CO_VARARGS:
        params.append("*" + rest.pop(0))
    elif kwonly:
        params.append("*")
    params += [
        n + ("=None" if n in kwdefaults else "") for n in names[argcount : argcount + kwonly]
    ]
    if flags & inspect.CO_VARKEYWORDS:
        params.append("**" + rest.pop(0))
    namespace: dict = {}
    exec(f"def stub({', '.join(params)}):\n    pass\n", namespace)
    fn = namespace["stub"]
    fn.__name__, fn.__qualname__ = name, qualname
    return fn
