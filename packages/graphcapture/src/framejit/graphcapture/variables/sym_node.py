"""Symbolic sizes in the trace: a SymInt/SymBool with its FX node (SymNodeVariable).

A size of a tensor with symbolic dims is a SymNodeVariable: arithmetic and comparisons on it
are graph nodes (their example values SymInts of the output graph's ShapeEnv).  Where Python
needs the value itself it is specialised, and the ShapeEnv records a guard for it:
a branch (`if n > 4`) guards the direction taken, `range(n)` or any other use as a constant
guards the exact value (`L['x'].size()[0] == 8`).  It is never a Python constant to code that
only asks (`is_python_constant`), so probing never specialises.
"""

from __future__ import annotations

import contextlib
import operator

import torch

from ..exc import Unsupported
from ..sources import source_name
from .base import ConstantVariable, VariableTracker

# in-place operators on ints are the plain ones (ints are immutable)
_NOT_IN_PLACE = {
    operator.iadd: operator.add,
    operator.isub: operator.sub,
    operator.imul: operator.mul,
    operator.ifloordiv: operator.floordiv,
    operator.imod: operator.mod,
    operator.itruediv: operator.truediv,
    operator.ipow: operator.pow,
    operator.ilshift: operator.lshift,
    operator.irshift: operator.rshift,
    operator.iand: operator.and_,
    operator.ior: operator.or_,
    operator.ixor: operator.xor,
}
SYM_TYPES = (torch.SymInt, torch.SymBool, torch.SymFloat)
_PYTHON_TYPE = {torch.SymInt: int, torch.SymBool: bool, torch.SymFloat: float}


class SymNodeVariable(VariableTracker):
    def __init__(self, node, example, shapes=None, source=None, numpy_type=None):
        self.node = node
        self.example = example
        self.shapes = shapes  # the ShapeTracker, to check marked dims after specialising
        self.source = source  # an int argument traced as a symbol: where the int lives
        # np.int64 / np.float64 / np.bool_: eager's value is that numpy number (`n % np.int64(8)`)
        self.numpy_type = numpy_type

    def python_type(self) -> type:
        return self.numpy_type or _PYTHON_TYPE[type(self.example)]

    def as_proxy(self):
        return self.node

    def as_example(self):
        return self.example

    def is_python_constant(self) -> bool:
        return False

    def as_python_constant(self):
        """Specialise: the value as a Python number, guarded to stay this value."""
        with _data_dependent_is_a_break():
            value = _PYTHON_TYPE[type(self.example)](self.example)  # guards `expr == value`
        if self.numpy_type is not None:
            value = self.numpy_type(value)
        _check_marked(self)
        return value

    def truth(self, tx) -> bool:
        with _data_dependent_is_a_break():
            value = bool(self.example)  # guards the direction taken (s0 > 4, or its negation)
        _check_marked(self)
        return value

    def reconstruct(self, cg) -> None:
        if self.source is not None:
            cg.load_source(self.source)  # the argument itself, not a graph output
            return
        if self.numpy_type is None:
            cg.load_graph_output(self)
            return
        cg.add_push_null(lambda: cg.load_const(self.numpy_type))
        cg.load_graph_output(self)
        cg.call(1)

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        ops = {"__add__": operator.add, "__mul__": operator.mul, "__sub__": operator.sub,
               "__floordiv__": operator.floordiv, "__mod__": operator.mod}  # fmt: skip
        if name in ops and len(args) == 1 and not kwargs:
            return sym_binary_op(tx, ops[name], self, args[0])
        if self._int_member(name):
            return self._specialised().call_method(tx, name, args, kwargs)
        raise Unsupported(f"method {name!r} of a symbolic size")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if self._int_member(name):
            return self._specialised().var_getattr(tx, name)
        return super().var_getattr(tx, name)

    # int's other members (bit_length, as_integer_ratio, real, ...) act on the specialised
    # number, guarded, as torch.compile specialises them
    def _int_member(self, name: str) -> bool:
        return self.python_type() is int and hasattr(int, name)

    def _specialised(self) -> ConstantVariable:
        return ConstantVariable(self.as_python_constant())

    def __repr__(self) -> str:
        return f"SymNodeVariable({self.example})"


