"""From a frame to (transformed code, guards): trace, break, compile graphs, generate code.

`convert_frame(code, f_locals, f_globals, ...)` is the whole capture of one frame and can
be called without the frame hook (tests do); `FrameCallback` is what frameeval calls on a
cache miss.  Failures never reach the user as wrong answers: an internal error leaves the
frame to run eagerly (logged), an exception eager would raise is raised by the original
instruction, which the graph break runs for real.
"""

from __future__ import annotations

import copy
import itertools
import logging
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch

from framejit.frameeval import bytecode as fbc
from framejit.guards import compile_guards

from . import dim_policy, events, global_names, opcodes, rerun, resume
from .backends import backend_name
from .codegen import PyCodegen, check_call_layout
from .config import config
from .dim_policy import DimPolicy
from .exc import (
    BackendCompilerFailed,
    GraphBreakInFullgraph,
    RestartAnalysis,
    SkipFrame,
    Unsupported,
)
from .log_format import format_bytecode, format_graph_tabular, format_guards
from .logs import logger
from .module_policy import ModulePolicy
from .output_graph import OutputGraph
from .records import CompileRecord, GraphBreakRecord, GraphRecord, InputMeta
from .resume import ResumeFunction, make_resume_function
from .sources import LocalSource
from .symbolic_convert import InstructionTranslator, LazyVariable
from .trace_state import TraceState
from .variables import IteratorVariable, NullVariable, TensorVariable
from .variables.autocast import AutocastState, restart_before_open_block
from .variables.generators import restart_before_live_generator

log = logger("dynamo")
_records = itertools.count()


def reset_counters() -> None:
    global _records
    global_names.reset_counter()  # shared by __compiled_fn_<n> and __resume_at_<offset>_<n>
    _records = itertools.count()


@dataclass
class ConvertResult:
    code: types.CodeType  # what to run: transformed, or the original when nothing was captured
    check_fn: Any
    record: CompileRecord
    transformed: bool = True


@dataclass
class _Capture:
    """Everything one successful trace produced, before code generation."""

    tx: InstructionTranslator
    output: OutputGraph
    break_reason: str | None = None
    graphs: list[GraphRecord] = field(default_factory=list)
    resumes: dict[str, types.CodeType] = field(default_factory=dict)
    states: tuple[TraceState, TraceState] | None = None  # global state at entry, at the end


def _global_state_guard():
    try:
        from framejit.guards import global_state_guard
    except ImportError:
        from framejit.guards.global_state import global_state_guard
    return global_state_guard()


def _aliasing_guards(output: OutputGraph) -> list:
    """Tensor inputs traced as distinct objects must stay distinct (and aliases stay aliases)."""
    from framejit.guards import Guard, GuardKind, NumpyTensorSource

    first_of: dict[int, Any] = {}
    guards = []
    for graph_input in output.inputs.values():
        if not isinstance(graph_input.value, torch.Tensor):
            continue  # a size symbol's int
        if isinstance(graph_input.source, NumpyTensorSource):
            continue  # a new tensor each call; the ndarray's own tracker is aliased by id
        key = id(graph_input.value)
        if key in first_of:
            guards.append(Guard(graph_input.source, GuardKind.TENSOR_ALIASING, first_of[key]))
        else:
            first_of[key] = graph_input.source
    if len(first_of) > 1:
        guards.append(Guard(None, GuardKind.NO_TENSOR_ALIASING, list(first_of.values())))
    return guards


def _source_line(filename: str, lineno: int) -> str:
    import linecache

    return linecache.getline(filename, lineno).strip()


def convert_frame(*args: Any, **kwargs: Any) -> ConvertResult:
    """Capture one frame (arguments: see _convert_frame).

    The trace's objects (translator, output graph, trackers) form reference cycles that
    hold the frame's arguments.  They are broken here, when the capture ends, so a model
    dropped right after its first call is freed at once, with its cache entry, rather than
    one garbage collection later.
    """
    traces: list = []
    # saved-tensor pack/unpack hooks belong to the compiled program's run, not to its
    # trace: fake propagation of an op that saves a tensor must not call them
    hooks_were_tracing = torch._C._autograd._saved_tensors_hooks_set_tracing(True)
    try:
        return _convert_frame(*args, traces=traces, **kwargs)
    finally:
        torch._C._autograd._saved_tensors_hooks_set_tracing(hooks_were_tracing)
        for obj in traces:
            vars(obj).clear()


