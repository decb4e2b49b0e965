"""`compile_fx`: the backend entry point.  AOTAutograd (aot.py) hands over functional ATen
graphs; each is lowered, scheduled, generated, compiled and wrapped here — and one that any
stage cannot handle runs op by op through ATen, with a logged reason."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch.utils import _pytree as pytree

from . import sizes
from .aot import SymbolicInputs, Variants, compile_with_aot
from .codegen import get_codegen
from .codegen.triton import TritonCodegenUnavailable
from .config import config
from .decompose import AtenGraph, Unsupported, mutating_ops
from .graph_lowering import GraphLowering
from .ir import BufferView, ExternCall
from .lowering import EXTERN_BY_DESIGN
from .overlap import overlapping_write
from .scheduler import FusedGroup, assign_in_place, extern_arg_buffers, schedule
from .wrapper import WrapperBuilder, load_wrapper

log = logging.getLogger("framejit.inductor_lite")
output_code_log = logging.getLogger("framejit.output_code")

CODEGENS = ("cpp", "triton")


@dataclass
class Stats:
    """Counts over the process: graph parts lowered, and compiled-graph calls that ran
    eagerly because the wrapper could not serve their inputs."""

    parts_compiled: int = 0
    eager_runs: int = 0


stats = Stats()


def _pick_codegen(codegen: str | None, example_inputs: list[Any]) -> str:
    if codegen is None:
        cuda = any(isinstance(t, torch.Tensor) and t.device.type == "cuda" for t in example_inputs)
        return "triton" if cuda else "cpp"
    if codegen not in CODEGENS:
        raise ValueError(f"inductor-lite: codegen must be one of {CODEGENS}, got {codegen!r}")
    return codegen


def _eager(gm: torch.fx.GraphModule, reason: str) -> Callable[..., Any]:
    log.warning("inductor-lite: running the graph eagerly: %s", reason)

    def run_eagerly(*args: Any) -> Any:
        return gm(*args)

    run_eagerly.source_code = f"# inductor-lite ran this graph eagerly: {reason}\n{gm.code}"  # type: ignore[attr-defined]
    run_eagerly.fallback_reason = reason  # type: ignore[attr-defined]
    return run_eagerly


def compile_fx(
    gm: torch.fx.GraphModule, example_inputs: list[Any], codegen: str | None = None
) -> Callable[..., Any]:
    """Compile an FX graph for the example inputs; returns a callable with `.source_code`.

    The graph goes through AOTAutograd (aot.py): functionalized, split into forward and
    backward when autograd is needed, and each part lowered here; a part that cannot be
    lowered runs its ATen graph op by op."""
    if not isinstance(gm, torch.fx.GraphModule):
        raise TypeError(
            f"inductor-lite: compile_fx expects a torch.fx.GraphModule, got {type(gm).__name__}; "
            "trace the function first (torch.fx.symbolic_trace or make_fx)"
        )
    example_inputs = list(example_inputs)
    choice = _pick_codegen(codegen, example_inputs)
    try:
        generator = get_codegen(choice)
    except TritonCodegenUnavailable as error:
        if codegen is not None:
            raise  # asked for explicitly: say so
        return _eager(gm, str(error))  # picked by device: never fail

    reason = overlapping_write(gm, example_inputs)
    if reason:
        return _eager(gm, reason)
    symbolic = SymbolicInputs.of(gm, example_inputs)
    # guards the ShapeEnv gains from here on (AOTAutograd's trace, the lowering) are
    # relations the compiled code relies on: each wrapper checks them
    guard_start = len(symbolic.shape_env.guards) if symbolic and symbolic.shape_env else 0

    def inner(role: str, part: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        return compile_aten_part(role, part, inputs, generator, guard_start)

    holder: dict[str, Any] = {}

    def publish(variants: Variants) -> None:
        run = holder.get("run")
        if run is not None:
            describe(run, gm, variants)

    run, variants = compile_with_aot(gm, example_inputs, inner, publish, symbolic)
    holder["run"] = run
    describe(run, gm, variants)
    return run


def describe(run: Any, gm: torch.fx.GraphModule, variants: Variants) -> None:
    """The inspection attributes of the returned callable, over every compiled part."""
    sections, wrappers, kernels, reasons = [], [], [], []
    for part in variants.parts:
        fn = part.fn
        sections.append(f"# ======== {part.role} ========\n{getattr(fn, 'source_code', '')}")
        wrappers.append(getattr(fn, "wrapper_source", ""))
        kernels.append(getattr(fn, "kernel_source", ""))
        reasons.extend(getattr(fn, "fallback_reasons", []))
    run.source_code = "\n\n".join(sections)
    run.wrapper_source = "\n\n".join(wrappers)
    run.kernel_source = "\n\n".join(kernels)
    run.fallback_reasons = reasons
    run.kernel_count = sum(getattr(p.fn, "kernel_count", 0) for p in variants.parts)
    run.parts = list(variants.parts)
    run.graph_module = gm


def compile_aten_part(
    role: str,
    gm: torch.fx.GraphModule,
    example_inputs: list[Any],
    generator: Any,
    guard_start: int = 0,
) -> Callable[..., Any]:
    """Lower one functional ATen graph from AOTAutograd; on failure run it op by op."""
    aten_graph = _aten_graph(gm, example_inputs)
    try:
        mutating = mutating_ops(gm)
        if mutating:
            raise Unsupported(f"mutating op {mutating[0]} in the functionalized graph")
        return _compile(aten_graph, generator, guard_start)
    except TritonCodegenUnavailable:
        raise
    except Exception as error:
        if config.strict:
            raise
        return _op_by_op(gm, f"{role}: {type(error).__name__}: {error}")


def _op_by_op(gm: torch.fx.GraphModule, reason: str) -> Callable[..., Any]:
    """The ATen graph itself: every op runs through ATen, once."""
    log.warning("inductor-lite: running the ATen graph op by op: %s", reason)

    def run_aten(*args: Any) -> Any:
        return gm(*args)

    run_aten.source_code = f"# inductor-lite runs this ATen graph op by op: {reason}\n{gm.code}"  # type: ignore[attr-defined]
    run_aten.fallback_reasons = [reason]  # type: ignore[attr-defined]
    return run_aten


@dataclass
class LoweredPart:
    role: str
    aten_graph: AtenGraph
    graph: GraphLowering
    steps: list[Any]
    groups: list[FusedGroup]


def lower_parts(
    gm: torch.fx.GraphModule, example_inputs: list[Any], codegen: str = "cpp"
) -> list[LoweredPart]:
    """The graph through the backend's own front door (AOTAutograd, the same variant the
    first call would trace), each part lowered and scheduled but not generated or compiled:
    for rendering and tests."""
    parts: list[LoweredPart] = []
    generator = get_codegen(codegen)

    def inner(role: str, part: torch.fx.GraphModule, inputs: list[Any]) -> Callable[..., Any]:
        aten_graph = _aten_graph(part, inputs)
        parts.append(LoweredPart(role, aten_graph, *_schedule_aten(aten_graph, generator)))
        return part

    example_inputs = list(example_inputs)
    symbolic = SymbolicInputs.of(gm, example_inputs)
    compile_with_aot(gm, example_inputs, inner, lambda variants: None, symbolic)
    return parts


def _aten_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> AtenGraph:
    output = next(n for n in gm.graph.nodes if n.op == "output")
    return AtenGraph(gm, example_inputs, pytree.tree_flatten(output.args[0])[1])


def _schedule_aten(
    aten_graph: AtenGraph, generator: Any
) -> tuple[GraphLowering, list[Any], list[FusedGroup]]:
    graph = GraphLowering(aten_graph.gm, aten_graph.fake_inputs, generator.column_reductions).run()
    outputs = {v.buffer.name for v in graph.outputs if isinstance(v, BufferView)}
    extern_reads: set[str] = set()
    for step in graph.steps:
        if isinstance(step, ExternCall):
            extern_reads |= extern_arg_buffers(step)
    with sizes.using(graph.sizes):
        steps = schedule(graph.steps, outputs, extern_reads)
        if generator.in_place:
            assign_in_place(steps, outputs, extern_reads, EXTERN_BY_DESIGN)
    groups = [s for s in steps if isinstance(s, FusedGroup)]
    return graph, steps, groups


def render_kernels(gm: torch.fx.GraphModule, example_inputs: list[Any], codegen: str) -> str:
    """The kernels' source for these inputs, without compiling or the language prelude:
    what the golden tests compare.  A training graph renders its forward and backward."""
    generator = get_codegen(codegen)
    parts = lower_parts(gm, example_inputs, codegen)
    rendered = []
    for p in parts:
        with sizes.using(p.graph.sizes):
            rendered.append(generator.render(p.groups, p.graph.buffers))
    if len(parts) == 1:
        return rendered[0]
    return "".join(
        f"# ======== {p.role} ========\n{r}" for p, r in zip(parts, rendered, strict=True)
    )


def _compile(aten_graph: AtenGraph, generator: Any, guard_start: int = 0) -> Callable[..., Any]:
    gm = aten_graph.gm
    graph, steps, groups = _schedule_aten(aten_graph, generator)
    with sizes.using(graph.sizes):
        generated = generator.generate(groups, graph.buffers)
    generated.device = graph.device.type
    conditions = graph.sizes.conditions_since(guard_start)
    builder = WrapperBuilder(graph, steps, generated, aten_graph.out_spec, conditions)
    wrapper_source = builder.build()
    future = generator.load(generated) if groups else None
    namespace = builder.namespace
    state = {"warned": set()}

    def fallback(args: tuple[Any, ...], reason: str) -> Any:
        stats.eager_runs += 1
        if reason not in state["warned"]:
            state["warned"].add(reason)
            log.info("inductor-lite: eager run of a compiled graph: %s", reason)
        return gm(*args)

    namespace["_fallback"] = fallback
    namespace["_gm"] = gm
    if future is not None:
        # Kernels compile on a thread pool while the wrapper is built; wait here so the
        # returned callable's code never changes after it is handed out (a frame-evaluation
        # front end may mark that code object as "never intercept").
        try:
            kernels = future.result()
        except Exception as error:
            if config.strict:
                raise
            return _op_by_op(gm, f"kernel compile failed: {error}")
        for group in groups:
            namespace[f"_k_{group.name}"] = kernels[group.name]
        namespace["_kernels_library"] = kernels
    call = load_wrapper(wrapper_source, namespace)
    stats.parts_compiled += 1
    call.source_code = (
        f"{wrapper_source}\n\n# ---- kernels ({generated.language}) ----\n{generated.source}"
    )
    call.wrapper_source = wrapper_source
    call.kernel_source = generated.source
    call.fallback_reasons = list(graph.fallback_reasons)
    call.kernel_count = len(groups)
    call.graph_module = gm
    output_code_log.debug("inductor-lite output code:\n%s", call.source_code)
    return call
