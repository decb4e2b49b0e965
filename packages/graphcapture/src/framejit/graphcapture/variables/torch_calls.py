"""Calls to torch callables: graph nodes, trace-time constants, grad-mode contexts, refusals."""

from __future__ import annotations

import types

import torch

from framejit.guards import GuardKind

from ..exc import Unsupported
from ..trace_rules import TORCH_USER_CODE
from . import control_flow, scalar_tensor_args, state_queries
from .base import ConstantVariable, VariableTracker
from .containers import ListVariable, SizeVariable
from .numpy_arrays import NdarrayVariable, from_numpy, numpy_number_data
from .tensor import TensorVariable

# Functions answered at trace time (their result is covered by the global-state guard or
# fixed); other questions about torch's state are state_queries, guarded one by one.
CONSTANT_FUNCTIONS = {
    torch.is_grad_enabled,
    torch.get_default_dtype,
    torch.is_autocast_enabled,
    torch.cuda.is_available,
    torch.are_deterministic_algorithms_enabled,
    torch.is_deterministic_algorithms_warn_only_enabled,
    torch.is_tensor,
    torch.is_floating_point,
    torch.is_complex,
    torch.numel,
}
_has_torch_function = {
    torch.overrides.has_torch_function,
    torch.overrides.has_torch_function_unary,
    torch.overrides.has_torch_function_variadic,
}
CONSTANT_FUNCTIONS |= _has_torch_function
if torch.distributed.is_available():  # fixed for the process (how torch was built)
    CONSTANT_FUNCTIONS.add(torch.distributed.is_available)
# Answered from the arguments' metadata (tensors: their FakeTensor; dtype and type are in
# TENSOR_MATCH), however the arguments are passed.
METADATA_FUNCTIONS = {torch.is_floating_point, torch.is_complex, torch.is_tensor}

# Modules whose functions change process state or are not tensor math.
REFUSED_MODULE_PREFIXES = (
    "torch.distributed",
    "torch.jit",
    "torch.onnx",
    "torch.profiler",
    "torch.serialization",
    "torch.random",
    "torch.hub",
    "torch.cuda",
    "torch.backends",
    "torch.autograd.graph",
    "torch._dynamo",
    "torch._C._dynamo",  # e.g. torch._dynamo.testing.unsupported: a graph break by design
    "torch._inductor",
    "torch.compiler",
)
REFUSED_FUNCTIONS = {
    torch.manual_seed,
    torch.seed,
    torch.set_default_dtype,
    torch.set_default_device,
    torch.set_printoptions,
    torch.save,
    torch.load,
    torch.set_num_threads,
    torch.autograd.backward,
    torch.autograd.grad,
    torch.set_rng_state,
    torch.get_rng_state,
    # state no guard covers (folded, a profiler started later got the unprofiled branch);
    # torch.compile breaks on it too
    torch.autograd._profiler_enabled,
    torch._C._autograd._saved_tensors_hooks_get_disabled_error_message,
    torch._C._autograd._saved_tensors_hooks_is_enabled,
    torch._C._autograd._top_saved_tensors_default_hooks,  # None while tracing (convert_frame)
}
GRAD_MODE_CLASSES = {torch.no_grad: False, torch.enable_grad: True}
# torch._check(cond, message) and friends: the index of `cond` among the arguments
CHECKS = {torch._check: 0, torch._check_index: 0, torch._check_value: 0, torch._check_type: 0,
          torch._check_not_implemented: 0, torch._check_with: 1}  # fmt: skip

# What library code asks to pick its compiled path, answered as torch.compile answers it
# while tracing.  Keyed by (module, name), so torch._dynamo is never imported to find them.
TRACING_FACTS = {
    ("torch.compiler", "is_compiling"): True,
    ("torch.compiler", "is_dynamo_compiling"): True,
    ("torch._utils", "is_compiling"): True,
    ("torch._dynamo.external_utils", "is_compiling"): True,
    ("torch._dynamo.eval_frame", "is_compiling"): True,
    ("torch.compiler", "is_exporting"): False,
    ("torch._jit_internal", "is_scripting"): False,
    ("torch.jit._trace", "is_tracing"): False,
    ("torch.fx._symbolic_trace", "is_fx_tracing"): False,
    ("torch.onnx", "is_in_onnx_export"): False,
}