def _convert_frame(
    code: types.CodeType,
    f_locals: dict,
    f_globals: dict,
    f_builtins: Any = None,
    closure: tuple | None = None,
    *,
    backend,
    fullgraph: bool = False,
    is_recompile: bool = False,
    recompile_reasons: list[str] | None = None,
    recompile_failures: list[list[str]] | None = None,
    dynamic: bool | None = None,
    traces: list,
) -> ConvertResult:
    start = time.perf_counter()
    if f_builtins is None:
        f_builtins = f_globals.get("__builtins__", __builtins__)
    record = _new_record(
        code,
        is_recompile=is_recompile,
        recompile_reasons=list(recompile_reasons or []),
        recompile_failures=[list(f) for f in recompile_failures or []],
    )
    log.debug("start tracing %s %s:%s", code.co_name, code.co_filename, code.co_firstlineno)
    if logger("bytecode").isEnabledFor(logging.DEBUG):
        logger("bytecode").debug("%s", format_bytecode("ORIGINAL BYTECODE", code))
    break_at = None
    capture = None
    skip_reason = None
    entry_state = TraceState.now()
    trace_start = time.perf_counter()
    dim_policy = DimPolicy.for_code(code, dynamic)
    moved_break = False
    module_policy = ModulePolicy.for_code(code)
    for _ in range(3):
        output = OutputGraph(f_globals, dim_policy, module_policy)
        output.fullgraph = fullgraph
        tx = InstructionTranslator(code, f_globals, f_builtins, f_locals, closure, output, break_at)
        traces += (tx, output)
        try:
            tx.run()
            if not moved_break:
                moved_break = True
                restart_before_open_block(output, tx.break_inst)
                _restart_before_live_generator(tx, output)
        except RestartAnalysis as restart:
            if break_at is not None and not getattr(restart, "moved_break", False):
                raise AssertionError("the trace did not repeat itself") from restart
            brk = GraphBreakRecord(
                reason=restart.reason,
                filename=code.co_filename,
                lineno=restart.lineno,
                source_line=_source_line(code.co_filename, restart.lineno),
                offset=restart.offset,
                function_name=code.co_name,
            )
            record.graph_breaks.append(brk)
            _log_break(brk)
            if fullgraph:
                raise GraphBreakInFullgraph(
                    f"graph break with fullgraph=True: {restart.reason}\n"
                    f'  File "{code.co_filename}", line {restart.lineno}, in {code.co_name}\n'
                    f"    {brk.source_line}"
                ) from None
            break_at = (restart.index, restart.visit)
            continue
        except SkipFrame as e:
            skip_reason = str(e)
        finally:
            end_state = TraceState.now()
            entry_state.restore()
            for ctx in reversed(output.open_contexts):
                ctx.leave_trace_state()
        capture = _Capture(
            tx, output, record.graph_breaks[-1].reason if record.graph_breaks else None
        )
        capture.states = (entry_state, end_state)
        break
    record.timings["trace"] = time.perf_counter() - trace_start

    transformed = None
    backend_time = 0.0
    if skip_reason is None:
        try:
            transformed, backend_time = _generate(code, f_globals, capture, backend, record)
        except SkipFrame as e:
            skip_reason = str(e)
        except Unsupported as e:
            skip_reason = f"cannot generate the rewritten frame: {e.reason}"
        finally:
            entry_state.restore()  # a backend tracing the graph runs its state switches
    # after the backend: its own tracing may add facts about the sizes to the ShapeEnv
    guards_start = time.perf_counter()
    guards = output.all_guards()
    guards.extend(_aliasing_guards(output))
    guards.append(_global_state_guard())
    check_fn = compile_guards(guards, global_scope=f_globals)
    record.timings["guards"] = time.perf_counter() - guards_start
    record.check_fn = check_fn
    record.dynamic_changes = list(dim_policy.changes)

    if transformed is None:
        record.skipped_reason = skip_reason or NOTHING_TO_CAPTURE
        # a frame that had something to capture and runs eagerly cannot hide: INFO
        level = logging.DEBUG if skip_reason is None else logging.INFO
        log.log(
            level,
            "running %s (%s:%s) eagerly: %s",
            code.co_name,
            code.co_filename,
            code.co_firstlineno,
            record.skipped_reason,
        )
    else:
        record.transformed_code = transformed
        if logger("bytecode").isEnabledFor(logging.DEBUG):
            logger("bytecode").debug("%s", format_bytecode("MODIFIED BYTECODE", transformed))
    if logger("guards").isEnabledFor(logging.DEBUG):
        logger("guards").debug("%s", format_guards(check_fn))
    # the compiled graphs leave the module's globals with the cache entry (global_names.py)
    global_names.uninstall_with(check_fn, f_globals, [g.name for g in record.graphs])
    record.timings["backend"] = backend_time
    record.timings["total"] = time.perf_counter() - start
    events.publish(record)
    return ConvertResult(transformed or code, check_fn, record, transformed is not None)


NOTHING_TO_CAPTURE = "no tensor operations to capture"


def _new_record(code: types.CodeType, **fields) -> CompileRecord:
    """A record for `code` with the next index, before anything is transformed."""
    return CompileRecord(
        index=next(_records),
        function_name=code.co_name,
        filename=code.co_filename,
        firstlineno=code.co_firstlineno,
        code=code,
        transformed_code=None,
        check_fn=None,
        **fields,
    )


