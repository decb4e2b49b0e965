"""`descriptor.__get__(obj)` on a C data descriptor (a getset or member descriptor, as
`torch.Tensor.shape` is): the attribute read it stands for.

Called on an object whose class finds that very descriptor for its name, `d.__get__(obj)`
is `obj.<name>` (a data descriptor wins over the instance __dict__); `d.__get__(None, cls)`
is `d` itself.  The descriptor is guarded by identity: another one recompiles.
"""

from __future__ import annotations

import types

import torch

from framejit.guards import GuardKind

from ..exc import Unsupported
from ..sources import AttrSource
from .base import VariableTracker

_C_DATA_DESCRIPTORS = (types.GetSetDescriptorType, types.MemberDescriptorType)
# attribute lookup where a data descriptor of the class wins (type's, for a class object:
# `type.__dict__["__dict__"].__get__(C)` is `C.__dict__`)
_GENERIC_GETATTR = (object.__getattribute__, type.__getattribute__)


def descriptor_get_call(tx, wrapper_vt, args, kwargs) -> VariableTracker | None:
    """The call `wrapper_vt(*args)` when wrapper_vt is a C descriptor's bound `__get__`;
    None: it is not one."""
    from .objects import _class_lookup
    from .tensor import TensorVariable

    wrapper = wrapper_vt.value
    descriptor = getattr(wrapper, "__self__", None)
    if (
        type(wrapper).__name__ != "method-wrapper"
        or getattr(wrapper, "__name__", None) != "__get__"
        or not isinstance(descriptor, _C_DATA_DESCRIPTORS)
    ):
        return None
    if kwargs or not 1 <= len(args) <= 2:
        raise Unsupported("descriptor __get__ with unusual arguments")
    if wrapper_vt.source is None:
        raise Unsupported("descriptor __get__ of a descriptor without a source")
    tx.output.add_guard(
        AttrSource(wrapper_vt.source, "__self__"), GuardKind.ID_MATCH, descriptor,
        origin=tx.origin(),
    )  # fmt: skip
    obj = args[0]
    if obj.is_python_constant() and obj.as_python_constant() is None:
        if len(args) == 1:
            raise Unsupported("TypeError: __get__(None, None) is invalid")
        return _wrap_descriptor(tx, wrapper_vt, descriptor)
    if isinstance(obj, TensorVariable):
        cls = obj.python_cls or torch.Tensor
    else:
        try:
            cls = obj.python_type()
        except Unsupported:
            return None
    name = descriptor.__name__
    if _class_lookup(cls, name) is not descriptor or cls.__getattribute__ not in _GENERIC_GETATTR:
        raise Unsupported(f"{descriptor!r}.__get__ on an object whose class reads {name} otherwise")
    return obj.var_getattr(tx, name)


def _wrap_descriptor(tx, wrapper_vt, descriptor) -> VariableTracker:
    from .builder import wrap

    return wrap(tx, descriptor, AttrSource(wrapper_vt.source, "__self__"))
