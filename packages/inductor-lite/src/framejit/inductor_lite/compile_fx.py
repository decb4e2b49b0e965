"""`compile_fx`: the backend entry point.  Decompose, lower, schedule, generate, compile,
wrap — and if any stage cannot handle the graph, run it eagerly with a logged reason."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch
import torch.fx

from .codegen import get_codegen
from .codegen.triton import TritonCodegenUnavailable
from .config import config
from .decompose import to_core_aten
from .graph_lowering import GraphLowering
from .ir import BufferView, ExternCall
from .scheduler import FusedGroup, extern_arg_buffers, schedule
from .wrapper import WrapperBuilder

log = logging.getLogger("framejit.inductor_lite")
output_code_log = logging.getLogger("framejit.output_code")

CODEGENS = ("cpp", "triton")


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
    """Compile an FX graph for the example inputs; returns a callable with `.source_code`."""
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
    if torch.is_grad_enabled() and any(
        isinstance(t, torch.Tensor) and t.requires_grad for t in example_inputs
    ):
        return _eager(gm, "inputs require grad and grad mode is on (no AOTAutograd yet)")
    try:
        return _compile(gm, example_inputs, generator)
    except TritonCodegenUnavailable:
        raise
    except Exception as error:
        if config.strict:
            raise
        reason = f"{type(error).__name__}: {error}"
        return _eager(gm, reason)


def _lower_and_schedule(
    gm: torch.fx.GraphModule, example_inputs: list[Any]
) -> tuple[Any, GraphLowering, list[Any], list[FusedGroup]]:
    aten_graph = to_core_aten(gm, example_inputs)
    graph = GraphLowering(aten_graph.gm, aten_graph.fake_inputs).run()
    outputs = {v.buffer.name for v in graph.outputs if isinstance(v, BufferView)}
    extern_reads: set[str] = set()
    for step in graph.steps:
        if isinstance(step, ExternCall):
            extern_reads |= extern_arg_buffers(step)
    steps = schedule(graph.steps, outputs, extern_reads)
    groups = [s for s in steps if isinstance(s, FusedGroup)]
    return aten_graph, graph, steps, groups


def render_kernels(gm: torch.fx.GraphModule, example_inputs: list[Any], codegen: str) -> str:
    """The kernels' source for these inputs, without compiling or the language prelude:
    what the golden tests compare."""
    _, graph, _, groups = _lower_and_schedule(gm, list(example_inputs))
    return get_codegen(codegen).render(groups, graph.buffers)


def _compile(
    gm: torch.fx.GraphModule, example_inputs: list[Any], generator: Any
) -> Callable[..., Any]:
    aten_graph, graph, steps, groups = _lower_and_schedule(gm, example_inputs)
    generated = generator.generate(groups, graph.buffers)
    builder = WrapperBuilder(graph, steps, generated, aten_graph.out_spec)
    wrapper_source = builder.build()
    future = generator.load(generated) if groups else None
    namespace = builder.namespace
    state = {"warned": set()}

    def fallback(args: tuple[Any, ...], reason: str) -> Any:
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
            log.warning("inductor-lite: compile failed, the graph runs eagerly: %s", error)
            return _eager(gm, f"kernel compile failed: {error}")
        for group in groups:
            namespace[f"_k_{group.name}"] = kernels[group.name]
        namespace["_kernels_library"] = kernels
    exec(
        compile(wrapper_source, f"<inductor-lite wrapper {id(namespace):x}>", "exec"),
        namespace,
    )
    call = namespace["call"]
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
