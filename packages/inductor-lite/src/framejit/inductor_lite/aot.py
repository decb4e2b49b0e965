"""AOTAutograd in front of the lowering: every graph is functionalized and, when autograd is
needed, split into forward and backward by the min-cut partitioner; each part is lowered.

torch's AOTAutograd owns what makes this exact: parameters and buffers are lifted to inputs
and traced as fakes (tracing never touches real state), in-place ops on intermediates become
functional ops, mutations of inputs and buffers (BatchNorm running stats, counters) come back
as outputs that its runtime wrapper copies into the real tensors once per call, and outputs
that alias inputs are regenerated as views of them.  Which variant runs is decided per call:
inference (no autograd needed) or training, keyed by which inputs and parameters require
grad; each variant is traced the first time it is needed.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._guards
import torch.fx
from torch._functorch import config as functorch_config
from torch._functorch.aot_autograd import aot_module_simplified
from torch._functorch.partitioners import default_partition, min_cut_rematerialization_partition
from torch.utils import _pytree as pytree

from .config import config
from .decompose import decompositions

log = logging.getLogger("framejit.inductor_lite")

# (role, gm, example_inputs) -> the compiled callable (plain `*args` convention)
InnerCompile = Callable[[str, torch.fx.GraphModule, list[Any]], Callable[..., Any]]


@dataclass
class CompiledPart:
    role: str  # "inference" | "forward" | "backward"
    fn: Callable[..., Any]


@dataclass
class Variants:
    """The compiled variants of one graph and what they hold, for `.source_code`."""

    parts: list[CompiledPart] = field(default_factory=list)
    by_key: dict[Any, Callable[..., Any]] = field(default_factory=dict)


class FlatOutputs(torch.nn.Module):
    """gm with its outputs flattened to a tuple of tensors (what AOTAutograd takes).  The
    structure and the non-tensor leaves are recorded while tracing; they are specialized, as
    is everything traced, and the variant key holds the scalar inputs they may come from."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        super().__init__()
        self.gm = gm  # parameters, buffers and submodules stay gm's own objects
        self.traced: tuple[pytree.TreeSpec, dict[int, Any]] | None = None

    def forward(self, *args: Any) -> tuple[Any, ...]:
        leaves, spec = pytree.tree_flatten(self.gm(*args))
        sites = _symbol_sites(args)
        constants = {
            i: SizeLeaf.of(v, sites) if isinstance(v, _SYMBOLIC) else v
            for i, v in enumerate(leaves)
            if not isinstance(v, torch.Tensor)
        }
        self.traced = (spec, constants)
        return tuple(v for v in leaves if isinstance(v, torch.Tensor))


_SYMBOLIC = (torch.SymInt, torch.SymFloat, torch.SymBool)


def _symbol_sites(args: tuple[Any, ...]) -> dict[Any, tuple[int, int | None]]:
    """Where each size symbol can be read at run time: (input, None) for a size input,
    (input, dim) for a tensor input's size."""
    sites: dict[Any, tuple[int, int | None]] = {}
    for i, arg in enumerate(args):
        if isinstance(arg, torch.SymInt) and arg.node.expr.is_Symbol:
            sites.setdefault(arg.node.expr, (i, None))
        elif isinstance(arg, torch.Tensor):
            for d, size in enumerate(arg.shape):
                if isinstance(size, torch.SymInt) and size.node.expr.is_Symbol:
                    sites.setdefault(size.node.expr, (i, d))
    return sites


@dataclass(frozen=True)
class SizeLeaf:
    """A non-tensor output that is a size expression (`len(y)`, `x.shape[0] * 2`): each call
    evaluates it from that call's sizes; a traced constant would be the symbol itself.
    Evaluated by closures of this module, not by sympy: the compiled callable runs under the
    caller's frame hook, which would capture sympy's frames as third-party code."""

    evaluate: Callable[[tuple[Any, ...]], Any]
    kind: type

    @classmethod
    def of(cls, value: Any, sites: dict[Any, tuple[int, int | None]]) -> SizeLeaf:
        kind = {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(value)]
        return cls(_evaluator(value.node.expr, sites), kind)

    def value(self, args: tuple[Any, ...]) -> Any:
        return self.kind(self.evaluate(args))


