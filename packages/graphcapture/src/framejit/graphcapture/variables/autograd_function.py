"""torch.autograd.Function subclasses: `F.apply(*args)` traced where no backward can run.

Eager `apply` runs `forward` with grad mode off and connects its outputs to `backward` only
when grad mode is on and a tensor argument requires grad.  When neither holds (inference,
torch.no_grad, inputs that need no grad) the call is exactly `forward` under no_grad, so the
trace inlines `forward(ctx, *args)` (or `forward(*args)` and `setup_context(ctx, inputs,
output)`) with a stand-in ctx (FunctionCtxVariable: save_for_backward and the mark_* calls
only record), and returns a view of any input returned undirtied, as `apply` does.  With an
input that requires grad the call is a graph break: the custom backward is not traced.
Grad mode is part of the global-state guard; requires_grad of each input tensor is in its
tensor guard.
"""

from __future__ import annotations

import types

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker
from .containers import TupleVariable
from .functions import UserFunctionVariable
from .objects import _class_lookup, set_grad_mode
from .tensor import TensorVariable
from .user_classes import NewObjectVariable, _class_attr_source

_FUNCTION_APPLY = torch.autograd.Function.__dict__["apply"]
_BASE_SETUP_CONTEXT = torch.autograd.function._SingleLevelFunction.__dict__["setup_context"]


def is_function_apply(cls, attr) -> bool:
    """`attr` (the classmethod, or its function bound to `cls`) is Function.apply."""
    return (attr is _FUNCTION_APPLY or attr is _FUNCTION_APPLY.__func__) and (
        isinstance(cls, type) and issubclass(cls, torch.autograd.Function)
    )


class AutogradFunctionApplyVariable(VariableTracker):
    """`F.apply` (or `F().apply`) of an autograd.Function subclass `F` (identity-guarded)."""

    def __init__(self, cls_vt):
        self.cls_vt = cls_vt

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        cls = self.cls_vt.value
        if kwargs:
            raise Unsupported(f"{cls.__name__}.apply with keyword arguments")
        tensors = [a for a in args if isinstance(a, TensorVariable)]
        needs_grad = tuple(
            isinstance(a, TensorVariable) and a.as_example().requires_grad for a in args
        )
        grad_on = torch.is_grad_enabled()
        if grad_on and any(needs_grad):
            raise Unsupported(
                f"{cls.__name__}.apply on inputs that require grad (its backward is not traced)"
            )
        forward = _static_function(cls, "forward")
        setup = _class_lookup(cls, "setup_context")
        ctx = FunctionCtxVariable(needs_grad)
        if grad_on:
            set_grad_mode(tx, False)  # forward runs under no_grad, as eager's apply runs it
        try:
            forward_vt = UserFunctionVariable(
                forward, _class_attr_source(self.cls_vt, cls, "forward")
            )
            if setup is _BASE_SETUP_CONTEXT:
                output = forward_vt.call_function(tx, [ctx, *args], {})
            else:
                output = forward_vt.call_function(tx, list(args), {})
                setup_vt = UserFunctionVariable(
                    _static_function(cls, "setup_context"),
                    _class_attr_source(self.cls_vt, cls, "setup_context"),
                )
                setup_vt.call_function(tx, [ctx, TupleVariable(list(args)), output], {})
        except BaseException:
            torch._C._set_grad_enabled(grad_on)  # the break leaves the graph; the trace's mode back
            raise
        if grad_on:
            set_grad_mode(tx, True)
        return _alias_inputs(tx, output, tensors, ctx.dirty())


def _static_function(cls, name: str) -> types.FunctionType:
    attr = _class_lookup(cls, name)
    fn = attr.__func__ if isinstance(attr, staticmethod) else None
    if not isinstance(fn, types.FunctionType):
        raise Unsupported(f"{cls.__name__}.{name} is not a Python staticmethod")
    return fn


def _alias_inputs(tx, output, inputs: list, dirty: list) -> VariableTracker:
    """apply returns an input that forward hands back (and did not mark dirty) as a view, or
    (an input that requires grad, under no_grad) as a detached alias."""

    def fix(vt):
        if any(vt is t for t in inputs) and not any(vt is d for d in dirty):
            if vt.as_example().requires_grad:
                return tx.output.call_op("call_method", "detach", [vt], {})
            return tx.output.call_op("call_method", "view_as", [vt, vt], {})
        return vt

    if isinstance(output, TupleVariable):
        return TupleVariable([fix(v) for v in output.items])
    if isinstance(output, TensorVariable):
        return fix(output)
    raise Unsupported(f"autograd.Function.forward returning {output}")


_RECORDING_METHODS = {  # FunctionCtx's methods and the attribute each sets, as FunctionCtx does
    "save_for_backward": "to_save",
    "save_for_forward": "saved_for_forward",
    "mark_dirty": "dirty_tensors",
    "mark_non_differentiable": "non_differentiable",
}


class FunctionInstanceVariable(VariableTracker):
    """`F()` of an autograd.Function subclass (deprecated, still allowed): only `.apply`."""

    def __init__(self, cls_vt):
        self.cls_vt = cls_vt

    def python_type(self) -> type:
        return self.cls_vt.value

    def var_getattr(self, tx, name: str) -> VariableTracker:
        cls = self.cls_vt.value
        if name == "apply" and is_function_apply(cls, _class_lookup(cls, name)):
            return AutogradFunctionApplyVariable(self.cls_vt)
        raise Unsupported(f"{cls.__name__}().{name}")


class FunctionCtxVariable(NewObjectVariable):
    """The ctx of an inlined forward: a FunctionCtx whose calls only record (no backward)."""

    def __init__(self, needs_input_grad: tuple):
        super().__init__(torch.autograd.function.FunctionCtx)
        self.attrs["needs_input_grad"] = ConstantVariable(needs_input_grad)

    def dirty(self) -> list:
        marked = self.attrs.get("dirty_tensors")
        return list(marked.items) if isinstance(marked, TupleVariable) else []

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in _RECORDING_METHODS or name == "set_materialize_grads":
            return _CtxMethod(self, name)
        if name in self.attrs:
            return self.attrs[name]
        raise Unsupported(f"ctx.{name} in an inlined autograd.Function.forward")


class _CtxMethod(VariableTracker):
    def __init__(self, ctx: FunctionCtxVariable, name: str):
        self.ctx = ctx
        self.name = name

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if kwargs:
            raise Unsupported(f"ctx.{self.name} with keyword arguments")
        if self.name == "set_materialize_grads":
            self.ctx.attrs["materialize_grads"] = args[0] if args else ConstantVariable(True)
        else:
            self.ctx.attrs[_RECORDING_METHODS[self.name]] = TupleVariable(list(args))
        return ConstantVariable(None)