# torch.fx.experimental.symbolic_shapes' questions about a size expression.  Eager code asks
# them of plain bools; a traced symbolic one is answered from its truth (guarded, so the
# answer is eager's), a captured Tensor.item() value stays a break.
SIZE_QUESTIONS = {
    ("torch.fx.experimental.symbolic_shapes", name)
    for name in ("guard_size_oblivious", "guard_or_false", "guard_or_true",
                 "statically_known_true", "statically_known_false")
}  # fmt: skip


def _size_question(tx, fn, args: list, kwargs: dict) -> VariableTracker | None:
    from .sym_node import SymNodeVariable

    key = (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))
    if key not in SIZE_QUESTIONS or len(args) != 1 or kwargs:
        return None
    (arg,) = args
    if isinstance(arg, SymNodeVariable):
        return ConstantVariable(fn(arg.truth(tx)))
    if arg.is_python_constant():
        return ConstantVariable(fn(arg.as_python_constant()))
    return None


def tracing_fact(fn):
    """The folded answer of an is_compiling()-style query, or None if `fn` is not one."""
    key = (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))
    return TRACING_FACTS.get(key) if key[0] else None


def is_torch_callable(value) -> bool:
    module = getattr(value, "__module__", None) or ""
    if isinstance(value, type) or module in TORCH_USER_CODE:
        return False
    if module == "torch" or module.startswith("torch."):
        return True
    if isinstance(value, (torch._C._VariableFunctionsClass, type(torch.abs))):
        return getattr(value, "__self__", None) in (
            torch._C._VariableFunctions,
            None,
        ) or module.startswith("torch")
    if not isinstance(value, _DESCRIPTOR_TYPES):
        return False  # an object's own __getattr__ is user code: never run it here
    return value.__objclass__ is torch._C.TensorBase or value.__objclass__ is torch.Tensor


# the C descriptors that carry __objclass__ (Tensor.add, Tensor.__add__, Tensor.shape)
_DESCRIPTOR_TYPES = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)