def publish_eager_frame(code: types.CodeType, reason: str) -> CompileRecord:
    """A frame sent wholly to eager outside convert_frame's own path (an internal error):
    published like any other, with its reason in `skipped_reason`."""
    record = _new_record(code, skipped_reason=reason)
    events.publish(record)
    return record


def _log_break(brk: GraphBreakRecord) -> None:
    logger("graph_breaks").debug(
        "Graph break in user code at %s:%s\nReason: %s\nUser code: %s",
        brk.filename,
        brk.lineno,
        brk.reason,
        brk.source_line,
    )


# ---------------------------------------------------------------------------- code generation


def _generate(code, f_globals, capture: _Capture, backend, record: CompileRecord):
    tx = capture.tx
    output = capture.output
    inst = tx.break_inst
    if output.open_contexts:
        # its graph would leave autocast switched (variables/autocast.py)
        raise SkipFrame("graph break inside an autocast block, or one entered and not left")
    if (
        inst is None
        and output.count_calls() == 0
        and not output.side_effects
        and not output.inlined_calls
    ):
        return None, 0.0
    if inst is not None:
        if _inside_loop(tx.decoded, inst.index):
            # as TorchDynamo: a resume function per iteration would recompile on each one;
            # the functions the loop calls are still compiled as frames of their own
            raise SkipFrame("graph break in a for/while loop")
        if code.co_cellvars and _closures_alive(tx):
            raise SkipFrame("graph break while a closure over this frame's locals is alive")
        protected = tx.decoded.handler_for(inst.index)
        effect = opcodes.break_stack_effect(inst)
        if effect is None:
            raise SkipFrame(f"graph break at {inst.realname}, which cannot be re-run alone")
        consumed = effect[0]
    else:
        protected = effect = None
        consumed = 0  # RETURN_VALUE already popped the value: it is tx.return_value
    stack = tx.stack
    deep = stack[: len(stack) - consumed]
    top = stack[len(stack) - consumed :]
    moves = _result_moves(tx, inst, effect)
    targets = _resume_targets(tx, inst, len(moves))
    if protected is not None:
        _check_protected(inst, protected, deep)
        targets.append(protected.target)
    live_by_target = {off: _live_values(tx, off) for off in targets}
    if moves and inst.index + 1 + len(moves) in live_by_target:
        at = inst.index + 1 + len(moves)
        live_by_target[at] = _live_after_moves(tx, at, moves, live_by_target[at])

    def emit_body(cg: PyCodegen) -> None:
        _preload(cg, preload)
        output.side_effects.codegen(cg)
        cg.side_effects_end = len(cg.insts)
        cg.break_end = None
        cg.break_original = None
        if inst is None:
            tx.return_value.reconstruct(cg)
            cg.emit("RETURN_VALUE")
        elif inst.opname in opcodes.CONDITIONAL_JUMPS:
            _emit_conditional_break(cg, tx, inst, deep, top, live_by_target, resumes, protected)
        else:
            _emit_break(
                cg, tx, inst, deep, top, effect[1], live_by_target, resumes, protected, moves
            )

    # pass 1: which graph values does the generated code need?
    resumes: dict[int, ResumeFunction] = {}
    preload: list = []
    collect = PyCodegen(code, f_globals=f_globals)
    collect.resume_placeholder = True
    emit_body(collect)
    needed = collect.collected
    if output.side_effects:
        # a value read through a container or attribute after the replay would see the
        # replayed state (alist[1] after alist.pop() was replayed): read it before
        preload = _nested_sources_after(collect, collect.side_effects_end)
        collect = PyCodegen(code, f_globals=f_globals)
        collect.resume_placeholder = True
        emit_body(collect)
        needed = collect.collected

    backend_time = 0.0
    graph_call: list = []
    output_var = "___graph_out"
    output_index: dict = {}
    grad_switch = _only_grad_switches(output)
    if grad_switch is not None and not needed:
        # a graph of nothing but grad-mode switches (a break at the start of a no_grad
        # block) is no graph: its last switch runs in the rewritten frame, as
        # torch.compile drops such a pointless graph
        gen = PyCodegen(code)
        gen.add_push_null(lambda: gen.load_const(torch._C._set_grad_enabled))
        gen.load_const(grad_switch)
        gen.call(1)
        gen.pop_top()
        graph_call = gen.insts
    elif output.count_calls() > 0 or _compiles_empty_graph(inst, output, stack):
        backend_start = time.perf_counter()
        graph_record, inputs = _compile_graph(output, needed, backend)
        backend_time = time.perf_counter() - backend_start
        record.graphs.append(graph_record)
        output_index = {vt.node: i for i, vt in enumerate(needed)}
        gen = PyCodegen(code)
        gen.load_global(graph_record.name, push_null=True)
        for graph_input in inputs:
            gen.load_source(graph_input.source)
        gen.call(len(inputs))
        gen.emit("STORE_FAST", output_var)
        graph_call = gen.insts
    elif needed:
        raise SkipFrame("graph values needed without a graph")

    if capture.states is not None:
        gen = PyCodegen(code)
        capture.states[1].emit_replay(gen, capture.states[0])
        graph_call = [*graph_call, *gen.insts]

    # pass 2: the real code, with resume functions created in program order
    cg = PyCodegen(code, output_var, output_index, f_globals)
    cg.resume_placeholder = False
    cg.new_name = lambda offset: global_names.new_name(
        f_globals, lambda n: f"__resume_at_{offset}_{n}"
    )
    cg.record = record
    resumes.clear()
    emit_body(cg)
    _check_stale_free_reads(cg, code, output.side_effects.stored_cells())
    problem = check_call_layout([*graph_call, *cg.insts])
    if problem is not None:
        raise SkipFrame(f"generated code would call wrongly: {problem}")
    body = fbc.body(fbc.decode(code))
    prefix = body.items[: body.prefix_end()]
    protected = output.inlined_try or rerun.protected_trace(
        tx.decoded, inst.index if inst is not None else None
    )
    if record.graphs and protected and rerun.rerunnable(record.graphs[-1].graph_module):
        # the graph raising inside a try/with of the traced code: drop the exception and
        # run the original bytecode from its start, so its handlers see it (rerun.py)
        original = fbc.body(fbc.decode(code))
        handler = fbc.Label()
        items = [
            *prefix,
            fbc.TryBegin(handler, 0),
            *graph_call,
            fbc.TryEnd(),
            *cg.insts,
            handler,
            fbc.inst("POP_TOP"),
            *original.items[original.prefix_end() :],
        ]
        try:
            return fbc.assemble(items, code, docstring=None), backend_time
        except Exception as e:  # without the fallback the frame still runs
            log.debug("no original-bytecode fallback for %s: %s", code.co_name, e)
    items = [*prefix, *graph_call, *cg.insts]
    return fbc.assemble(items, code, docstring=None), backend_time


