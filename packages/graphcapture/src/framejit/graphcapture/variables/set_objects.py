"""Instances of set subclasses with Python methods of their own (`class CustomSet(set)`
overriding `add`): their set part.

Such an object built in the trace has Python attributes (its `__dict__`) and set contents,
a `SetVariable` (`set_storage`) filled by the traced `set.__init__`, `super().add(...)`,
`set.update(obj, ...)`.  set's C methods reached through `super()`, `set.add(obj, x)`, or
looked up on the object where the class does not override them in Python act on that
storage; the class's own methods are inlined.  An object read from the frame's inputs has
no storage here (reading its contents is a graph break).  A subclass that defines nothing
is a plain `SetVariable` with its type (user_classes.bare_set_subclass).
"""

from __future__ import annotations

import types

from ..exc import Unsupported
from .base import VariableTracker


def set_base(cls) -> type | None:
    """set when `cls` derives from it, else None (frozenset subclasses are not built here)."""
    return set if isinstance(cls, type) and issubclass(cls, set) else None


def is_set_slot(attr) -> bool:
    """`attr` is a C method of set (a slot wrapper or method descriptor)."""
    return (
        isinstance(attr, (types.WrapperDescriptorType, types.MethodDescriptorType))
        and getattr(attr, "__objclass__", None) is set
    )


def set_storage(tx, vt: VariableTracker):
    """The SetVariable holding a set-subclass object's contents (None: not one)."""
    from .objects import UserDefinedObjectVariable

    if not isinstance(vt, UserDefinedObjectVariable) or set_base(type(vt.value)) is None:
        return None
    storage = getattr(vt, "set_items", None)
    if storage is None:
        raise Unsupported(f"contents of a {type(vt.value).__name__} made outside the trace")
    return storage


def new_storage():
    from .sets import SetVariable

    return SetVariable([])


class SetSlotMethod(VariableTracker):
    """A set C method bound to a set-subclass object: runs on its storage."""

    def __init__(self, obj: VariableTracker, name: str):
        self.obj = obj
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .base import ConstantVariable
        from .containers import IteratorVariable
        from .sets import SetVariable

        storage = set_storage(tx, self.obj)
        name = self.name
        if kwargs:
            raise Unsupported(f"TypeError: set.{name}() takes no keyword arguments")
        if name == "__init__":
            if len(args) > 1:
                raise Unsupported("TypeError: set expected at most 1 argument")
            new = args[0].unpack(tx) if args else []  # (read before the clear: `s.__init__(s)`)
            storage.call_method(tx, "clear", [], {})
            storage.call_method(tx, "update", [SetVariable(new)], {})
            return ConstantVariable(None)
        if name == "__iter__":
            return IteratorVariable(storage.unpack(tx))
        if name == "__bool__":
            return ConstantVariable(storage.truth(tx))
        return storage.call_method(tx, name, args, kwargs)

    def __repr__(self) -> str:
        return f"SetSlotMethod({self.name})"


def rebuild_set_object(cls, attrs: dict, items: tuple):
    """A set-subclass object made in the trace, rebuilt after the graph: its contents put
    with set's own update, in their order (the class's __init__ and methods are not run
    again), then its attributes."""
    obj = set.__new__(cls)
    set.update(obj, items)
    if attrs:
        obj.__dict__.update(attrs)
    return obj
