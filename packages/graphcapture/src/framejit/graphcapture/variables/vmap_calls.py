"""torch.vmap (torch.func.vmap) in a traced frame: one graph node that runs the real vmap.

`torch.vmap(f, in_dims, out_dims, randomness)` gives a `VmapWrapperVariable`; calling it on
tensors records one node whose target calls `torch.vmap(f, ...)(*args)` when the graph
runs, so functorch's own batching rules apply (an in-place op returns its operand:
`vmap(Tensor.acos_)(x) is x`, as eager).  The node's example comes from running that call
on the FakeTensors (functorch keeps the fakes' identity too, which `is` compares).

Before recording, `f` is inlined once on one sample of each batched argument
(`arg.select(in_dim, 0)`): to check that it is traceable, reads no tensor but its
arguments, and writes nothing that exists outside it (a write would happen in the replay
and again in the real call).  Those nodes are then dropped.  `f` must exist when the graph
runs: a function or torch callable read from the frame (its source guards it), or one made
in the trace without a closure, rebuilt with constant defaults.  Positional tensor and
constant arguments only; in_dims an int, None or a flat tuple of them; out_dims an int or
a flat tuple of ints; no chunk_size.  Anything else is a graph break (eager vmap runs).
"""

from __future__ import annotations

import torch

from ..exc import Unsupported
from .autograd_function import _drop_nodes_after
from .base import ConstantVariable, VariableTracker
from .exceptions import ObservedException
from .functions import NestedUserFunctionVariable, make_function
from .tensor import TensorVariable

_VMAP_PARAMS = ("func", "in_dims", "out_dims", "randomness")


def vmap_wrapper(tx, args: list, kwargs: dict) -> VariableTracker:
    """`torch.vmap(...)` itself: its arguments, checked (nothing runs until it is called)."""
    if "chunk_size" in kwargs or len(args) > len(_VMAP_PARAMS):
        raise Unsupported("torch.vmap with chunk_size")
    bound = dict(zip(_VMAP_PARAMS, args, strict=False))
    for key, value in kwargs.items():
        if key not in _VMAP_PARAMS or key in bound:
            raise Unsupported(f"torch.vmap with the argument {key!r}")
        bound[key] = value
    if "func" not in bound:
        raise Unsupported("torch.vmap without a function")
    options = {}
    for key, default in (("in_dims", 0), ("out_dims", 0), ("randomness", "error")):
        vt = bound.get(key)
        if vt is not None and not vt.is_python_constant():
            raise Unsupported(f"torch.vmap with a non-constant {key}")
        options[key] = default if vt is None else vt.as_python_constant()
    if not _flat_dims(options["in_dims"], allow_none=True) or not _flat_dims(
        options["out_dims"], allow_none=False
    ):
        raise Unsupported("torch.vmap with nested in_dims/out_dims")
    return VmapWrapperVariable(bound["func"], options)


def _flat_dims(dims, allow_none: bool) -> bool:
    ok = (int, type(None)) if allow_none else (int,)
    items = dims if isinstance(dims, tuple) else (dims,)
    return all(isinstance(d, ok) and not isinstance(d, bool) for d in items)


class VmapWrapperVariable(VariableTracker):
    """What `torch.vmap(f, ...)` returned: a call is one graph node (see the module doc)."""

    def __init__(self, fn_vt: VariableTracker, options: dict):
        self.fn_vt = fn_vt
        self.options = options

    def python_type(self) -> type:
        return type(lambda: None)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if kwargs:
            raise Unsupported("a vmapped function called with keyword arguments")
        if not all(isinstance(a, (TensorVariable, ConstantVariable)) for a in args):
            raise Unsupported("a vmapped function called with a non-tensor, non-constant")
        in_dims = self.options["in_dims"]
        if isinstance(in_dims, tuple) and len(in_dims) != len(args):
            raise Unsupported("vmap in_dims of another length than the arguments")
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        fn = _runtime_function(self.fn_vt)
        _check_by_inlining(tx, self.fn_vt, args, dims)
        return tx.output.call_op("call_function", _vmap_target(fn, self.options), list(args), {})

    def __repr__(self) -> str:
        return f"VmapWrapperVariable({self.fn_vt})"


def _runtime_function(fn_vt):
    if isinstance(fn_vt, NestedUserFunctionVariable):
        if fn_vt.closure or fn_vt.attrs or fn_vt.names:
            raise Unsupported("torch.vmap of a function made in the trace with a closure")
        try:
            defaults = tuple(d.as_python_constant() for d in fn_vt.defaults)
            kwdefaults = {k: v.as_python_constant() for k, v in fn_vt.kwdefaults.items()}
        except Unsupported as e:
            raise Unsupported("torch.vmap of a function with non-constant defaults") from e
        code = fn_vt.code
        return make_function(
            code, fn_vt.f_globals, defaults, kwdefaults, (), fn_vt.qualname, code.co_name
        )
    fn = getattr(fn_vt, "value", None)
    if fn is None or not callable(fn) or getattr(fn_vt, "made_in_trace", False):
        raise Unsupported(f"torch.vmap of {fn_vt}")
    if fn_vt.source is None and not getattr(fn, "__module__", "").startswith("torch"):
        raise Unsupported(f"torch.vmap of {fn_vt} without a source to guard it")
    return fn


def _check_by_inlining(tx, fn_vt, args: list, dims: tuple) -> None:
    """Inline `fn` on one sample per batched argument; refuse what the real call could not
    repeat; drop what it recorded."""
    output = tx.output
    graph = output.graph
    last = next(iter(reversed(graph.nodes)), None)
    inputs_before = _input_count(graph)
    effects = output.side_effects
    writes_before = len(effects.write_targets)
    samples = []
    for arg, dim in zip(args, dims, strict=True):
        if dim is None:
            samples.append(arg)
        elif isinstance(arg, TensorVariable):
            select = [arg, ConstantVariable(dim), ConstantVariable(0)]
            samples.append(output.call_op("call_method", "select", select, {}))
        else:  # eager raises ValueError: an in_dim for a non-tensor
            raise Unsupported("vmap in_dim given for a non-tensor argument")
    try:
        fn_vt.call_function(tx, samples, {})
    except ObservedException as e:
        raise Unsupported(f"the vmapped function raised: {e}") from e
    if any(t is None or t.source is not None for t in effects.write_targets[writes_before:]):
        raise Unsupported("the vmapped function writes outside itself")
    if _input_count(graph) != inputs_before:
        raise Unsupported("the vmapped function reads a tensor that is not its argument")
    _drop_nodes_after(graph, last)


def _input_count(graph) -> int:
    return sum(1 for n in graph.nodes if n.op in ("placeholder", "get_attr"))


def _vmap_target(fn, options: dict):
    """A plain function for the node (fx keeps it as a global of the generated code)."""

    def vmap(*args):
        return torch.vmap(fn, options["in_dims"], options["out_dims"], options["randomness"])(*args)

    name = getattr(fn, "__name__", None) or type(fn).__name__
    vmap.__name__ = vmap.__qualname__ = f"vmap_{name}".replace(".", "_")
    return vmap
