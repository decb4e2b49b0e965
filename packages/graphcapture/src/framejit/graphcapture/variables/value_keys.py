"""Set members and dict keys hashed by their fields' values: instances of frozen (or
unsafe_hash) dataclasses whose `__hash__`/`__eq__` are the ones dataclasses generated.

Such a key hashes as `hash((f1, f2, ...))` over its hashed fields and equals another
instance of the very same class whose compared fields are equal: both answers follow
from the field values, read through the tracker (so an input's fields are guarded, and a
new object's are what the trace stored).  Fields must be constants or such objects
themselves (a tensor field would compare by value, which is data-dependent): anything
else stays a graph break, as does a class with a hand-written `__hash__` or `__eq__`.
"""

from __future__ import annotations

import dataclasses

from ..exc import Unsupported


def _generated(cls, name: str) -> bool:
    fn = cls.__dict__.get(name)
    code = getattr(fn, "__code__", None)
    return (
        code is not None
        and code.co_filename == "<string>"
        and fn.__qualname__ == f"{cls.__qualname__}.{name}"
    )


def is_value_hashed(cls) -> bool:
    """cls is a dataclass (itself, not a subclass of one) hashed by dataclasses' code."""
    params = cls.__dict__.get("__dataclass_params__")
    return (
        params is not None
        and params.eq
        and (params.frozen or params.unsafe_hash)
        and cls.__hash__ is cls.__dict__.get("__hash__")
        and cls.__eq__ is cls.__dict__.get("__eq__")
        and _generated(cls, "__hash__")
        and _generated(cls, "__eq__")
    )


def frozen_dataclass_key(tx, vt, key_of):
    """The key of dataclass instance `vt` (key_of: sets.key_of, for the fields)."""
    from .sets import ValueKey, _ById

    cls = vt.python_type()
    hashed, compared = [], []
    for field in dataclasses.fields(cls):
        if not (field.compare or field.hash):
            continue
        key = key_of(vt.var_getattr(tx, field.name), tx)
        if isinstance(key, _ById) and not isinstance(key, ValueKey):
            raise Unsupported(f"dict key of {cls.__name__}: field {field.name} compared by value")
        if field.hash if field.hash is not None else field.compare:
            hashed.append(key)
        if field.compare:
            compared.append(key)
    return ValueKey(vt, cls, tuple(hashed), tuple(compared))
