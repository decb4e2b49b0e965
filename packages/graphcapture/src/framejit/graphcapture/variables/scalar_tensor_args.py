"""Torch ops given a 0-d tensor where they take a Scalar, rewritten into tensor ops.

`x.addcmul_(a, b, value=t)`, `torch._foreach_lerp_(xs, ys, t)` and `torch._foreach_pow(t,
exps)` accept a one-element tensor for their Scalar argument and read it with `.item()`
inside the op (optimizers pass tensor betas and learning rates this way).  Run on fake
tensors that read is data-dependent; the trace instead computes the same thing with the
tensor as a tensor, as torch.compile does (its polyfills): the number is never a Python
value, so the graph does not specialize on it.  The result dtypes are eager's: the tensor
is cast to the dtype the op gives for a Python scalar of its kind.

`REWRITES`: torch callable -> handler(tx, args, kwargs), returning None where the call is
not of that shape (it is then recorded as it is).  `METHOD_REWRITES`: Tensor method name
-> the same, with the tensor first.
"""

from __future__ import annotations

import torch

from .base import VariableTracker
from .containers import BaseListVariable, ListVariable
from .tensor import TensorVariable


def _scalar_tensor(vt) -> bool:
    return isinstance(vt, TensorVariable) and vt.example.dim() == 0


def _python_scalar_like(example: torch.Tensor):
    """A Python number of the tensor's kind: what eager's `.item()` hands the op."""
    if example.dtype is torch.bool:
        return True
    if example.dtype.is_complex:
        return 1j
    return 1.0 if example.dtype.is_floating_point else 1


def _cast(tx, tensor: TensorVariable, dtype: torch.dtype) -> VariableTracker:
    if tensor.example.dtype is dtype:
        return tensor
    from .base import ConstantVariable

    return tx.output.call_op("call_method", "to", [tensor, ConstantVariable(dtype)], {})


def _op(tx, fn, *args) -> VariableTracker:
    return tx.output.call_op("call_function", fn, list(args), {})


def _addcmul(inplace: bool):
    """self + value * t1 * t2, value a 0-d tensor (addcmul_ keeps self's dtype)."""

    def handler(tx, args, kwargs):
        value = kwargs.get("value")
        if len(args) != 3 or set(kwargs) != {"value"} or not _scalar_tensor(value):
            return None
        self, t1, t2 = args
        if not all(isinstance(a, TensorVariable) for a in args):
            return None
        # eager: the three tensors' promotion (the scalar does not take part); an integral
        # one with a float value is eager's error, left to the op itself
        dtype = torch.promote_types(
            self.example.dtype, torch.promote_types(t1.example.dtype, t2.example.dtype)
        )
        if not (dtype.is_floating_point or dtype.is_complex):
            return None
        product = _op(tx, torch.mul, _op(tx, torch.mul, t1, t2), _cast(tx, value, dtype))
        if inplace:
            return tx.output.call_op("call_method", "add_", [self, product], {})
        return _op(tx, torch.add, self, product)

    return handler


def _tensors(vt) -> list | None:
    if isinstance(vt, BaseListVariable) and all(isinstance(i, TensorVariable) for i in vt.items):
        return list(vt.items)
    return None


def _foreach_lerp_(tx, args, kwargs):
    """each self[i].lerp_(end[i], weight): lerp_'s tensor-weight form, weight cast to self[i]."""
    if len(args) != 3 or kwargs or not _scalar_tensor(args[2]):
        return None
    selves, ends, weight = _tensors(args[0]), _tensors(args[1]), args[2]
    if selves is None or ends is None or len(selves) != len(ends):
        return None
    for s, e in zip(selves, ends, strict=True):
        w = _cast(tx, weight, s.example.dtype)
        tx.output.call_op("call_method", "lerp_", [s, e, w], {})
    return args[0]  # (eager returns the very list it was given)


def _foreach_pow(tx, args, kwargs):
    """_foreach_pow(t, exps) with t a 0-d tensor: each pow(t, exps[i]), t cast to the dtype
    of eager's pow(Python scalar, exps[i])."""
    if len(args) != 2 or kwargs or not _scalar_tensor(args[0]):
        return None
    base, exps = args[0], _tensors(args[1])
    if exps is None:
        return None
    scalar = _python_scalar_like(base.example)
    out = []
    for e in exps:
        dtype = torch.result_type(scalar, e.example)
        out.append(_op(tx, torch.pow, _cast(tx, base, dtype), e))
    return ListVariable(out)  # (a list, as eager's)


REWRITES = {
    torch.addcmul: _addcmul(inplace=False),
    torch._foreach_lerp_: _foreach_lerp_,
    torch._foreach_pow: _foreach_pow,
}
METHOD_REWRITES = {"addcmul_": _addcmul(inplace=True), "addcmul": _addcmul(inplace=False)}


def rewrite(tx, fn, args, kwargs) -> VariableTracker | None:
    handler = REWRITES.get(fn) if not isinstance(fn, str) else METHOD_REWRITES.get(fn)
    return None if handler is None else handler(tx, args, kwargs)
