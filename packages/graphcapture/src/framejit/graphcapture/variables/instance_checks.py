"""isinstance(obj, cls) in the trace, through the class's metaclass.

`type.__instancecheck__` and ABCMeta's answer from the object's type (fixed by its guards).
A few torch metaclasses look at the object itself, each modelled from guarded facts:
nn.Parameter / nn.Buffer also accept a tensor flagged `_is_param` / `_is_buffer`, the
legacy tensor types (torch.FloatTensor, ...) compare dtype and device.  Any other
`__instancecheck__` (storages' legacy classes, runtime-checkable Protocols, ...) is a
graph break: eager asks it.
"""

from __future__ import annotations

import abc

import torch

from ..exc import Unsupported
from .base import fold
from .tensor import TensorVariable

_BY_TYPE = (type.__instancecheck__, abc.ABCMeta.__instancecheck__)
_LEGACY_TENSOR_TYPE = type(torch.FloatTensor)  # torch.FloatTensor, torch.LongTensor, ...
_TENSOR_FLAGS = {torch.nn.Parameter: "_is_param", torch.nn.Buffer: "_is_buffer"}


def is_instance(tx, obj, cls, cls_vt=None) -> bool:
    """isinstance(obj, cls); `cls_vt`, the tracker cls came from, gives the classes'
    sources (a metaclass's Python __instancecheck__ is guarded through them)."""
    if not isinstance(cls, tuple):
        return _is_instance_of(tx, obj, cls, cls_vt)
    items = getattr(cls_vt, "items", None)
    vts = items if items is not None and len(items) == len(cls) else [None] * len(cls)
    return any(_is_instance_of(tx, obj, c, vt) for c, vt in zip(cls, vts, strict=True))


def _is_instance_of(tx, obj, c, c_vt) -> bool:
    if isinstance(c, tuple):
        return is_instance(tx, obj, c, c_vt)
    check = getattr(type(c), "__instancecheck__", None)
    if isinstance(obj, TensorVariable) and isinstance(c, _LEGACY_TENSOR_TYPE):
        # their __instancecheck__ reads dtype and device (both guarded), not the class
        return fold(isinstance, obj.as_example(), c)
    if check not in _BY_TYPE and c not in _TENSOR_FLAGS:
        return _metaclass_check(tx, obj, c, c_vt, check)
    try:
        by_type = issubclass(obj.python_type(), c)
    except TypeError as e:
        raise Unsupported(f"TypeError in isinstance: {e}") from e
    if by_type or c not in _TENSOR_FLAGS or not isinstance(obj, TensorVariable):
        return by_type
    from .base import ConstantVariable
    from .builtins import _getattr

    flag = _getattr(tx, obj, ConstantVariable(_TENSOR_FLAGS[c]), ConstantVariable(False))
    return bool(flag.truth(tx))


def _metaclass_check(tx, obj, c, c_vt, check) -> bool:
    """A metaclass's own Python `__instancecheck__`, traced (after CPython's exact-type
    fast path, which never calls it), guarded by identity through the class's source."""
    import types

    from framejit.guards import GuardKind, TypeSource

    from ..sources import AttrSource
    from .objects import UserDefinedClassVariable

    source = getattr(c_vt, "source", None)
    if not isinstance(check, types.FunctionType) or source is None:
        raise Unsupported(
            f"isinstance against {c!r}, whose metaclass has its own __instancecheck__"
        )
    try:
        if obj.python_type() is c:
            return True
    except Unsupported:
        pass
    check_source = AttrSource(TypeSource(source), "__instancecheck__")
    tx.output.add_guard(check_source, GuardKind.ID_MATCH, check, origin=tx.origin())
    from .functions import UserFunctionVariable

    cls_vt = c_vt if isinstance(c_vt, UserDefinedClassVariable) else UserDefinedClassVariable(c)
    return UserFunctionVariable(check).call_function(tx, [cls_vt, obj], {}).truth(tx)