def _nested_sources_after(cg: PyCodegen, start: int) -> list:
    from .sources import AttrSource, ItemSource, source_name

    seen: dict[str, Any] = {}
    for position, source in cg.sources_loaded:
        if position >= start and isinstance(source, (AttrSource, ItemSource)):
            seen.setdefault(source_name(source), source)
    return list(seen.values())


def _preload(cg: PyCodegen, sources: list) -> None:
    from .sources import source_name

    for i, source in enumerate(sources):
        cg.load_source(source)
        temp = f"___preload_{i}"
        cg.emit("STORE_FAST", temp)
        cg.preloaded[source_name(source)] = temp


def _only_grad_switches(output: OutputGraph) -> bool | None:
    """The grad mode the graph leaves, when its ops are all grad-mode switches."""
    calls = [
        n for n in output.graph.nodes if n.op in ("call_function", "call_method", "call_module")
    ]
    if not calls or any(n.target is not torch._C._set_grad_enabled for n in calls):
        return None
    return bool(calls[-1].args[0])


def _compiles_empty_graph(inst, output: OutputGraph, stack: list) -> bool:
    """torch.compile hands even an empty graph to the backend at a data-dependent jump when
    the stack holds only distinct tensors and nothing else changed (its common-case path
    compiles the stack as the graph's outputs): do the same, so frame counts match."""
    if inst is None or inst.opname not in opcodes.CONDITIONAL_JUMPS or output.side_effects:
        return False
    if not all(isinstance(vt, TensorVariable) for vt in stack):
        return False
    return len({id(vt) for vt in stack}) == len(stack)


def _check_stale_free_reads(cg: PyCodegen, code: types.CodeType, stored: list[str]) -> None:
    """A value the trace read from a free variable is rebuilt by loading that variable again
    (its source is L['name']).  After the replayed store to it, or after a graph-break
    instruction (which may run code that rebinds it), that load would see a newer value than
    the trace did: run the frame eagerly instead."""
    if not code.co_freevars:
        return
    checks = []
    if stored:
        checks.append((cg.side_effects_end, set(stored), "reassigned in the traced code"))
    if cg.break_end is not None:
        checks.append((cg.break_end, set(code.co_freevars), "possibly rebound at the graph break"))
    for start, names, why in checks:
        for ins in cg.insts[start:]:
            if ins is cg.break_original or getattr(ins, "opname", None) != "LOAD_DEREF":
                continue
            if ins.argval in code.co_freevars and ins.argval in names:
                raise SkipFrame(
                    f"a value read from closure variable {ins.argval!r} is needed after it was {why}"
                )


def _inside_loop(decoded, index: int) -> bool:
    """Does a later jump go back to `index` or before it (a loop around it)?"""
    return any(
        inst.target is not None and inst.target <= index for inst in decoded.insts[index + 1 :]
    )


