"""A namespace read key by key: `cls.__dict__` and `vars(cls)` (a mappingproxy), a module's
`__dict__` and `sys.modules` (dicts that every global store or import changes).

Its length is guarded as a whole (LENGTH_CHECK).  Each key read is guarded on its own: its
presence (DICT_CONTAINS on the namespace) and, when present, its value through
`namespace[key]`, so an unrelated name added later (a global, an import, the compiled
function framejit installs in the module) changes nothing.  Only a class's own dict is read,
never its bases' (`"x" in B.__dict__` is false for an attribute B inherits).  Read whole
(`dict(vars(cls))`, its keys/values/items, iteration), its keys are guarded in order (each
EQUALS_MATCHed at its position) and each value as it is read.  A builtin type's namespace
(`object.__dict__`) never changes: it is read without guards.
"""

from __future__ import annotations

from framejit.guards import GuardKind

from ..exc import Unsupported
from ..sources import AttrSource, DictKeyAtSource, ItemSource
from .base import ConstantVariable, VariableTracker
from .exceptions import observed

_VIEWS = ("keys", "values", "items")


class ClassDictVariable(VariableTracker):
    """`owner.<attr>`: `cls.__dict__` of a class tracker that has a source (or of a builtin
    type), a module's `__dict__`, `sys.modules`."""

    def __init__(self, cls_vt: VariableTracker, attr: str = "__dict__"):
        self.cls_vt = cls_vt
        self.attr = attr

    @property
    def namespace(self):
        return getattr(self.cls_vt.value, self.attr)

    def python_type(self) -> type:
        return type(self.namespace)

    def _static(self) -> bool:
        from .builtins import is_static_type

        return is_static_type(self.cls_vt.value)

    def _dict_source(self, tx):
        """The namespace's source, for guards; None for a builtin type (nothing to guard)."""
        if self._static():
            return None
        if tx.output.side_effects.has_pending_attrs(self.cls_vt):
            raise Unsupported(f"{self.attr} of an object after a store to one of its attributes")
        if self.namespace is tx.root.f_globals and tx.output.side_effects.stores_globals():
            raise Unsupported("the module's __dict__ after a global store")
        if self.cls_vt.source is None:
            raise Unsupported(f"{self.attr} of an object without a source")
        return AttrSource(self.cls_vt.source, self.attr)

    def _read(self, tx, key) -> tuple[bool, VariableTracker | None]:
        from .builder import wrap

        dict_source = self._dict_source(tx)
        namespace = self.namespace
        present = key in namespace
        if dict_source is None:
            return present, wrap(tx, namespace[key], None) if present else None
        tx.output.add_guard(
            ItemSource(dict_source, key), GuardKind.DICT_CONTAINS, present, origin=tx.origin()
        )
        if not present:
            return False, None
        return True, wrap(tx, namespace[key], ItemSource(dict_source, key))

    def length(self, tx) -> VariableTracker:
        """len(namespace): the number of names it holds, guarded (LENGTH_CHECK: a name
        added or deleted recompiles)."""
        dict_source = self._dict_source(tx)
        namespace = self.namespace
        if dict_source is not None:
            tx.output.add_guard(
                dict_source, GuardKind.LENGTH_CHECK, len(namespace), origin=tx.origin()
            )
        return ConstantVariable(len(namespace))

    def snapshot(self, tx):
        """The whole namespace as a dict tracker: its keys guarded in order, each value
        through its own source."""
        from .builder import wrap
        from .containers import DictVariable

        dict_source = self._dict_source(tx)
        namespace = self.namespace
        if any(not isinstance(k, str) for k in namespace):
            raise Unsupported(f"{self.attr} with a non-str key")
        self.length(tx)
        items = {}
        for i, (key, value) in enumerate(namespace.items()):
            value_source = None
            if dict_source is not None:
                tx.output.add_guard(
                    DictKeyAtSource(dict_source, i), GuardKind.EQUALS_MATCH, key,
                    origin=tx.origin(),
                )  # fmt: skip
                value_source = ItemSource(dict_source, key)
            items[key] = wrap(tx, value, value_source)
        return DictVariable(items)

    def unpack(self, tx) -> list[VariableTracker]:
        return [ConstantVariable(k) for k in self.snapshot(tx).items]

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name == "__len__" and not args and not kwargs:
            return self.length(tx)
        if name in (*_VIEWS, "__iter__", "copy") and not args and not kwargs:
            return self.snapshot(tx).call_method(tx, name, [], {})
        if kwargs or not args or not args[0].is_python_constant():
            raise Unsupported(f"{self.attr}.{name} with these arguments")
        key = args[0].as_python_constant()
        if not isinstance(key, str):
            raise Unsupported(f"{self.attr} read with a non-str key")
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
        raise Unsupported(f"{self.attr}.{name}")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__getitem__", [index], {})

    def __repr__(self) -> str:
        return f"ClassDictVariable({self.cls_vt!r}.{self.attr})"