def _in_refused_module(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module.startswith(REFUSED_MODULE_PREFIXES)


def call_torch_function(tx, fn_vt, args: list, kwargs: dict) -> VariableTracker:
    from .objects import GradModeVariable

    fn = fn_vt.value
    if any(isinstance(a, NdarrayVariable) for a in [*args, *kwargs.values()]):
        return from_numpy(tx, fn, args, kwargs)
    if fn in GRAD_MODE_CLASSES:
        if args or kwargs:  # torch.no_grad(fn): the decorated function, as no_grad()(fn)
            return GradModeVariable(GRAD_MODE_CLASSES[fn]).call_function(tx, args, kwargs)
        return GradModeVariable(GRAD_MODE_CLASSES[fn])
    if fn is torch.set_grad_enabled:
        return GradModeVariable.switching(tx, bool(args[0].as_python_constant()))
    if fn is torch.use_deterministic_algorithms:
        return _use_deterministic_algorithms(tx, *args, **kwargs)
    if fn is torch.Size:
        items = args[0].unpack(tx) if args else []
        return SizeVariable([ConstantVariable(i.as_python_constant()) for i in items])
    fact = tracing_fact(fn)
    if fact is not None and not args and not kwargs:
        return ConstantVariable(fact)
    if fn is torch.vmap:
        from .vmap_calls import vmap_wrapper

        return vmap_wrapper(tx, args, kwargs)
    if fn is torch.jit.annotate and len(args) == 2 and not kwargs:
        return args[1]  # a type hint for TorchScript; the value itself in Python
    if fn in _has_torch_function:
        return ConstantVariable(_any_subclass(args))
    if fn in CHECKS and len(args) > CHECKS[fn]:
        return _torch_check(tx, fn, args[CHECKS[fn]], [*args[CHECKS[fn] + 1 :], *kwargs.values()])
    if fn is torch.jit._unwrap_optional and len(args) == 1 and not kwargs:
        if args[0].is_python_constant() and args[0].as_python_constant() is None:
            raise Unsupported("AssertionError: _unwrap_optional of None")
        return args[0]  # a TorchScript type refinement; the value itself in Python
    if fn in METADATA_FUNCTIONS and _metadata_args(args, kwargs):
        values = [_metadata_value(a) for a in args]
        kw = {k: _metadata_value(v) for k, v in kwargs.items()}
        return ConstantVariable(fn(*values, **kw))
    if fn in CONSTANT_FUNCTIONS and not any(a.has_tensors() for a in args):
        values = [a.as_python_constant() for a in args]
        kw = {k: v.as_python_constant() for k, v in kwargs.items()}
        return ConstantVariable(fn(*values, **kw))
    answered = _size_question(tx, fn, args, kwargs)
    if answered is not None:
        return answered
    if getattr(fn, "__wrapped__", None) is not None:
        raise Unsupported(f"call to the wrapped torch function {fn!r}")
    if _qualified(fn) in SHAPE_AS_TENSOR:
        return _shape_as_tensor(tx, fn, args, kwargs)
    if fn is _DIST_IS_INITIALIZED and not args and not kwargs:
        return _distributed_is_initialized(tx)
    if fn in REFUSED_FUNCTIONS:
        raise Unsupported(f"call to {getattr(fn, '__qualname__', fn)} (state no guard covers)")
    if state_queries.is_query(fn, args, kwargs):
        return state_queries.answer_query(tx, fn_vt, args)
    if _in_refused_module(fn):
        raise Unsupported(
            f"call to {getattr(fn, '__module__', '')}.{getattr(fn, '__name__', fn)} (not tensor math)"
        )
    if isinstance(fn, type):
        raise Unsupported(f"constructing {fn.__qualname__}")
    if control_flow.is_cond(fn):
        return control_flow.call_cond(tx, args, kwargs)
    if isinstance(fn, torch._ops.HigherOrderOperator):
        # its arguments are Python functions, which an FX node cannot hold: run it for real
        raise Unsupported(f"higher-order operator {fn.name()} (cond, map, ...) is not traced")
    kwargs = numpy_number_data(fn, args, kwargs)
    rewritten = scalar_tensor_args.rewrite(tx, fn, args, kwargs)
    if rewritten is not None:
        return rewritten
    result = tx.output.call_op("call_function", fn, args, kwargs)
    if (
        not args
        and not kwargs
        and isinstance(result, ConstantVariable)
        and result.value is not None
    ):
        # a call on nothing that answers a constant reads state, and no name says which
        raise Unsupported(
            f"{getattr(fn, '__qualname__', fn)}() answered {result.value!r} unguarded"
        )
    return result


def _use_deterministic_algorithms(tx, mode, warn_only=None) -> VariableTracker:
    """A graph node that switches the mode where the frame does, and the switch made now, so
    the rest of the trace (are_deterministic_algorithms_enabled()) sees it; the trace's end
    puts the state at entry back (convert_frame), which the global-state guard checks."""
    values = [mode] if warn_only is None else [mode, warn_only]
    if not all(v.is_python_constant() for v in values):
        raise Unsupported("torch.use_deterministic_algorithms of a traced value")
    enabled = bool(mode.as_python_constant())
    warn = False if warn_only is None else bool(warn_only.as_python_constant())
    switch = torch._C._set_deterministic_algorithms
    tx.output.create_node("call_function", switch, (enabled,), {"warn_only": warn}, None)
    switch(enabled, warn_only=warn)
    return ConstantVariable(None)


# x's sizes as a CPU int64 tensor (ONNX-export helpers); keyed by name: torch.onnx loads lazily
SHAPE_AS_TENSOR = {
    ("torch", "_VariableFunctionsClass._shape_as_tensor"),
    ("torch.onnx.operators", "shape_as_tensor"),
}


def _qualified(fn) -> tuple:
    return (getattr(fn, "__module__", None), getattr(fn, "__qualname__", None))


def _shape_as_tensor(tx, fn, args: list, kwargs: dict) -> VariableTracker:
    """`torch._shape_as_tensor(x)`: built from x's sizes (static ones are in its TENSOR_MATCH)
    as `torch.tensor(sizes, dtype=int64, device="cpu")`; the op itself has no fake kernel."""
    if len(args) != 1 or kwargs or not isinstance(args[0], TensorVariable):
        raise Unsupported(f"{fn.__name__} of these arguments")
    options = {
        "dtype": ConstantVariable(torch.int64),
        "device": ConstantVariable(torch.device("cpu")),
    }
    sizes = args[0].size_items(tx.output)
    if all(s.is_python_constant() for s in sizes):
        values = ConstantVariable(tuple(s.as_python_constant() for s in sizes))
        return tx.output.call_op("call_function", torch.tensor, [values], options)
    # a symbolic size: one 0-d tensor per size, stacked (torch.tensor takes no SymInt)
    scalars = [tx.output.call_op("call_function", torch.scalar_tensor, [s], options) for s in sizes]
    return tx.output.call_op("call_function", torch.stack, [ListVariable(scalars)], {})


def _torch_check(tx, fn, cond: VariableTracker, rest: list) -> VariableTracker:
    """A check that holds is nothing (its message is never built); a size relation is
    decided, and guarded, like an `if`; one that fails raises in eager, after a break (whose
    reason carries eager's message, so fullgraph's error says what failed)."""
    if isinstance(cond, TensorVariable):
        raise Unsupported(f"{fn.__name__}() of a tensor")
    if fn is torch._check and not rest and _data_dependent(cond):
        return _deferred_check(tx, cond)
    if not cond.truth(tx):
        raise Unsupported(f"{fn.__name__}() failed: {_check_message(tx, rest)}")
    return ConstantVariable(None)


def _data_dependent(cond: VariableTracker) -> bool:
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    from .sym_node import SymNodeVariable

    return (
        isinstance(cond, SymNodeVariable)
        and isinstance(cond.example, torch.SymBool)
        and bool(free_unbacked_symbols(cond.example.node.expr))
    )


def _deferred_check(tx, cond) -> VariableTracker:
    """torch._check of a condition on a captured Tensor.item() (no number to decide it
    now): the ShapeEnv assumes it from here on (what follows may rely on it) and the graph
    checks it when it runs, raising eager's RuntimeError when it does not hold."""
    try:
        torch._check(cond.example)
    except Exception as e:  # the ShapeEnv proves it false: eager raises it on every input
        raise Unsupported(f"torch._check() failed: {type(e).__name__}: {e}") from e
    message = "Expected cond to be True, but got False."
    tx.output.create_node(
        "call_function", torch.ops.aten._assert_scalar.default, (cond.node, message), {}, None
    )
    return ConstantVariable(None)


def _check_message(tx, rest: list) -> str:
    """The text a failing torch._check raises with: its message argument, called when it is
    a function (traced; the break that follows drops whatever that call recorded)."""
    message = rest[0] if rest else ConstantVariable(None)
    if message.is_python_constant():
        if message.as_python_constant() is None:
            return "Expected cond to be True, but got False."
        return "(its message is not callable: eager raises TypeError)"
    try:
        text = message.call_function(tx, [], {})
    except Unsupported:
        return "(its message is not traceable)"
    return str(text.as_python_constant()) if text.is_python_constant() else "(a message)"


def _metadata_args(args: list, kwargs: dict) -> bool:
    return all(
        isinstance(a, TensorVariable) or a.is_python_constant() for a in [*args, *kwargs.values()]
    )


def _metadata_value(vt: VariableTracker):
    return vt.as_example() if isinstance(vt, TensorVariable) else vt.as_python_constant()


_DIST_IS_INITIALIZED = (
    torch.distributed.is_initialized if torch.distributed.is_available() else object()
)


def _distributed_is_initialized(tx) -> VariableTracker:
    """`GroupMember.WORLD is not None`: the default process group, read now and guarded
    (init_process_group or destroy_process_group between calls recompiles)."""

    from ..sources import AttrSource

    c10d = torch.distributed.distributed_c10d
    world = AttrSource(AttrSource(tx.root.module_source(c10d), "GroupMember"), "WORLD")
    initialized = c10d.GroupMember.WORLD is not None
    kind = GuardKind.NOT_NONE if initialized else GuardKind.IS_NONE
    tx.output.add_guard(world, kind, None, origin=tx.origin())
    return ConstantVariable(initialized)


def _any_subclass(args: list) -> bool:
    stack = list(args)
    while stack:
        a = stack.pop()
        if isinstance(a, TensorVariable):
            if a.python_type() not in (torch.Tensor, torch.nn.Parameter):
                return True
        elif hasattr(a, "items") and isinstance(a.items, list):
            stack.extend(a.items)
    return False
