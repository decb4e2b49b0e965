"""Python builtins on symbolic ints: traced as graph nodes where torch has a symbolic
counterpart, specialised (guarded) where Python needs the number itself.

`max(n, 4)`, `min`, `abs(n)`, `int(n)`, `float(n)` of a SymInt stay symbolic (torch.sym_max,
torch.sym_min, abs, the int itself, torch.sym_float), one graph for every size as
torch.compile's.  Every other foldable builtin (str, repr, format, hash, divmod, round,
math.*) and every constant-only consumer (a dict key, `[0] * n`, indexing a constant
tuple) specialises the symbol: the ShapeEnv guards its value, so another value recompiles
(torch.compile specialises these too).
"""

from __future__ import annotations

import operator

import torch

from .base import ConstantVariable, VariableTracker, fold
from .sym_node import SymNodeVariable, specialised
from .tensor import ItemVariable


def _plain_int(vt: VariableTracker) -> bool:
    """A symbolic int, or an int constant (not a bool: max(n, True) is True or n)."""
    if isinstance(vt, SymNodeVariable):
        return vt.numpy_type is None and isinstance(vt.example, torch.SymInt)
    return vt.is_python_constant() and type(vt.as_python_constant()) is int


def _symbolic_minmax(fn):
    sym_fn = torch.sym_max if fn is max else torch.sym_min

    def handler(tx, *args, **kwargs):
        if kwargs or len(args) < 2 or not all(_plain_int(a) for a in args):
            return None
        if not any(isinstance(a, SymNodeVariable) for a in args):
            return None
        result = args[0]
        for other in args[1:]:  # ints: which of equal items Python returns does not show
            if isinstance(result, SymNodeVariable) or isinstance(other, SymNodeVariable):
                result = tx.output.call_op("call_function", sym_fn, [result, other], {})
            else:
                result = ConstantVariable(
                    fn(result.as_python_constant(), other.as_python_constant())
                )
        return result

    return handler


def _symbolic_abs(tx, x=None, *rest, **kwargs):
    if rest or kwargs or not isinstance(x, SymNodeVariable) or not _plain_int(x):
        return None
    return tx.output.call_op("call_function", operator.abs, [x], {})


def _symbolic_int(tx, x=None, *rest, **kwargs):
    if rest or kwargs or not isinstance(x, SymNodeVariable) or not _plain_int(x):
        return None
    return x  # int(n) of an int is n


def _symbolic_float(tx, x=None, *rest, **kwargs):
    if rest or kwargs or not isinstance(x, SymNodeVariable) or not _plain_int(x):
        return None
    return tx.output.call_op("call_function", torch.sym_float, [x], {})


def captured_bool(tx, x=None, *rest, **kwargs):
    """`bool(t.item())` in a fullgraph trace: `item != 0` as a graph node (the number is
    unknown while tracing: torch.compile's capture_scalar_outputs makes it the same node)."""
    if rest or kwargs or not isinstance(x, ItemVariable):
        return None
    if isinstance(x.example, torch.SymBool):
        return x
    zero = ConstantVariable(0.0 if isinstance(x.example, torch.SymFloat) else 0)
    return tx.output.call_op("call_function", operator.ne, [x, zero], {})


_SYMBOLIC = {
    max: _symbolic_minmax(max),
    min: _symbolic_minmax(min),
    abs: _symbolic_abs,
    int: _symbolic_int,
    float: _symbolic_float,
    bool: captured_bool,
}


def _chain(first, then):
    def handler(tx, *args, **kwargs):
        result = first(tx, *args, **kwargs)
        if result is None and then is not None:
            result = then(tx, *args, **kwargs)
        return result

    return handler


def install(handlers: dict) -> None:
    """Put the symbolic handlers in front of the builtins' own (BUILTIN_HANDLERS)."""
    for fn, symbolic in _SYMBOLIC.items():
        handlers[fn] = _chain(symbolic, handlers.get(fn))


def specialised_arguments(args: list, kwargs: dict) -> tuple[list, dict] | None:
    """The arguments of a foldable builtin with their symbolic ints specialised (guarded);
    None when none is symbolic."""
    values = [*args, *kwargs.values()]
    if not any(isinstance(v, SymNodeVariable) for v in values):
        return None
    return [specialised(a) for a in args], {k: specialised(v) for k, v in kwargs.items()}


def constant_repeat(op, a: VariableTracker, b: VariableTracker) -> VariableTracker | None:
    """`n * (1.0,)`, `"-" * n` with n symbolic: n specialised (guarded), the constant folded."""
    if op not in (operator.mul, operator.imul):
        return None
    for other in (a, b):
        if other.is_python_constant() and type(other.as_python_constant()) in (tuple, str, bytes):
            a, b = specialised(a), specialised(b)
            return ConstantVariable(fold(op, a.as_python_constant(), b.as_python_constant()))
    return None
