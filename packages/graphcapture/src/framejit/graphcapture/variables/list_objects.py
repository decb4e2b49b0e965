"""Instances of list subclasses (transformers' LogitsProcessorList, StoppingCriteriaList):
their list part.

Such an object has Python attributes (its `__dict__`) and list contents.  The contents
are a `ListVariable` (`list_storage`): for an object built in the trace, filled by the
traced `list.__init__` / `self.extend(...)` / `super().append(...)`; for one read from
the frame's inputs, its length guarded and its items wrapped through `list.__len__` and
`list.__getitem__` (never the class's own methods, which may do anything: they are run
only where the program calls them, inlined).  list's C methods (`append`, `extend`,
`__getitem__`, ...) reached through `super()`, `list.append(obj, x)`, or looked up on the
object where the class does not override them in Python, act on that storage.  Mutating
an object read from outside is recorded on its storage (whose source is the object's)
and replayed once after the graph with list's own slice assignment, past a
`__setitem__` the class overrides.
"""

from __future__ import annotations

import types

from ..exc import Unsupported
from ..sources import ItemSource, ListItemSource
from .base import VariableTracker


def list_base(cls) -> type | None:
    """list when `cls` derives from it, else None."""
    return list if isinstance(cls, type) and issubclass(cls, list) else None


def is_list_slot(attr) -> bool:
    """`attr` is a C method of list (a slot wrapper or method descriptor)."""
    return (
        isinstance(attr, (types.WrapperDescriptorType, types.MethodDescriptorType))
        and getattr(attr, "__objclass__", None) is list
    )


def list_storage(tx, vt: VariableTracker):
    """The ListVariable holding a list-subclass object's contents (None: not one)."""
    from .objects import UserDefinedObjectVariable

    if not isinstance(vt, UserDefinedObjectVariable) or list_base(type(vt.value)) is None:
        return None
    storage = getattr(vt, "list_items", None)
    if storage is None:
        storage = vt.list_items = _read_storage(tx, vt)
    return storage


def new_storage():
    from .containers import ListVariable

    return ListVariable([])


def _read_storage(tx, vt):
    from framejit.guards import GuardKind, ListLenSource

    from .builder import wrap
    from .containers import ListVariable

    obj, source = vt.value, vt.source
    if source is None:
        raise Unsupported(f"contents of a {type(obj).__name__} without a source")
    cls = type(obj)
    n = list.__len__(obj)
    if cls.__len__ is list.__len__:
        tx.output.add_guard(source, GuardKind.LENGTH_CHECK, n, origin=tx.origin())
    else:
        tx.output.add_guard(ListLenSource(source), GuardKind.EQUALS_MATCH, n, origin=tx.origin())
    item_source = ItemSource if cls.__getitem__ is list.__getitem__ else ListItemSource
    items = [wrap(tx, list.__getitem__(obj, i), item_source(source, i)) for i in range(n)]
    storage = ListVariable(items, source)
    storage.replay_past_override = True  # side_effects: list.__setitem__(obj, slice, new)
    return storage


class ListSlotMethod(VariableTracker):
    """A list C method bound to a list-subclass object: runs on its storage."""

    def __init__(self, obj: VariableTracker, name: str):
        self.obj = obj
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .base import ConstantVariable
        from .containers import IteratorVariable, ListVariable

        storage = list_storage(tx, self.obj)
        name = self.name
        if kwargs and name != "sort":
            raise Unsupported(f"TypeError: list.{name}() takes no keyword arguments")
        if name == "__init__":
            if len(args) > 1:
                raise Unsupported("TypeError: list expected at most 1 argument")
            new = args[0].unpack(tx) if args else []  # (read before the clear: `l.__init__(l)`)
            storage.call_method(tx, "clear", [], {})
            storage.call_method(tx, "extend", [ListVariable(new)], {})
            return ConstantVariable(None)
        if name == "__iter__":
            return IteratorVariable(storage.unpack(tx))
        if name == "__reversed__":
            return IteratorVariable(storage.unpack(tx)[::-1])
        if name == "__iadd__":
            storage.call_method(tx, "extend", args, {})
            return self.obj
        if name == "__add__":
            if len(args) != 1 or not isinstance(args[0], ListVariable):
                raise Unsupported("list.__add__ of a non-list")
            return ListVariable(storage.unpack(tx) + args[0].unpack(tx))
        if name == "__bool__":
            return ConstantVariable(storage.truth(tx))
        return storage.call_method(tx, name, args, kwargs)

    def __repr__(self) -> str:
        return f"ListSlotMethod({self.name})"


def rebuild_list_object(cls, attrs: dict, items: list):
    """A list-subclass object made in the trace, rebuilt after the graph: its contents put
    with list's own extend (the class's __init__ and methods are not run again), then its
    attributes."""
    obj = list.__new__(cls)
    list.extend(obj, items)
    if attrs:
        obj.__dict__.update(attrs)
    return obj
