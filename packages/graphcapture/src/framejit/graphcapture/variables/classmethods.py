"""`C.name` / `obj.name` / `super().name` where the class holds a classmethod: its
function bound to the class, or, for a classmethod wrapping another descriptor
(`@classmethod` over `@property`, chained by Python 3.9-3.12), that descriptor's
`__get__(C, type(C))`: the property's getter called with the class.
"""

from __future__ import annotations

import sys
import types

from ..exc import Unsupported
from .base import VariableTracker
from .functions import UserFunctionVariable, UserMethodVariable

# 3.13 dropped the chaining: classmethod(property) binds the property object itself
_CHAINS_DESCRIPTORS = sys.version_info < (3, 13)


def bind_classmethod(tx, attr: classmethod, cls_vt: VariableTracker) -> VariableTracker:
    func = attr.__func__
    if _CHAINS_DESCRIPTORS and isinstance(func, property):
        if not isinstance(func.fget, types.FunctionType):
            raise Unsupported("classmethod over a property without a Python getter")
        return UserFunctionVariable(func.fget).call_function(tx, [cls_vt], {})
    return UserMethodVariable(func, cls_vt)
