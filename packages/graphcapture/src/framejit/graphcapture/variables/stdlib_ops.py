"""The operator module's functions, modelled as the operators they name.

`operator.mul(a, b)` is traced exactly as `a * b` (a graph node for tensors, a fold for
constants), so library code that passes operators around stays in the graph.
"""

from __future__ import annotations

import operator

from .builtins import binary_op, getitem, unary_op

BINARY = (
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
    operator.mod, operator.pow, operator.matmul, operator.and_, operator.or_, operator.xor,
    operator.lshift, operator.rshift, operator.lt, operator.le, operator.eq, operator.ne,
    operator.gt, operator.ge, operator.is_, operator.is_not, operator.iadd, operator.isub,
    operator.imul, operator.itruediv, operator.ifloordiv, operator.imod, operator.ipow,
    operator.imatmul, operator.iand, operator.ior, operator.ixor,
)  # fmt: skip
UNARY = (operator.neg, operator.pos, operator.invert, operator.not_, operator.abs)
# answered only for constant arguments (on a tensor they would read its data)
CONSTANT_ONLY = (operator.index, operator.length_hint)


def _binary(op):
    def handler(tx, a, b):
        return binary_op(tx, op, a, b)

    return handler


def _unary(op):
    def handler(tx, a):
        return unary_op(tx, op, a)

    return handler


def _constant_only(op):
    def handler(tx, *args):
        from ..exc import Unsupported
        from .base import ConstantVariable, fold

        if not all(a.is_python_constant() for a in args):
            raise Unsupported(f"operator.{op.__name__} of a non-constant")
        return ConstantVariable(fold(op, *(a.as_python_constant() for a in args)))

    return handler


def _getitem(tx, obj, index):
    return getitem(tx, obj, index)


def _truth(tx, obj):
    from .base import ConstantVariable

    return ConstantVariable(obj.truth(tx))


OPERATOR_HANDLERS = {
    **{op: _binary(op) for op in BINARY},
    **{op: _unary(op) for op in UNARY},
    **{op: _constant_only(op) for op in CONSTANT_ONLY},
    operator.getitem: _getitem,
    operator.truth: _truth,
}
