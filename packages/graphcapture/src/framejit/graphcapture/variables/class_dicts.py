"""`cls.__dict__`: a class's own namespace (a mappingproxy), read key by key.

Its length is guarded as a whole (LENGTH_CHECK).  Each key read is guarded on its own: its presence (DICT_CONTAINS on `cls.__dict__`) and,
when present, its value through `cls.__dict__[key]`.  Only the class's own dict is read,
never its bases' (`"x" in B.__dict__` is false for an attribute B inherits).
"""

from __future__ import annotations

import types

from framejit.guards import GuardKind

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource
from .base import ConstantVariable, VariableTracker
from .exceptions import observed


class ClassDictVariable(VariableTracker):
    """`cls.__dict__` of a class tracker that has a source."""

    def __init__(self, cls_vt: VariableTracker):
        self.cls_vt = cls_vt

    def python_type(self) -> type:
        return types.MappingProxyType

    def _read(self, tx, key) -> tuple[bool, VariableTracker | None]:
        from .builder import wrap

        if tx.output.side_effects.has_pending_attrs(self.cls_vt):
            raise Unsupported("__dict__ of a class after a store to one of its attributes")
        source = self.cls_vt.source
        if source is None:
            raise Unsupported("__dict__ of a class without a source")
        namespace = self.cls_vt.value.__dict__
        present = key in namespace
        dict_source = AttrSource(source, "__dict__")
        tx.output.add_guard(
            ItemSource(dict_source, key), GuardKind.DICT_CONTAINS, present, origin=tx.origin()
        )
        if not present:
            return False, None
        return True, wrap(tx, namespace[key], ItemSource(dict_source, key))

    def length(self, tx) -> VariableTracker:
        """len(cls.__dict__): the number of names the class defines, guarded (LENGTH_CHECK:
        an attribute added to the class or deleted from it recompiles)."""
        if tx.output.side_effects.has_pending_attrs(self.cls_vt):
            raise Unsupported("__dict__ of a class after a store to one of its attributes")
        if self.cls_vt.source is None:
            raise Unsupported("__dict__ of a class without a source")
        namespace = self.cls_vt.value.__dict__
        tx.output.add_guard(
            AttrSource(self.cls_vt.source, "__dict__"), GuardKind.LENGTH_CHECK, len(namespace),
            origin=tx.origin(),
        )  # fmt: skip
        return ConstantVariable(len(namespace))

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name == "__len__" and not args and not kwargs:
            return self.length(tx)
        if kwargs or not args or not args[0].is_python_constant():
            raise Unsupported(f"class __dict__.{name} with these arguments")
        key = args[0].as_python_constant()
        if not isinstance(key, str):
            raise Unsupported("class __dict__ read with a non-str key")
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self._read(tx, key)[0])
        if name == "get" and len(args) <= 2:
            present, value = self._read(tx, key)
            if present:
                return value
            return args[1] if len(args) == 2 else ConstantVariable(None)
        if name == "__getitem__" and len(args) == 1:
            present, value = self._read(tx, key)
            if not present:
                raise observed(KeyError, key, reason=f"KeyError: {key!r}")
            return value
        raise Unsupported(f"class __dict__.{name}")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__getitem__", [index], {})

    def __repr__(self) -> str:
        return f"ClassDictVariable({self.cls_vt!r})"
