"""Objects of user classes built inside the traced frame.

`construct` is what calling a class does: a namedtuple becomes a TupleVariable of its
class; other classes are refused for now (a graph break).
"""

from __future__ import annotations

from ..exc import Unsupported
from .base import VariableTracker
from .containers import TupleVariable


def is_namedtuple_class(cls) -> bool:
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def _namedtuple(tx, cls, args, kwargs) -> VariableTracker:
    fields = list(cls._fields)
    if len(args) > len(fields):
        raise Unsupported(f"TypeError: {cls.__name__}() takes {len(fields)} arguments")
    values = dict(zip(fields, args, strict=False))
    for k, v in kwargs.items():
        if k not in fields or k in values:
            raise Unsupported(f"TypeError: {cls.__name__}() got an unexpected/duplicate {k!r}")
        values[k] = v
    defaults = getattr(cls, "_field_defaults", {})
    items = []
    for name in fields:
        if name in values:
            items.append(values[name])
        elif name in defaults:
            from .builder import wrap

            items.append(wrap(tx, defaults[name], None))
        else:
            raise Unsupported(f"TypeError: {cls.__name__}() missing argument {name!r}")
    return TupleVariable(items, namedtuple_cls=cls)


def construct(tx, cls_vt, args: list, kwargs: dict) -> VariableTracker:
    cls = cls_vt.value
    if is_namedtuple_class(cls) and "__new__" not in _own_overrides(cls):
        return _namedtuple(tx, cls, args, kwargs)
    raise Unsupported(f"constructing a {cls.__qualname__} object")


def _own_overrides(cls) -> set:
    """Names a namedtuple subclass defines itself (a custom __new__ must run)."""
    out = set()
    for klass in cls.__mro__:
        if klass is tuple or ("_fields" in klass.__dict__ and "_make" in klass.__dict__):
            break
        out.update(klass.__dict__)
    return out
