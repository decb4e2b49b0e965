"""Rendering constants into generated guard source, safely.

Only values of exact builtin types whose ``repr`` is a Python literal are rendered
inline: ``int``, ``bool``, ``None``, ``str``, ``bytes``, finite ``float`` (non-finite
floats render as ``float('nan')`` / ``float('inf')``), ``complex`` (rendered as
``complex(real, imag)`` from two float literals), and tuples of those.  A
``str`` subclass could override ``__repr__`` and smuggle code into the guard; exact
type checks shut that door.  Anything else is refused with ``TypeError`` and must be
bound as a closure variable by the caller instead.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

_SCALARS = (int, bool, str, bytes, float, type(None))


def is_literal(value: Any) -> bool:
    """True when ``render_literal(value)`` is allowed."""
    t = type(value)
    if t in _SCALARS or t is complex:
        return True
    if t is tuple:
        return all(is_literal(v) for v in value)
    return False


def render_literal(value: Any) -> str:
    """Python source that evaluates to ``value`` (exact builtin constants only)."""
    t = type(value)
    if t is float and not math.isfinite(value):
        return f"float({repr(value)!r})"
    if t in _SCALARS:
        return repr(value)
    if t is complex:
        return f"complex({render_literal(value.real)}, {render_literal(value.imag)})"
    if t is tuple:
        inner = ", ".join(render_literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    raise TypeError(
        f"cannot render a {t.__name__} as a guard literal; only exact int, bool, None, str, "
        "bytes, float, complex and tuples of these are rendered (bind other values by identity)"
    )


def numpy_number(value: Any) -> int | float | None:
    """The builtin number a numpy integer or floating scalar holds (None for anything else:
    numpy's bool_ is not a number here, torch promotes it unlike a Python bool)."""
    if type(value).__module__ != "numpy" or not isinstance(value, numbers.Real):
        return None
    return value.item()


def check_key_literal(key: Any) -> None:
    """Refuse item keys that cannot be rendered as literals (see module docstring)."""
    if type(key) in (float, complex) or not is_literal(key):
        raise TypeError(
            f"item key {key!r} of type {type(key).__name__} is not supported; "
            "use an int, str, bool, None, bytes key or a tuple of these"
        )
