"""Instances of dict subclasses (transformers' ModelOutput, registries): their dict part.

Such an object has Python attributes (its `__dict__`) and dict contents.  The contents
are a `DictVariable` (`dict_storage`): for an object built in the trace, filled by the
traced `dict.__init__` / `super().__setitem__` / ...; for one read from the frame's
inputs, its keys guarded (DICT_KEYS, read with `dict.keys`, never the class's own
methods) and its values wrapped.  The dict's C methods (`keys`, `items`, `get`,
`__setitem__`, ...) reached through `super()`, or looked up on the object where the
class does not override them in Python, act on that storage.  A dict subclass read from
outside the trace is read-only here: mutating it is a graph break.
"""

from __future__ import annotations

import collections
import types

from ..exc import Unsupported
from ..sources import DictItemSource, ItemSource
from .base import VariableTracker

# the builtin dict bases a traced class may have, and the methods that change contents
DICT_BASES = (dict, collections.OrderedDict)
_MUTATING = frozenset(
    {"__init__", "__setitem__", "__delitem__", "update", "pop", "popitem", "setdefault", "clear"}
    | {"move_to_end", "__ior__"}
)


def dict_base(cls: type) -> type | None:
    """The builtin dict class `cls` derives from (OrderedDict before dict), or None."""
    for base in DICT_BASES[::-1]:
        if isinstance(cls, type) and issubclass(cls, base):
            return base
    return None


def is_dict_slot(attr) -> bool:
    """`attr` is a C method of dict/OrderedDict (a slot wrapper or method descriptor)."""
    return (
        isinstance(
            attr,
            (
                types.WrapperDescriptorType,
                types.MethodDescriptorType,
                types.ClassMethodDescriptorType,
            ),
        )
        and getattr(attr, "__objclass__", None) in DICT_BASES
    )


def dict_storage(tx, vt: VariableTracker):
    """The DictVariable holding a dict-subclass object's contents (None: not one)."""
    from .objects import UserDefinedObjectVariable

    if not isinstance(vt, UserDefinedObjectVariable):
        return None
    storage = getattr(vt, "dict_items", None)
    if storage is not None:
        return storage
    base = dict_base(type(vt.value))
    if base is None:
        return None
    vt.dict_items = _read_storage(tx, vt, base)
    return vt.dict_items


def _read_storage(tx, vt, base):
    from framejit.guards import GuardKind

    from .builder import wrap
    from .containers import DictVariable

    obj, source = vt.value, vt.source
    if source is None:
        raise Unsupported(f"contents of a {type(obj).__name__} without a source")
    # the guards and rebuilt values read each item with the dict's own read, never with a
    # __getitem__ the class overrides (ModelOutput's)
    item_source = ItemSource if type(obj).__getitem__ is base.__getitem__ else DictItemSource
    keys = list(dict.keys(obj))
    if not all(type(k) in (str, int) for k in keys):
        raise Unsupported("dict with non-str/int keys")
    tx.output.add_guard(source, GuardKind.DICT_KEYS, obj, origin=tx.origin())
    items = {k: wrap(tx, dict.__getitem__(obj, k), item_source(source, k)) for k in keys}
    return DictVariable(items, None, user_cls=base)


class DictSlotMethod(VariableTracker):
    """A dict C method bound to a dict-subclass object: runs on its storage."""

    def __init__(self, obj: VariableTracker, name: str):
        self.obj = obj
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .base import ConstantVariable

        storage = dict_storage(tx, self.obj)
        if self.name in _MUTATING and not getattr(self.obj, "made_in_trace", False):
            raise Unsupported(f"{self.name} on a {type(self.obj.value).__name__} from outside")
        if self.name == "__init__":
            if len(args) > 1:
                raise Unsupported("TypeError: dict expected at most 1 argument")
            if args or kwargs:
                storage.call_method(tx, "update", args, kwargs)
            return ConstantVariable(None)
        return storage.call_method(tx, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"DictSlotMethod({self.name})"


def rebuild_dict_object(cls, base, attrs: dict, items: dict):
    """A dict-subclass object made in the trace, rebuilt after the graph: its contents put
    with the base's own __setitem__ (the class's is not run again), then its attributes."""
    obj = base.__new__(cls)
    for key, value in items.items():
        base.__setitem__(obj, key, value)
    obj.__dict__.update(attrs)
    return obj