def _evaluator(expr: Any, sites: dict[Any, tuple[int, int | None]]) -> Callable[..., Any]:
    """args -> the value of a sympy size expression; UnsafeTrace for what it does not know."""
    import sympy

    if expr.is_Symbol:
        if expr not in sites:
            raise UnsafeTrace(f"a size output depends on {expr}, which no input carries")
        i, d = sites[expr]
        if d is None:
            return lambda args: int(args[i])
        return lambda args: args[i].shape[d]
    if expr.is_Integer or expr is sympy.true or expr is sympy.false:
        constant = int(expr) if expr.is_Integer else bool(expr)
        return lambda args: constant
    if expr.is_Rational or expr.is_Float:
        constant = float(expr)
        return lambda args: constant
    combine = _SIZE_OPS.get(expr.func)
    if combine is None:
        raise UnsafeTrace(f"a size output {expr} uses {expr.func.__name__}")
    parts = [_evaluator(a, sites) for a in expr.args]
    return lambda args: combine([p(args) for p in parts])


def _size_ops() -> dict[Any, Callable[[list[Any]], Any]]:
    import math

    import sympy
    from torch.utils._sympy import functions as f

    return {
        sympy.Add: sum,
        sympy.Mul: math.prod,
        sympy.Pow: lambda v: v[0] ** v[1],
        f.FloorDiv: lambda v: v[0] // v[1],
        f.Mod: lambda v: v[0] % v[1],
        f.PythonMod: lambda v: v[0] % v[1],
        sympy.Max: max,
        sympy.Min: min,
        sympy.Eq: lambda v: v[0] == v[1],
        sympy.Ne: lambda v: v[0] != v[1],
        sympy.Gt: lambda v: v[0] > v[1],
        sympy.Ge: lambda v: v[0] >= v[1],
        sympy.Lt: lambda v: v[0] < v[1],
        sympy.Le: lambda v: v[0] <= v[1],
        sympy.And: all,
        sympy.Or: any,
        sympy.Not: lambda v: not v[0],
    }


_SIZE_OPS: dict[Any, Callable[[list[Any]], Any]] = _size_ops()


def with_structure(
    fn: Callable[..., Any], spec: pytree.TreeSpec, constants: dict[int, Any]
) -> Callable[..., Any]:
    """fn returns the flat tensors; the returned callable returns what gm returned."""
    if not constants and spec.type is tuple and all(c.is_leaf() for c in spec.children()):

        def run_tuple(*args: Any) -> Any:
            return tuple(fn(*args))

        return run_tuple
    count = spec.num_leaves
    sized = [i for i, v in constants.items() if isinstance(v, SizeLeaf)]

    def run_structured(*args: Any) -> Any:
        values = iter(fn(*args))
        leaves = [constants[i] if i in constants else next(values) for i in range(count)]
        for i in sized:
            leaves[i] = leaves[i].value(args)
        return pytree.tree_unflatten(leaves, spec)

    return run_structured


def cse(graph: torch.fx.Graph) -> None:
    """Merge repeated pure calls (same op, same arguments) of a functional graph, in place.
    Random and mutating ops are never merged, nor two values the graph returns (they
    must stay distinct tensors).  What functorch's own CSE does before min-cut partitioning,
    without its import of torch's inductor package (seconds of cold compile)."""
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    returned = {n for n in pytree.tree_leaves(output.args) if isinstance(n, torch.fx.Node)}
    seen: dict[Any, torch.fx.Node] = {}
    for node in list(graph.nodes):
        target = node.target
        if node.op != "call_function" or not isinstance(target, torch._ops.OpOverload):
            continue
        if target._schema.is_mutable or torch.Tag.nondeterministic_seeded in target.tags:
            continue
        try:
            key = (target, repr((node.args, node.kwargs)))
        except Exception:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = node
        elif not (node in returned and first in returned):
            if node in returned:
                returned.add(first)
            node.replace_all_uses_with(first)
            graph.erase_node(node)
    graph.lint()


def min_cut(joint: torch.fx.GraphModule, joint_inputs: Any, **kwargs: Any) -> Any:
    cse(joint.graph)
    joint.recompile()
    with functorch_config.patch(cse=False):
        return min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)


# "min-cut" recomputes cheap forward values in the backward instead of saving them;
# "default" saves what the backward reads.
PARTITIONERS = {"min-cut": min_cut, "default": default_partition}


class UnsafeTrace(Exception):
    """AOTAutograd's trace of this graph is known to be wrong: the variant runs eagerly."""