def _resume_targets(tx, inst, moved: int = 0) -> list[int]:
    """Instruction indices where the frame continues after the break (after the `moved`
    instructions that _result_moves runs in the rewritten frame)."""
    if inst is None or inst.opname in opcodes.TERMINAL:
        return []
    if inst.opname in opcodes.CONDITIONAL_JUMPS:
        return [inst.index + 1, inst.target]
    return [inst.index + 1 + moved]


# what the instruction after a break does with the break's result, when it only moves it
_RESULT_MOVES = ("POP_TOP", "STORE_FAST")


def _result_moves(tx, inst, effect) -> list:
    """The instruction after the break when it drops the break's result or stores it in a
    local (`x.tolist()` as a statement, `n = t.item()`): it runs in the rewritten frame,
    so the resume function gets the value as a local, read (and guarded) only if its code
    reads it, rather than as a stack value that its trace would specialize on.  Without
    this, a break whose result changes per call (a float, a list of floats) recompiles
    the resume function on each call, as TorchDynamo's lazily guarded stack does not."""
    if inst is None or effect is None or effect[1] != 1 or inst.opname in opcodes.TERMINAL:
        return []
    if inst.opname in opcodes.CONDITIONAL_JUMPS:
        return []
    following = tx.decoded.insts[inst.index + 1]
    return [following] if following.opname in _RESULT_MOVES else []


def _live_after_moves(tx, index: int, moves: list, live: list) -> list:
    """`live` at `index` with the locals that `moves` stored, now read from the frame."""
    stored = {m.argval for m in moves if m.opname == "STORE_FAST"}
    if not stored:
        return live
    wanted = tx.decoded.live_locals_at(index)
    by_name = {name: vt for name, vt in live if name not in stored}
    for name in stored & set(wanted):
        by_name[name] = LazyVariable(None, LocalSource(name))
    order = {name: i for i, name in enumerate(tx.code.co_varnames)}
    return sorted(by_name.items(), key=lambda item: order.get(item[0], len(order)))


def _live_values(tx, index: int) -> list[tuple[str, Any]]:
    """Locals the code from `index` on may read; cell variables are passed by value (new cells)."""
    live = tx.decoded.live_locals_at(index)
    code = tx.code
    if "__class__" in code.co_freevars and code.co_argcount:
        # zero-argument super() reads the first local without naming it
        live = {*live, code.co_varnames[0]}
    if {"locals", "vars"} & set(code.co_names):
        # locals() reads every bound name without naming it
        live = set(code.co_varnames)
    out = []
    for name in tx.code.co_varnames:
        if name in live and name in tx.symbolic_locals:
            out.append((name, tx.symbolic_locals[name]))
    for name in tx.code.co_cellvars:
        cell = tx.cells.get(name)
        if cell is not None and cell.contents is not None:
            out.append((name, cell.contents))
    return out


def _restart_before_live_generator(tx, output: OutputGraph) -> None:
    """What is live at the break or the return, or stored where it outlives the frame,
    for generators.restart_before_live_generator."""
    roots = [*tx.stack, tx.return_value, *output.side_effects.escaping_values()]
    if tx.break_inst is not None:
        for target in _resume_targets(tx, tx.break_inst):
            roots.extend(vt for _, vt in _live_values(tx, target))
    restart_before_live_generator(tx, roots, output.generators)


def _closures_alive(tx) -> bool:
    """Is a function holding this frame's cells reachable after the break?  (Then new cells
    in the resume function would diverge from the ones that function sees.)"""
    from .variables import NestedUserFunctionVariable

    stack = [*tx.stack, *tx.symbolic_locals.values()]
    stack.extend(c.contents for c in tx.cells.values() if c.contents is not None)
    seen: set[int] = set()
    while stack:
        vt = stack.pop()
        if id(vt) in seen:
            continue
        seen.add(id(vt))
        if isinstance(vt, NestedUserFunctionVariable) and vt.closure:
            return True
        items = getattr(vt, "items", None)
        if isinstance(items, list):
            stack.extend(items)
        elif isinstance(items, dict):
            stack.extend(items.values())
    return False


def _reconstruct_local(cg: PyCodegen, name: str, vt) -> None:
    if isinstance(vt, LazyVariable):
        cg.load_local(name)
    else:
        vt.reconstruct(cg)


def _stack_kind(vt) -> str:
    if isinstance(vt, NullVariable):
        return resume.NULL
    if isinstance(vt, IteratorVariable):
        return resume.ITERATOR
    return resume.VALUE


def _reconstruct_stack_arg(cg: PyCodegen, vt) -> None:
    if isinstance(vt, IteratorVariable):
        vt.reconstruct_remaining(cg)
    elif not isinstance(vt, NullVariable):
        vt.reconstruct(cg)


