"""Variable trackers: symbolic stand-ins for the values a traced frame holds, with their Sources."""

from .base import ConstantVariable, NullVariable, VariableTracker
from .builder import wrap, wrap_constant_or_unsupported
from .containers import (
    DictVariable,
    IteratorVariable,
    ListVariable,
    RangeVariable,
    SliceVariable,
    TupleVariable,
)
from .functions import (
    CellVariable,
    FrameFreeVarCell,
    NestedUserFunctionVariable,
    UserFunctionVariable,
)
from .tensor import TensorVariable

__all__ = [
    "CellVariable",
    "ConstantVariable",
    "DictVariable",
    "FrameFreeVarCell",
    "IteratorVariable",
    "ListVariable",
    "NestedUserFunctionVariable",
    "NullVariable",
    "RangeVariable",
    "SliceVariable",
    "TensorVariable",
    "TupleVariable",
    "UserFunctionVariable",
    "VariableTracker",
    "wrap",
    "wrap_constant_or_unsupported",
]