# Forward ops whose traced arguments betray a trace that would give a wrong backward.
# mkldnn_rnn_layer (nn.LSTM on CPU) comes from torch's LSTM decomposition, which hard-codes
# train=False: its backward would read a missing workspace (a segfault in ATen).  Training
# variants are traced with mkldnn off (`training_trace`), so the LSTM decomposes to its cell
# math; this check is the safety net should another path emit the op.
UNSAFE_IN_TRAINING: dict[Any, Callable[[torch.fx.Node], bool]] = {
    torch.ops.aten.mkldnn_rnn_layer.default: lambda node: node.args[-1] is False,
}


def check_training_graph(gm: torch.fx.GraphModule) -> None:
    for node in gm.graph.nodes:
        unsafe = UNSAFE_IN_TRAINING.get(node.target)
        if unsafe is not None and unsafe(node):
            raise UnsafeTrace(f"{node.target} traced for inference inside a training graph")


def _boxed(fn: Callable[..., Any]) -> Callable[[list[Any]], Any]:
    def run_boxed(args: list[Any]) -> Any:
        return fn(*args)

    run_boxed._boxed_call = True  # type: ignore[attr-defined]
    return run_boxed


@contextlib.contextmanager
def training_trace() -> Any:
    """How a training variant is traced.  The backward is lowered now, not at the first
    backward call: compile time is paid up front and `.source_code` shows both halves.
    mkldnn is off while tracing: torch's LSTM decomposition then emits the cell math
    (matmuls and pointwise gates, differentiated by AOTAutograd) instead of an inference-only
    mkldnn_rnn_layer; it is the only decomposition that reads the flag."""
    mkldnn = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(False)  # (backends.mkldnn.flags also sets TF32, and warns)
    try:
        with functorch_config.patch(force_non_lazy_backward_lowering=True):
            yield
    finally:
        torch._C._set_mkldnn_enabled(mkldnn)


def trace_variant(
    gm: torch.fx.GraphModule, args: list[Any], inner: InnerCompile, variants: Variants
) -> Callable[..., Any]:
    """One AOTAutograd trace of gm for these arguments, in the current grad mode."""
    training = torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad
        for t in (*args, *gm.parameters(), *gm.buffers())
    )

    def compiler(role: str) -> Callable[..., Any]:
        def compile_part(part: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
            if role == "forward":
                check_training_graph(part)
            fn = inner(role, part, list(example_inputs))
            variants.parts.append(CompiledPart(role, fn))
            return _boxed(fn)

        return compile_part

    with training_trace() if training else contextlib.nullcontext():
        return aot_module_simplified(
            gm,
            args,
            fw_compiler=compiler("forward"),
            bw_compiler=compiler("backward"),
            inference_compiler=compiler("inference"),
            partition_fn=PARTITIONERS[config.partitioner],
            decompositions=decompositions(),
            keep_inference_input_mutations=False,
        )


MAX_VARIANTS = 8  # past this many, new scalar values or grad patterns run eagerly


def placeholder_values(gm: torch.fx.GraphModule) -> list[Any]:
    """What the capture recorded for each input (meta 'val', else 'example_value')."""
    return [
        n.meta.get("val", n.meta.get("example_value"))
        for n in gm.graph.find_nodes(op="placeholder")
    ]


def _has_symbols(value: Any) -> bool:
    if isinstance(value, torch.SymInt):
        return True
    if isinstance(value, torch.Tensor):
        return any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride()))
    return False


