"""framejit.guards: guard specs compiled into fast check functions with readable code parts.

Public API (the contract in DESIGN.md): sources, ``Guard``/``GuardKind``,
``compile_guards`` and ``global_state_guard``; ``mirror_check`` is the plain-Python
reference evaluation of a guard set; ``globals_ref``/``read_globals`` reach a globals dict
weakly (what checks use for ``G``); ``numpy_number`` tells the numpy scalars that
EQUALS_MATCH guards by value.
"""

from .compiler import compile_guards
from .global_state import GlobalStateSnapshot, global_state_guard
from .guard import Guard, GuardKind
from .lifetime import globals_ref, read_globals
from .literals import numpy_number
from .mirror import mirror_check
from .shape_expr import ShapeExpr
from .source import (
    AttrSource,
    BufferSource,
    BuiltinSource,
    CallSource,
    CellContentsSource,
    ClosureCellSource,
    DictItemSource,
    DictKeyAtSource,
    DictValueAtSource,
    EnvironSource,
    GlobalSource,
    GlobalsSource,
    GlobalStateSource,
    HandledExceptionSource,
    ItemSource,
    ListItemSource,
    ListLenSource,
    LocalSource,
    NNModuleSource,
    NumelSource,
    NumpyTensorSource,
    ParamSource,
    SetItemAtSource,
    ShapeSource,
    Source,
    StrideSource,
    SubclassesSource,
    TupleIteratorLenSource,
    TupleIteratorSource,
    TypeSource,
    WeakRefCallSource,
)
from .tensor_spec import TensorSpec

__all__ = [
    "AttrSource",
    "BufferSource",
    "BuiltinSource",
    "CallSource",
    "CellContentsSource",
    "ClosureCellSource",
    "DictItemSource",
    "DictKeyAtSource",
    "DictValueAtSource",
    "EnvironSource",
    "GlobalSource",
    "GlobalStateSnapshot",
    "GlobalStateSource",
    "GlobalsSource",
    "Guard",
    "GuardKind",
    "HandledExceptionSource",
    "ItemSource",
    "ListItemSource",
    "ListLenSource",
    "LocalSource",
    "NNModuleSource",
    "NumelSource",
    "NumpyTensorSource",
    "ParamSource",
    "SetItemAtSource",
    "ShapeExpr",
    "ShapeSource",
    "Source",
    "StrideSource",
    "SubclassesSource",
    "TensorSpec",
    "TupleIteratorLenSource",
    "TupleIteratorSource",
    "TypeSource",
    "WeakRefCallSource",
    "compile_guards",
    "global_state_guard",
    "globals_ref",
    "mirror_check",
    "numpy_number",
    "read_globals",
]