def _call_resume(cg, tx, index, deep, produced: int, live, resumes, leading_dummy=False):
    """The resume function for instruction `index`, given the saved stack and the live locals."""
    kinds = tuple(_stack_kind(v) for v in deep) + (resume.VALUE,) * produced
    names = tuple(name for name, _ in live)
    if getattr(cg, "resume_placeholder", True):
        return None
    fn = make_resume_function(tx.code, index, kinds, names, cg.new_name, leading_dummy)
    resumes[index] = fn
    cg.record.resume_functions[fn.name] = fn.code
    passed = [(resume.stack_arg_name(i), v) for i, v in enumerate(_non_null(deep))] + list(live)
    dim_policy.propagate(fn.code, [(name, getattr(v, "example", None)) for name, v in passed])
    return fn


def _non_null(values: list) -> list:
    return [v for v in values if not isinstance(v, NullVariable)]


def _load_resume(cg: PyCodegen, tx, fn: ResumeFunction | None, method_style=False, live=()) -> None:
    """Load the resume function for a call: [NULL, fn] in this version's order, or, with
    `method_style`, [fn, None] (it then takes a leading dummy argument): no NULL on the
    stack, so a handler of the rewritten code can pop it.  A resume function that takes
    the frame's first local first (zero-argument super()) gets it in that self slot: a
    dummy there would be the first local super() reads."""

    def load() -> None:
        if fn is None:
            cg.load_const(None)
        elif fn.code.co_freevars:
            cg.make_closure(fn.code)
        else:
            global_names.install(
                cg.f_globals, fn.name, types.FunctionType(fn.code, cg.f_globals, fn.name)
            )
            cg.load_global(fn.name)

    if method_style:
        load()
        first = [vt for name, vt in live if fn is not None and name == fn.first_local]
        if first:
            _reconstruct_local(cg, fn.first_local, first[0])
        else:
            cg.load_const(None)
    else:
        cg.add_push_null(load)


def _load_first_local(cg, fn: ResumeFunction | None, live: list, pushed=False) -> list:
    """Push the resume function's leading argument (see ResumeFunction.first_local; not
    when `_load_resume` `pushed` it as the method-style self) and return the live locals
    still to pass after the stack values."""
    if fn is None or fn.first_local is None:
        return live
    for name, vt in live if not pushed else ():
        if name == fn.first_local:
            _reconstruct_local(cg, name, vt)
    return [(name, vt) for name, vt in live if name != fn.first_local]


def _check_protected(inst, entry, deep) -> None:
    """A break inside a try/with range runs its instruction under an equivalent handler
    (see _emit_break, _emit_conditional_break): the handler's stack must be one that can
    be passed on."""
    if inst.opname.endswith("_OR_POP"):
        raise SkipFrame("conditional graph break keeping its value inside a try/with block")
    if entry.depth > len(deep) or any(isinstance(v, NullVariable) for v in deep[: entry.depth]):
        raise SkipFrame("graph break inside a try/with block with a call under way around it")


def _emit_break(
    cg, tx, inst, deep, top, produced, live_by_target, resumes, protected=None, moves=()
):
    """The graph-break instruction, run for real, then a call to the resume function.

    Inside a try/with range (`protected`: the exception-table entry covering it) the
    instruction runs under a handler of the rewritten code that hands the exception, the
    handler's stack and the live locals to a resume function starting at the original
    handler (run eagerly: it is the exception path).  The resume call stays outside that
    range: code after the break has the original's handlers in its own copy."""
    cg.lineno = inst.lineno
    terminal = inst.opname in opcodes.TERMINAL
    fn = None
    extras = 0
    if not terminal:
        after = inst.index + 1 + len(moves)
        produced -= len(moves)
        live = live_by_target[after]
        fn = _call_resume(
            cg, tx, after, deep, produced, live, resumes, leading_dummy=bool(protected)
        )
        before = _stack_size(cg)
        _load_resume(cg, tx, fn, method_style=bool(protected), live=live)
        live = _load_first_local(cg, fn, live, pushed=bool(protected))
        extras = _stack_size(cg) - before
        for vt in deep:
            _reconstruct_stack_arg(cg, vt)
    elif protected is not None:  # a raise/return: what the handler keeps is below it
        for vt in deep[: protected.depth]:
            _reconstruct_stack_arg(cg, vt)
    for vt in top:
        vt.reconstruct(cg)
    handler = fbc.Label()
    if protected is not None:
        depth = extras + protected.depth
        cg.insts.append(fbc.TryBegin(handler, depth, protected.lasti))
    # the original instruction (with its keyword names, which 3.11/3.12 keep aside)
    if inst.opname == "CALL" and tx.kw_names:
        cg.call_kw(inst.arg, tuple(tx.kw_names))
    else:
        if inst.opname == "UNARY_NOT" and fbc.VERSION.jumps_need_bool:
            cg.emit("TO_BOOL")  # the TO_BOOL before it was traced as a no-op
        cg.break_original = copy.copy(inst)
        cg.break_original.target = None
        cg.insts.append(cg.break_original)
    if protected is not None:
        cg.insts.append(fbc.TryEnd())
    cg.break_end = len(cg.insts)
    for move in moves:
        cg.emit(move.opname, move.argval if move.opname == "STORE_FAST" else None)
    if not terminal:
        for name, vt in live:
            _reconstruct_local(cg, name, vt)
        nargs = sum(1 for v in deep if not isinstance(v, NullVariable)) + produced + len(live)
        # passed before the stack values (method-style: in the pair's self slot, uncounted)
        nargs += fn is not None and fn.first_local is not None and not protected
        cg.call(nargs)
        cg.emit("RETURN_VALUE")
    if protected is not None:
        cg.insts.append(handler)
        _emit_handler(cg, tx, inst, deep, protected, extras, live_by_target, resumes)


