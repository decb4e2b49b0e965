"""The re module on constants: re.compile, re.search, re.sub, ... folded.

A compiled pattern and a match are immutable records of the constants they were made
from: they are held as constants (`wrap_constant_or_unsupported`), and their methods and
attributes fold on constant arguments (ConstantVariable.call_method), as torch.compile
folds them.  re's Python code is not traced (trace_rules): a call with any non-constant
argument is a graph break.
"""

from __future__ import annotations

import functools
import re

from .base import fold

_FOLDED = (
    re.compile, re.search, re.match, re.fullmatch, re.split, re.findall, re.sub, re.subn,
    re.escape,
)  # fmt: skip


def _folded(fn):
    def handler(tx, *args, **kwargs):
        from .builder import wrap_constant_or_unsupported

        if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
            return None
        call = functools.partial(fn, **{k: v.as_python_constant() for k, v in kwargs.items()})
        call.__name__ = fn.__name__
        return wrap_constant_or_unsupported(fold(call, *[a.as_python_constant() for a in args]))

    return handler


RE_MODELS = {fn: _folded(fn) for fn in _FOLDED}