@contextlib.contextmanager
def _data_dependent_is_a_break():
    """A value computed from Tensor.item() (an unbacked symbol) has no number to guard."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    try:
        yield
    except GuardOnDataDependentSymNode as e:
        raise Unsupported("data-dependent: a Python value computed from Tensor.item()") from e


def _check_marked(vt: SymNodeVariable) -> None:
    if vt.shapes is not None:
        vt.shapes.check_marked()


def specialised(vt: VariableTracker) -> VariableTracker:
    """A symbolic number where Python needs the number itself (a dict key, str(n), `[0] * n`):
    the constant it is now, guarded (the ShapeEnv records `expr == value`); any other
    tracker as it is."""
    if isinstance(vt, SymNodeVariable):
        return ConstantVariable(vt.as_python_constant())
    return vt


def wrap_int_argument(tx, value: int, source) -> VariableTracker | None:
    """An int argument of the frame as a symbol, where the dim policy says so (None: it is
    specialised).  Its type is guarded (a bool or float later recompiles); its value only
    by what the trace assumed of the symbol (the ShapeEnv's guards)."""
    from framejit.guards import GuardKind, ItemSource, LocalSource

    # an item of an argument list or tuple (`counter[0]`) as the argument itself
    root = source.base if isinstance(source, ItemSource) and type(source.key) is int else source
    if type(value) is not int or not isinstance(root, LocalSource):
        return None
    output = tx.output
    if not output.dim_policy.int_dynamic(source_name(source), value):
        return None
    output.add_guard(source, GuardKind.TYPE_MATCH, value, origin=tx.origin())
    node, example = output.int_input(source, value)
    return SymNodeVariable(node, example, output.shapes, source)


def wrap_sym(output, node, example) -> VariableTracker:
    """A tracker for an op's SymInt/SymBool result; a result that folded to a number is a
    constant (and its node goes)."""
    if isinstance(example, SYM_TYPES):
        expr = example.node.expr
        if expr.is_number:
            if not node.users:
                output.graph.erase_node(node)
            return ConstantVariable(_PYTHON_TYPE[type(example)](expr))
        return SymNodeVariable(node, example, output.shapes)
    raise TypeError(f"not a symbolic value: {type(example).__name__}")


def size_variable(output, tensor_node, value, op, dim) -> VariableTracker:
    """`tensor.size(dim)` (or stride/numel, by `op`) as a tracker: an int stays a constant, an
    input's own size symbol is its placeholder, any other expression a sym_size node."""
    if not isinstance(value, torch.SymInt):
        return ConstantVariable(int(value))
    expr = value.node.expr
    if expr.is_number:
        return ConstantVariable(int(expr))
    node = output.sym_node(value)
    if node is None:
        args = (tensor_node,) if dim is None else (tensor_node, dim)
        node = output.create_node("call_function", op, args, {}, value)
    return SymNodeVariable(node, value, output.shapes)


def sym_binary_op(tx, op, a: VariableTracker, b: VariableTracker) -> VariableTracker:
    """`a op b` with a symbolic size on either side and a number (or size) on the other."""
    op = _NOT_IN_PLACE.get(op, op)
    _numpy_numbers()
    numpy_typed = False
    for other in (a, b):
        if isinstance(other, SymNodeVariable):
            numpy_typed = numpy_typed or other.numpy_type is not None
            continue
        value = other.as_python_constant() if other.is_python_constant() else None
        if type(value) in _NUMPY_AS_PYTHON:
            numpy_typed = True
        elif not isinstance(value, (int, float, bool)):
            raise Unsupported(f"{op.__name__} between a symbolic size and {other}")
    if op not in _SYM_OPS:
        raise Unsupported(f"{op.__name__} on a symbolic size")
    if not numpy_typed:
        return tx.output.call_op("call_function", op, [a, b], {})
    if op not in _NUMPY_SYM_OPS and not (
        op in (operator.floordiv, operator.mod)
        and b.is_python_constant()
        and b.as_python_constant()
    ):  # numpy divides by zero to 0 (a warning), Python raises
        raise Unsupported(f"{op.__name__} of a symbolic size and a numpy number")
    result_type = type(op(_sample(a), _sample(b)))
    if result_type not in _NUMPY_AS_PYTHON:
        raise Unsupported(f"{op.__name__} of a symbolic size and a numpy number: {result_type}")
    result = tx.output.call_op("call_function", op, [a, b], {})
    if isinstance(result, SymNodeVariable):
        result.numpy_type = result_type
        return result
    return ConstantVariable(result_type(result.as_python_constant()))


_SYM_OPS = frozenset((
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod,
    operator.truediv, operator.pow, operator.neg, operator.lshift, operator.rshift,
    operator.and_, operator.or_, operator.xor,
))  # fmt: skip
# numpy numbers whose arithmetic is Python's (64-bit; a narrower one rounds or wraps)
_NUMPY_AS_PYTHON: dict[type, type] = {}
_NUMPY_SYM_OPS = frozenset((
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.add, operator.sub, operator.mul,
))  # fmt: skip


def _numpy_numbers() -> None:
    import sys

    np = sys.modules.get("numpy")
    if np is not None and not _NUMPY_AS_PYTHON:
        _NUMPY_AS_PYTHON.update({np.int64: int, np.float64: float, np.bool_: bool})


def _sample(vt: VariableTracker):
    """A number of the operand's eager type, for the result's type (types only)."""
    if not isinstance(vt, SymNodeVariable):
        return vt.as_python_constant()
    hint = vt.example.node.hint
    if hint is None:
        raise Unsupported("data-dependent: a Python value computed from Tensor.item()")
    return (vt.numpy_type or _PYTHON_TYPE[type(vt.example)])(hint)
