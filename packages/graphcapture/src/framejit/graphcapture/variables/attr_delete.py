"""`del obj.name` / delattr(obj, name) in the trace.

A class's own Python `__delattr__` is inlined; object's (what `super().__delattr__` reaches
too) removes an instance attribute: from the __dict__ the trace builds for an object it
made, else recorded as a side effect replayed after the graph (DELETE_ATTR on the real
object), which later reads in the trace see.  An attribute that is not there raises
AttributeError in eager: the trace breaks and eager raises it.
"""

from __future__ import annotations

import types

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker


def delete_attr(tx, obj: VariableTracker, name: str) -> VariableTracker:
    from .objects import _OBJECT_DELATTR, NNModuleVariable, UserDefinedObjectVariable, _class_lookup

    if isinstance(obj, UserDefinedObjectVariable):
        delattr_fn = _class_lookup(type(obj.value), "__delattr__")
        if delattr_fn is not _OBJECT_DELATTR:
            if not isinstance(delattr_fn, types.FunctionType):
                raise Unsupported(f"{type(obj.value).__name__}.__delattr__ is not Python")
            from .functions import UserMethodVariable
            from .objects import _guard_class_attr

            _guard_class_attr(tx, obj, "__delattr__", delattr_fn)
            UserMethodVariable(delattr_fn, obj).call_function(tx, [ConstantVariable(name)], {})
            return ConstantVariable(None)
        return object_delattr(tx, obj, name)
    if isinstance(obj, NNModuleVariable):
        return _module_delattr(tx, obj, name)
    raise Unsupported(f"attribute delete on {obj}")


def object_delattr(tx, obj: VariableTracker, name: str) -> VariableTracker:
    """object.__delattr__(obj, name): an instance attribute leaves the object's __dict__."""
    from .objects import _MISSING, _class_lookup, _guard_class_attr

    cls = type(obj.value)
    _guard_class_attr(tx, obj, "__delattr__", _class_lookup(cls, "__delattr__"))
    class_attr = _class_lookup(cls, name)
    made_in_trace = getattr(obj, "made_in_trace", False)
    # a data descriptor's __delete__ runs instead; a plain class attribute shows once the
    # instance's is gone, which reads of an object the trace made see (its attrs, then its
    # class), but reads of a real object's would need the class attribute guarded too
    if class_attr is not _MISSING and (not made_in_trace or _is_data_descriptor(class_attr)):
        raise Unsupported(f"delete of {name!r}, which {cls.__name__} also defines")
    effects = tx.output.side_effects
    if made_in_trace:
        if name not in obj.attrs:
            raise Unsupported(f"AttributeError: delattr of {name!r}, not an instance attribute")
        effects.writes += 1
        effects.write_targets.append(obj)
        del obj.attrs[name]
        return ConstantVariable(None)
    _delete_sourced(tx, obj, name, getattr(obj.value, "__dict__", None))
    return ConstantVariable(None)


def _is_data_descriptor(value) -> bool:
    kind = type(value)
    return hasattr(kind, "__set__") or hasattr(kind, "__delete__")


def _module_delattr(tx, obj, name: str) -> VariableTracker:
    """nn.Module.__delattr__ of a plain attribute (a parameter, buffer or submodule leaves
    tables the trace reads elsewhere: a break)."""
    module = obj.value
    if type(module).__delattr__ is not torch.nn.Module.__delattr__:
        raise Unsupported(f"{type(module).__name__}.__delattr__")
    for table in ("_parameters", "_buffers", "_modules"):
        if name in module.__dict__.get(table, {}):
            raise Unsupported(f"delete of the module's {table[1:-1]} {name!r}")
    from .objects import _guard_class_attr

    _guard_class_attr(tx, obj, "__delattr__", torch.nn.Module.__delattr__)
    _delete_sourced(tx, obj, name, module.__dict__)
    return ConstantVariable(None)


def _delete_sourced(tx, obj, name: str, instance_dict) -> None:
    effects = tx.output.side_effects
    if obj.source is None or not isinstance(instance_dict, dict):
        raise Unsupported(f"attribute delete on {obj}, which has no source")
    if effects.is_deleted(obj, name):
        raise Unsupported(f"AttributeError: {name!r} was deleted earlier in the frame")
    stored = effects.pending_attr(obj, name) is not None
    existed = name in instance_dict
    if not (stored or existed):
        raise Unsupported(f"AttributeError: delattr of {name!r}, not an instance attribute")
    if "__getattr__" in dir(type(obj.value)) and not isinstance(obj.value, torch.nn.Module):
        raise Unsupported(f"delete on a {type(obj.value).__name__}, which has __getattr__")
    # whether the replay deletes (eager's `del` finds it there) or nothing is left to do
    # (only the trace stored it) depends on the attribute being there when the code runs
    from framejit.guards import GuardKind

    from ..sources import AttrSource

    source = AttrSource(obj.source, name)
    tx.output.add_guard(source, GuardKind.HASATTR, existed, origin=tx.origin())
    effects.delete_attr(obj, name, existed)