def _emit_handler(cg, tx, inst, deep, entry, extras, live_by_target, resumes) -> None:
    """Entered with [extras, handler stack, (lasti), exception]: call the resume function
    that continues at the original handler with the handler stack, lasti, the exception."""
    kept = deep[: entry.depth]
    cg.emit("STORE_FAST", "___exc")
    if entry.lasti:
        cg.pop_top()  # this frame's; the resume function gets the lasti of its own copy
    for i in reversed(range(len(kept))):
        cg.emit("STORE_FAST", f"___handler{i}")
    for _ in range(extras):
        cg.pop_top()
    live = live_by_target[entry.target]
    kinds = tuple(_stack_kind(v) for v in kept) + (resume.VALUE,) * (1 + entry.lasti)
    fn = None
    if not getattr(cg, "resume_placeholder", True):
        names = tuple(name for name, _ in live)
        fn = make_resume_function(tx.code, entry.target, kinds, names, cg.new_name)
        resumes[entry.target] = fn
        cg.record.resume_functions[fn.name] = fn.code
        from framejit import frameeval as fe

        fe.skip(fn.code)  # the exception path runs as the original code does, eagerly
    _load_resume(cg, tx, fn)
    live = _load_first_local(cg, fn, live)
    for i in range(len(kept)):
        cg.emit("LOAD_FAST", f"___handler{i}")
    if entry.lasti:
        index = resume.to_original(tx.code, inst.index)[1]
        cg.load_const(fn.lasti_of(index) if fn is not None else 0)
    cg.emit("LOAD_FAST", "___exc")
    for name, vt in live:
        _reconstruct_local(cg, name, vt)
    nargs = len(kept) + entry.lasti + 1 + len(live)
    nargs += fn is not None and fn.first_local is not None
    cg.call(nargs)
    cg.emit("RETURN_VALUE")


def _stack_size(cg: PyCodegen) -> int:
    """Net stack effect of what `cg` emitted so far (straight-line code)."""
    total = 0
    for item in cg.insts:
        if isinstance(item, fbc.Inst):
            total += fbc.stack_effect(item, jump=False)
    return total


def _emit_conditional_break(
    cg, tx, inst, deep, top, live_by_target, resumes, protected=None
) -> None:
    """Test the value for real and continue in one of two resume functions.  The *_OR_POP
    jumps keep the tested value on their jump path: that resume function gets it as its
    top stack value (it is rebuilt from the graph's outputs, not kept on the stack).

    Inside a try/with range (`protected`) the test (bool() of a tensor may raise) runs
    under a handler of the rewritten code, over the handler's stack as the original has
    it, which goes to the resume function at the original handler (see _emit_break); the
    two paths drop that stack before their resume call."""
    cg.lineno = inst.lineno
    kept = deep[: protected.depth] if protected is not None else []
    for vt in kept:
        _reconstruct_stack_arg(cg, vt)
    top[0].reconstruct(cg)
    label = fbc.Label()
    handler = fbc.Label()
    if protected is not None:
        cg.insts.append(fbc.TryBegin(handler, len(kept), protected.lasti))
    cg.jump_if(inst.opname in ("POP_JUMP_IF_TRUE", "JUMP_IF_TRUE_OR_POP"), label)
    if protected is not None:
        cg.insts.append(fbc.TryEnd())
    cg.break_end = len(cg.insts)  # the truth test may run user code
    keeps = inst.opname.endswith("_OR_POP")
    for index in (inst.index + 1, inst.target):
        produced = 0
        if index != inst.index + 1:
            cg.insts.append(label)
            produced = int(keeps)
        for _ in kept:
            cg.pop_top()
        live = live_by_target[index]
        fn = _call_resume(cg, tx, index, deep, produced, live, resumes)
        _load_resume(cg, tx, fn)
        live = _load_first_local(cg, fn, live)
        for vt in deep:
            _reconstruct_stack_arg(cg, vt)
        if produced:
            top[0].reconstruct(cg)
        for name, vt in live:
            _reconstruct_local(cg, name, vt)
        nargs = sum(1 for v in deep if not isinstance(v, NullVariable)) + produced + len(live)
        nargs += fn is not None and fn.first_local is not None
        cg.call(nargs)
        cg.emit("RETURN_VALUE")
    if protected is not None:
        cg.insts.append(handler)
        _emit_handler(cg, tx, inst, deep, protected, 0, live_by_target, resumes)


