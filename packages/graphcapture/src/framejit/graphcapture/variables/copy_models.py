"""copy.deepcopy on trackers: what `copy._reconstruct` would build, built in the trace.

transformers' `PreTrainedConfig.get_text_config(decoder=True)` deep-copies the config of an
encoder-decoder model (T5) on every forward, and `to_dict` deep-copies its `__dict__`.
Inlining `copy.deepcopy` would need `id()` of values made in the trace and the C
`object.__reduce_ex__`; this model does the same walk on trackers instead:

- immutable values (numbers, strings, None, dtypes, classes, functions) are themselves,
  as `copy._deepcopy_atomic` keeps them; a tuple is itself when its items are;
- a list or a plain dict becomes a new one made by the trace, its items copied;
- an object of a plain class (`object.__reduce_ex__`, no `__deepcopy__`, `__reduce__`,
  `__getstate__`, `__setstate__`, `__getnewargs*__`, `__slots__` of its own, nor a
  `copyreg` entry) becomes a `NewObjectVariable` of that class whose `__dict__` is a copy
  of the original's.  The original's keys are guarded (DICT_KEYS on its `__dict__`) and
  each value by its own guards as it is read.  The probes deepcopy makes through the
  instance (`getattr(x, "__deepcopy__", None)`, `hasattr(y, "__setstate__")`) are traced
  lookups, so a class's own `__getattribute__` / `__getattr__` answers them as in eager.

Anything else (tensors, modules, other classes, a `memo` argument, a cycle) returns None:
a graph break, and deepcopy runs eagerly.
"""

from __future__ import annotations

import copy
import copyreg
import types

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource
from .base import ConstantVariable, VariableTracker
from .containers import DictVariable, ListVariable, TupleVariable

# the special methods whose presence changes what deepcopy does with an object
_ABSENT = ("__deepcopy__", "__getnewargs_ex__", "__getnewargs__", "__setstate__")
_OBJECTS_OWN = {
    "__reduce_ex__": object.__reduce_ex__,
    "__reduce__": object.__reduce__,
    "__getstate__": getattr(object, "__getstate__", None),  # 3.11+
    "__new__": object.__new__,
}


class _Cycle(Exception):
    pass


def _atomic(vt: VariableTracker) -> bool:
    from .functions import UserFunctionVariable
    from .objects import UserDefinedClassVariable

    if isinstance(vt, ConstantVariable):
        return True  # immutable (CONSTANT_TYPES): deepcopy keeps it or makes an equal one
    return isinstance(vt, (UserDefinedClassVariable, UserFunctionVariable)) and isinstance(
        vt.value, (type, types.FunctionType)
    )


def _plain_object(tx, vt) -> bool:
    """deepcopy of `vt` reduces it with object.__reduce_ex__(4): __newobj__ and __dict__."""
    from .builtins import _hasattr
    from .dict_objects import dict_base
    from .objects import InstanceDictVariable, UserDefinedObjectVariable, _class_lookup
    from .user_classes import NewObjectVariable, _plain_class

    if not isinstance(vt, UserDefinedObjectVariable):
        return False
    cls = type(vt.value)
    if cls in copy._deepcopy_dispatch or cls in copyreg.dispatch_table:
        return False
    if _plain_class(cls) is not None or dict_base(cls) is not None:
        return False
    if any(getattr(klass, "__dict__", {}).get("__slots__") for klass in cls.__mro__):
        return False
    if any(_class_lookup(cls, name) is not own for name, own in _OBJECTS_OWN.items()):
        return False
    if not isinstance(vt, NewObjectVariable) and vt.source is None:
        return False
    # through the instance, as deepcopy asks (a Python __getattribute__ or __getattr__
    # answers as in eager); `y.__dict__.update(state)` must reach the instance dict
    if any(_hasattr(tx, vt, ConstantVariable(name)).value for name in _ABSENT):
        return False
    found = vt.var_getattr(tx, "__dict__")
    return isinstance(found, InstanceDictVariable) and found.obj is vt


def _instance_dict(tx, vt) -> list[tuple[str, VariableTracker]]:
    """The items of an object's __dict__, in order, each with its guard."""
    from framejit.guards import GuardKind

    from .builder import wrap
    from .user_classes import NewObjectVariable

    if isinstance(vt, NewObjectVariable):
        return list(vt.attrs.items())
    if tx.output.side_effects.has_pending_attrs(vt):
        raise Unsupported("deepcopy of an object after an attribute store in the trace")
    real = vt.value.__dict__
    dict_source = AttrSource(vt.source, "__dict__")
    tx.output.add_guard(dict_source, GuardKind.DICT_KEYS, real, origin=tx.origin())
    if not all(type(k) is str for k in real):
        raise Unsupported("deepcopy of an object whose __dict__ has non-str keys")
    return [(k, wrap(tx, v, ItemSource(dict_source, k))) for k, v in real.items()]


def _constant_keys(vt: DictVariable) -> bool:
    from .sets import _ById

    return not any(isinstance(k, _ById) for k in vt.items)  # an object key would be copied


def _copy(tx, vt: VariableTracker, memo: dict) -> VariableTracker:
    from .objects import InstanceDictVariable
    from .user_classes import NewObjectVariable

    if _atomic(vt):
        return vt
    key = id(vt.value) if hasattr(vt, "value") else id(vt)  # the real object, when known
    if key in memo:
        if memo[key] is None:
            raise _Cycle
        return memo[key]
    memo[key] = None  # in progress
    if type(vt) is TupleVariable and vt.namedtuple_cls is None:
        items = [_copy(tx, i, memo) for i in vt.items]
        out = (
            vt
            if all(a is b for a, b in zip(items, vt.items, strict=True))
            else TupleVariable(items)
        )
    elif type(vt) is ListVariable:
        out = ListVariable([])
        memo[key] = out
        out.items = [_copy(tx, i, memo) for i in vt.items]
    elif type(vt) is DictVariable and vt.user_cls is dict and _constant_keys(vt):
        out = DictVariable({})
        memo[key] = out
        out.items = {k: _copy(tx, v, memo) for k, v in vt.items.items()}
    elif isinstance(vt, InstanceDictVariable):
        out = DictVariable({})
        memo[key] = out
        for name, value in _instance_dict(tx, vt.obj):
            out.items[name] = _copy(tx, value, memo)
    elif _plain_object(tx, vt):
        out = NewObjectVariable(type(vt.value))
        memo[key] = out
        for name, value in _instance_dict(tx, vt):
            out.attrs[name] = _copy(tx, value, memo)
    else:
        raise Unsupported(f"copy.deepcopy of {vt}")
    memo[key] = out
    return out


def _deepcopy(tx, x, memo=None):
    if memo is not None:
        return None  # a caller's memo: deepcopy's own Python is not modelled
    try:
        return _copy(tx, x, {})
    except _Cycle:
        return None


COPY_MODELS = {copy.deepcopy: _deepcopy}
