"""`torch.LongTensor(data)`, `torch.FloatTensor(data)`, ...: the legacy tensor types called
with a list or tuple of numbers (Python's or numpy's scalars) build the tensor
`torch.tensor(data, dtype=T.dtype, device=...)` builds, a graph node.  Any other call
(sizes, `LongTensor(2, 3)`, which allocates uninitialised memory; a tensor or storage
argument) stays a graph break.
"""

from __future__ import annotations

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker

LEGACY_TENSOR_TYPE = type(torch.FloatTensor)


def _is_number(value) -> bool:
    from framejit.guards import numpy_number

    return type(value) in (int, float, bool) or numpy_number(value) is not None


def _number_values(value) -> bool:
    if type(value) in (list, tuple):
        return all(_number_values(v) for v in value)
    return _is_number(value)


def _constant_numbers(data: VariableTracker) -> bool:
    """A list or tuple (nested or not) of number constants."""
    from .containers import BaseListVariable

    if data.is_python_constant() and type(data.as_python_constant()) in (list, tuple):
        return _number_values(data.as_python_constant())
    if not isinstance(data, BaseListVariable) or data.python_type() not in (list, tuple):
        return False
    return all(
        _constant_numbers(item)
        or (item.is_python_constant() and _is_number(item.as_python_constant()))
        for item in data.items
    )


def _traced_scalars(data: VariableTracker) -> bool:
    """A flat list or tuple of numbers, some of them numpy scalars the trace computed."""
    from .containers import BaseListVariable
    from .numpy_arrays import NdarrayVariable

    return (
        isinstance(data, BaseListVariable)
        and data.python_type() in (list, tuple)
        and bool(data.items)
        and all(
            (isinstance(i, NdarrayVariable) and i.scalar)
            or (i.is_python_constant() and _is_number(i.as_python_constant()))
            for i in data.items
        )
    )


def construct_legacy(tx, cls, args: list, kwargs: dict) -> VariableTracker:
    from .numpy_arrays import NdarrayVariable, from_numpy
    from .objects import TorchFunctionVariable

    if kwargs or len(args) != 1:
        raise Unsupported(f"{cls.__name__}(...) other than of a list of numbers")
    dtype = ConstantVariable(cls.dtype)
    device = ConstantVariable("cuda" if cls.is_cuda else "cpu")
    tensor = TorchFunctionVariable(torch.tensor)
    if _constant_numbers(args[0]):
        return tensor.call_function(tx, [args[0]], {"dtype": dtype, "device": device})
    if _traced_scalars(args[0]) and not cls.is_cuda:
        # each number as the 0-d tensor torch.tensor makes of it, then stacked
        items = [
            from_numpy(tx, torch.tensor, [i], {"dtype": dtype})
            if isinstance(i, NdarrayVariable)
            else tensor.call_function(tx, [i], {"dtype": dtype})
            for i in args[0].items
        ]
        from .containers import ListVariable

        return TorchFunctionVariable(torch.stack).call_function(tx, [ListVariable(items)], {})
    raise Unsupported(f"{cls.__name__}(...) other than of a list of numbers")
