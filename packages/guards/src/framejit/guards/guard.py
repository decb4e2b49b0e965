"""The Guard record and the GuardKind enum.

``Guard(source, kind, value)``: ``value`` is what ``source`` evaluated to while tracing.
What the guard expects of that value (a TensorSpec, a type, an id, a constant, a key
list, ...) is snapshotted when the Guard is created, so later mutation of the traced
object does not change the guard.  Each kind's meaning lives in ``kinds.py``; invalid
values (a non-tensor for TENSOR_MATCH, a constant that cannot be rendered safely)
raise ``TypeError``/``ValueError`` here, at creation, with the fix in the message.
Once snapshotted, ``value`` is replaced by what the guard keeps (``lifetime.py``): None
where the snapshot is enough, a ``Held`` (weak where possible) for ID_MATCH, the value
itself for literals and specs — so a guard never pins the model or tensor it checks.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .source import Source


class GuardKind(enum.Enum):
    TENSOR_MATCH = "TENSOR_MATCH"  # value: torch.Tensor (or a TensorSpec)
    TYPE_MATCH = "TYPE_MATCH"  # value: the object; expects exactly type(value)
    ID_MATCH = "ID_MATCH"  # value: the object; expects that very object
    EQUALS_MATCH = (
        "EQUALS_MATCH"  # value: int/float/complex/bool/None/str/bytes/numpy number, or tuples
    )
    CONSTANT_MATCH = "CONSTANT_MATCH"  # same check as EQUALS_MATCH (TorchDynamo's name)
    LENGTH_CHECK = "LENGTH_CHECK"  # value: the sized object; expects len(value)
    DICT_KEYS = "DICT_KEYS"  # value: the dict; expects its keys in order
    NOT_NONE = "NOT_NONE"  # value ignored
    IS_NONE = "IS_NONE"  # value ignored
    HASATTR = "HASATTR"  # source: AttrSource(base, name); value: bool, whether base has it
    DICT_CONTAINS = "DICT_CONTAINS"  # source: ItemSource(a dict, key); value: bool, `key in it`
    GLOBAL_STATE = "GLOBAL_STATE"  # source: GlobalStateSource(); value: GlobalStateSnapshot
    SHAPE_EXPR = "SHAPE_EXPR"  # source: None; value: ShapeExpr over ShapeSources
    TENSOR_ALIASING = "TENSOR_ALIASING"  # value: another Source; both are the same object
    NO_TENSOR_ALIASING = "NO_TENSOR_ALIASING"  # source: None; value: Sources, all distinct

    # members are singletons compared by identity: hashed by it too (Enum's own __hash__ is
    # a Python call, and a guard compile hashes kinds thousands of times)
    __hash__ = object.__hash__


_HANDLERS: dict | None = None


def _handlers() -> dict:
    """kinds.HANDLERS (kinds imports this module): bound on first use, not imported per guard."""
    global _HANDLERS
    if _HANDLERS is None:
        from .kinds import HANDLERS

        _HANDLERS = HANDLERS
    return _HANDLERS


@dataclass(frozen=True, eq=False)
class Guard:
    """One condition under which a compiled frame stays valid."""

    source: Source | None
    kind: GuardKind
    value: Any = None
    origin: str | None = None  # where in user code the guard came from ("file.py:12 in f")
    dynamic_dims: Iterable[int] = ()  # TENSOR_MATCH: dims left out of sizes/strides
    expected: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, GuardKind):
            raise TypeError(f"kind must be a GuardKind, got {self.kind!r}")
        if self.source is not None and not isinstance(self.source, Source):
            raise TypeError(f"source must be a Source or None, got {type(self.source).__name__}")
        object.__setattr__(self, "dynamic_dims", frozenset(self.dynamic_dims))
        handler = _handlers()[self.kind]
        object.__setattr__(self, "expected", handler.prepare(self))
        object.__setattr__(self, "value", handler.retain(self))

    def dedup_key(self) -> tuple:
        """Guards with equal keys check the same thing; compile_guards keeps one."""
        return (self.kind, self.source, _handlers()[self.kind].key(self))

    def __repr__(self) -> str:
        where = f", origin={self.origin!r}" if self.origin else ""
        return f"Guard({self.source}, {self.kind.name}{where})"
