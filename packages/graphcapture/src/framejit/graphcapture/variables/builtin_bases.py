"""The builtin container a user class derives from (dict, OrderedDict, list, set): which
one, its C methods bound to an object of the class, and the tracker holding the object's
contents.  One table over dict_objects.py, list_objects.py and set_objects.py."""

from __future__ import annotations

from .dict_objects import DICT_BASES, DictSlotMethod, dict_base, dict_storage, is_dict_slot
from .list_objects import ListSlotMethod, is_list_slot, list_base, list_storage
from .set_objects import SetSlotMethod, is_set_slot, set_base, set_storage

# (the base classes' test, "attr is one of its C methods", bound method tracker, storage)
_BASES = (
    (dict_base, is_dict_slot, DictSlotMethod, dict_storage),
    (list_base, is_list_slot, ListSlotMethod, list_storage),
    (set_base, is_set_slot, SetSlotMethod, set_storage),
)

# builtin classes a traced user class may derive from (their instances get storage)
CONTAINER_BASES = (*DICT_BASES, list, set)


def container_base(cls) -> type | None:
    """The builtin container `cls` derives from (dict, OrderedDict, list or set), or None."""
    for base_of, *_ in _BASES:
        base = base_of(cls)
        if base is not None:
            return base
    return None


def slot_method(obj, cls, attr, name: str):
    """`attr`, a C method of the builtin container `cls` derives from, bound to `obj` (an
    object of `cls`) and acting on its contents; None when `attr` is not one."""
    for base_of, is_slot, method, _ in _BASES:
        if is_slot(attr) and base_of(cls) is not None:
            return method(obj, name)
    return None


def contents(tx, vt):
    """The tracker of a dict-, list- or set-subclass object's contents (None: not one)."""
    for *_, storage in _BASES:
        found = storage(tx, vt)
        if found is not None:
            return found
    return None
