"""torch.autograd.Function subclasses: `F.apply(*args)` traced where no backward can run.

Eager `apply` runs `forward` with grad mode off and connects its outputs to `backward` only
when grad mode is on and a tensor argument requires grad.  When neither holds (inference,
torch.no_grad, inputs that need no grad) the call is exactly `forward` under no_grad, so the
trace inlines `forward(ctx, *args)` (or `forward(*args)` and `setup_context(ctx, inputs,
output)`) with a stand-in ctx (FunctionCtxVariable: save_for_backward and the mark_* calls
only record), and returns a view of any input returned undirtied, as `apply` does.

With an input that requires grad (grad mode on) the call goes into the graph whole, as one
`F.apply` node: the graph runs the real apply, so autograd connects the custom backward.
Its forward is first inlined as above (under no_grad) to check that it is traceable and
writes nothing outside its ctx (a write would happen twice: in the trace's replay and in
the real forward); those nodes are then dropped, and the node's example comes from running
`F.apply` on the fake inputs (its requires_grad, non-differentiable outputs, views).  Only
tensor and constant arguments; a forward that marks an input dirty stays a graph break.
Grad mode is part of the global-state guard; requires_grad of each input tensor is in its
tensor guard; `F` is identity-guarded through its source.
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
            return self._apply_in_graph(tx, args, needs_grad)
        ctx = FunctionCtxVariable(needs_grad)
        output = self._inline_forward(tx, args, ctx, grad_on)
        return _alias_inputs(tx, output, tensors, ctx.dirty())

    def _inline_forward(self, tx, args, ctx, grad_on: bool) -> VariableTracker:
        cls = self.cls_vt.value
        forward = _static_function(cls, "forward")
        setup = _class_lookup(cls, "setup_context")
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
        return output

    def _apply_in_graph(self, tx, args, needs_grad: tuple) -> VariableTracker:
        """`F.apply(*args)` as one graph node (the module docstring says when and why)."""
        cls = self.cls_vt.value
        refuse = f"{cls.__name__}.apply on inputs that require grad"
        if not all(isinstance(a, (TensorVariable, ConstantVariable)) for a in args):
            raise Unsupported(f"{refuse}: an argument that is not a tensor or a constant")
        graph = tx.output.graph
        last = next(iter(reversed(graph.nodes)), None)
        effects = tx.output.side_effects
        writes_before = len(effects.write_targets)
        ctx = FunctionCtxVariable(needs_grad)
        self._inline_forward(tx, args, ctx, grad_on=True)
        if any(t is not ctx for t in effects.write_targets[writes_before:]):
            raise Unsupported(f"{refuse}: its forward writes outside its ctx")
        if ctx.dirty():
            raise Unsupported(f"{refuse}: its forward marks an input dirty")
        _drop_nodes_after(graph, last)
        return tx.output.call_op("call_function", _apply_target(cls), list(args), {})


def _apply_target(cls):
    """A plain function calling `cls.apply`: fx emits a bound classmethod of a torch module's
    class as an import path (torch.autograd.function.apply); a function of ours it keeps as
    a global of the generated code."""

    def apply(*args):
        return cls.apply(*args)

    apply.__name__ = apply.__qualname__ = f"{cls.__name__}_apply"
    return apply


def _drop_nodes_after(graph, last) -> None:
    """Erase the ops added after `last` (the inlined forward's), last first; placeholders and
    attribute reads stay (trackers made on the way may hold them; unused ones are pruned)."""
    root = graph._root
    added = []
    node = (last if last is not None else root).next
    while node is not root:
        added.append(node)
        node = node.next
    for node in reversed(added):
        if node.op in ("call_function", "call_method", "call_module") and not node.users:
            graph.erase_node(node)


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