# ---------------------------------------------------------------------------- graphs


def _backend_fake_mode(output: OutputGraph):
    """The fake mode a backend fakifies the example inputs in.  The trace's own, unless a
    `.data =` store set_ one of its fake inputs: then a fresh one on the same ShapeEnv, as
    torch.compile always makes, so AOTAutograd does not start from the swapped storage."""
    if not output.data_stores:
        return output.fake_mode
    return torch._subclasses.FakeTensorMode(shape_env=output.fake_mode.shape_env)


def _compile_graph(output: OutputGraph, needed: list[TensorVariable], backend):
    gm = output.build_graph_module([vt.node for vt in needed])
    by_node = {gi.node: gi for gi in output.inputs.values()}
    inputs = [by_node[node] for node in gm.graph.nodes if node.op == "placeholder"]
    name = global_names.new_name(output.f_globals, lambda n: f"__compiled_fn_{n}")
    example_inputs = [gi.value for gi in inputs]  # real tensors, and ints for size symbols
    if logger("graph").isEnabledFor(logging.DEBUG):
        logger("graph").debug("%s", format_graph_tabular(name, gm))
    if logger("graph_code").isEnabledFor(logging.DEBUG):
        logger("graph_code").debug(
            "TRACED GRAPH %s\n%s", name, gm.print_readable(print_output=False)
        )
    bname = backend_name(backend)
    try:
        # as torch.compile calls backends: AOTAutograd's detect_fake_mode finds the trace's
        # FakeTensorMode (and its ShapeEnv) here
        with torch._guards.tracing(torch._guards.TracingContext(_backend_fake_mode(output))):
            compiled = backend(gm, example_inputs)
    except Exception as e:
        if config.raise_backend_errors:
            raise BackendCompilerFailed(f"backend {bname!r} raised {type(e).__name__}: {e}") from e
        warnings.warn(
            f"framejit: backend {bname!r} failed on {name} ({type(e).__name__}: {e}); running the graph eagerly",
            RuntimeWarning,
            stacklevel=2,
        )
        compiled = gm.forward
    if not callable(compiled):
        raise BackendCompilerFailed(
            f"backend {bname!r} returned a non-callable {type(compiled).__name__}"
        )
    _never_capture(compiled)
    source_code = getattr(compiled, "source_code", None)
    # the record keeps the backend's own callable (its source_code, kernel counts); the
    # frame calls it through wrappers
    runs = compiled
    switches = {node.target for node in gm.graph.nodes} & _STATE_SWITCHES
    if switches:
        autocast = torch.amp._enter_autocast in switches
        runs = _restoring_global_state(runs, torch.is_grad_enabled(), autocast)
    runs = _without_capture(runs)
    if source_code and logger("output_code").isEnabledFor(logging.DEBUG):
        logger("output_code").debug("OUTPUT CODE %s\n%s", name, source_code)
    global_names.install(output.f_globals, name, runs)
    metadata = [InputMeta.of(v) for v in example_inputs]
    tensors = example_inputs if events.wants_example_tensors() else None
    return GraphRecord(name, gm, metadata, compiled, bname, tensors), inputs


_STATE_SWITCHES = frozenset({torch._C._set_grad_enabled, torch.amp._enter_autocast})


def _restoring_global_state(compiled, entry_mode: bool, autocast: bool):
    """A graph that switches grad mode or autocast (a no_grad or autocast block), raising
    half-way, would leave it switched; the frame's entry grad mode is guarded, so it is the
    one to put back, and autocast goes back to its state at the call."""

    def run_graph(*args):
        state = AutocastState.now() if autocast else None
        try:
            return compiled(*args)
        except BaseException:
            torch._C._set_grad_enabled(entry_mode)
            if state is not None:
                state.restore()
            raise

    _never_capture(run_graph)
    return run_graph


def _without_capture(compiled):
    """The graph runs with frame capture off on this thread, as torch.compile runs its
    compiled function under `disable`: the frames it runs (a backend's Python wrapper code,
    a Python function a graph node calls) are not user code, and capturing them traced a
    backend's internals (with fullgraph, a GraphBreakInFullgraph out of the backend)."""
    from framejit import frameeval as fe

    set_callback, skip = fe.set_callback, fe.SKIP

    def run_graph(*args):
        previous = set_callback(skip)
        try:
            return compiled(*args)
        finally:
            set_callback(previous)

    _never_capture(run_graph)
    run_graph.__wrapped__ = compiled
    return run_graph


def _never_capture(compiled) -> None:
    """The compiled callable runs under the thread's callback: its own frames are not user code."""
    from framejit import frameeval as fe

    func = getattr(compiled, "__func__", compiled)
    code = getattr(func, "__code__", None)
    if isinstance(code, types.CodeType):
        fe.skip(code)