@dataclass
class SymbolicInputs:
    """A graph captured with symbolic sizes: AOTAutograd traces it over the capture's fakes
    (in the capture's fake mode, so its ShapeEnv's symbols), never over fakes of the example
    values, and the size inputs are not specialized."""

    values: list[Any]  # per input: SymInt, FakeTensor, or None (then the example is used)
    fake_mode: Any

    @classmethod
    def of(cls, gm: torch.fx.GraphModule, example_inputs: list[Any]) -> SymbolicInputs | None:
        values = placeholder_values(gm)
        if len(values) != len(example_inputs) or not any(_has_symbols(v) for v in values):
            return None
        from torch._subclasses.fake_tensor import FakeTensor

        modes = {id(v.fake_mode): v.fake_mode for v in values if isinstance(v, FakeTensor)}
        if len(modes) != 1:
            return None
        (mode,) = modes.values()
        kept = [v if isinstance(v, (torch.SymInt, FakeTensor)) else None for v in values]
        return cls(kept, mode)

    @property
    def shape_env(self) -> Any:
        return self.fake_mode.shape_env

    def size_positions(self) -> set[int]:
        return {i for i, v in enumerate(self.values) if isinstance(v, torch.SymInt)}

    def trace_args(self, args: list[Any]) -> list[Any]:
        """The capture's fakes, with this call's requires_grad flags."""
        result = []
        for value, arg in zip(self.values, args, strict=True):
            if value is None:
                result.append(arg)
            elif isinstance(value, torch.Tensor):
                wanted = isinstance(arg, torch.Tensor) and arg.requires_grad
                if value.requires_grad != wanted:
                    with self.fake_mode:
                        value = value.detach().requires_grad_(wanted)
                result.append(value)
            else:
                result.append(value)
        return result

    def tracing(self) -> Any:
        """AOTAutograd finds the capture's fake mode through the tracing context."""
        return torch._guards.tracing(torch._guards.TracingContext(self.fake_mode))


@contextlib.contextmanager
def frame_capture_off() -> Any:
    """A variant traced on a call runs inside the caller's compiled frame, under its JIT's
    frame hook: AOTAutograd's Python (networkx in the partitioner, generated dataclass
    `__init__`s) is not user code and must not be captured.  framejit's frame hook is turned
    off when framejit.frameeval is loaded; inductor-lite does not depend on it."""
    frameeval = sys.modules.get("framejit.frameeval")
    if frameeval is None:
        yield
        return
    previous = frameeval.set_callback(frameeval.SKIP)
    try:
        yield
    finally:
        frameeval.set_callback(previous)


def compile_with_aot(
    gm: torch.fx.GraphModule,
    example_inputs: list[Any],
    inner: InnerCompile,
    on_new_part: Callable[[Variants], None],
    symbolic: SymbolicInputs | None = None,
) -> tuple[Callable[..., Any], Variants]:
    """A callable that runs the variant each call needs, traced the first time it is needed.

    The key: the scalar (non-tensor) arguments, which tracing specializes, and — when grad
    mode is on and anything requires grad — which inputs and parameters require grad.
    With symbolic inputs, size inputs are not part of the key: one variant serves every size."""
    variants = Variants()
    flat = FlatOutputs(gm)
    params = [*gm.parameters(), *gm.buffers()]
    sizes = symbolic.size_positions() if symbolic is not None else set()
    scalar_positions = [
        i
        for i, a in enumerate(example_inputs)
        if not isinstance(a, torch.Tensor) and i not in sizes
    ]

    def key_of(args: tuple[Any, ...]) -> Any:
        scalars = tuple((type(args[i]), args[i]) for i in scalar_positions)
        if not torch.is_grad_enabled():
            return scalars
        flags = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        param_flags = tuple(p.requires_grad for p in params)
        if not any(flags) and not any(param_flags):
            return scalars
        return scalars, flags, param_flags

    def get(key: Any, args: list[Any]) -> Callable[..., Any]:
        fn = variants.by_key.get(key)
        if fn is not None:
            return fn
        with frame_capture_off():
            return trace_new(key, args)

    def trace_new(key: Any, args: list[Any]) -> Callable[..., Any]:
        if len(variants.by_key) >= MAX_VARIANTS:
            log.warning("inductor-lite: %d variants compiled; this call runs eagerly", MAX_VARIANTS)
            return gm.forward
        try:
            if symbolic is None:
                traced = trace_variant(flat, args, inner, variants)
            else:
                with symbolic.tracing():
                    traced = trace_variant(flat, symbolic.trace_args(args), inner, variants)
            assert flat.traced is not None
            fn = with_structure(traced, *flat.traced)
        except Exception as error:
            if config.strict and not isinstance(error, UnsafeTrace):
                raise
            reason = f"AOTAutograd could not trace the graph: {type(error).__name__}: {error}"
            log.warning("inductor-lite: running the graph eagerly: %s", reason)
            fn = gm.forward
            variants.parts.append(CompiledPart(f"eager ({reason})", fn))
        variants.by_key[key] = fn
        on_new_part(variants)
        return fn

    get(key_of(tuple(example_inputs)), example_inputs)
    by_key = variants.by_key

    def run(*args: Any) -> Any:
        fn = by_key.get(key_of(args))
        if fn is None:
            fn = get(key_of(args), list(args))
        return fn(*args)

    return run, variants
