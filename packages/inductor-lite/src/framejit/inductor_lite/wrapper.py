"""The Python wrapper of one compiled graph: generated source that checks the inputs,
allocates buffers (reusing dead ones), calls kernels and ATen externs, and builds outputs.

Everything that can be decided at compile time is: the hit path is straight-line code with
constants bound as globals.  Whatever the wrapper cannot serve (other shapes/strides/dtypes,
a changed scalar, autograd needed, an index out of range) runs the original graph eagerly.
"""

from __future__ import annotations

import itertools
import linecache
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import sympy
import torch
from torch.utils import _pytree as pytree

from .codegen.common import GeneratedKernels
from .graph_lowering import GraphLowering, SizeInput
from .ir import BufferView, ComputedBuffer, ExternCall, InputBuffer
from .scheduler import FusedGroup, Step, buffer_readers, extern_arg_buffers
from .sizes import MIN_SIZE, SymbolicUnsupported, pyexpr, pytuple


def _leaves_keeping_none(result: Any) -> list[Any]:
    """An extern's results in meta's flattening order: None (an undefined tensor) is a leaf."""
    return pytree.tree_leaves(result, is_leaf=lambda value: value is None)


def _as_view_of(memory: Any, buffer: Any) -> BufferView:
    """`memory` seen with buffer's layout (the same block of elements)."""
    return BufferView(memory, buffer.size, buffer.stride, 0)


class WrapperBuilder:
    def __init__(
        self,
        graph: GraphLowering,
        steps: list[Step],
        kernels: GeneratedKernels,
        out_spec: pytree.TreeSpec,
        conditions: Sequence[Any] = (),
    ) -> None:
        self.graph = graph
        self.steps = steps
        self.kernels = kernels
        self.out_spec = out_spec
        self.namespace: dict[str, Any] = {
            "_empty": torch.empty_strided,
            "_as_strided": torch.as_strided,
            "_grad_enabled": torch.is_grad_enabled,
            "_tree_leaves": _leaves_keeping_none,
            "_Tensor": torch.Tensor,
        }
        self.lines: list[str] = []
        self.preamble: list[str] = []  # module-level definitions before `call`
        self._constants = 0
        self._read: set[str] = set()  # buffers some step or the output reads
        # relations between size symbols the compiled code relies on (ShapeEnv guards added
        # while compiling): checked at each call
        self.conditions: list[Any] = list(conditions)

    def device_check(self, name: str) -> str:
        """The condition that an input is not on the compiled device."""
        device = self.graph.device
        if device.type == "cpu":
            return f"not {name}.is_cpu"
        return f"{name}.device != {self.const(device)}"

    def device_arg(self) -> str:
        device = self.graph.device
        return "" if device.type == "cpu" else f", device={self.const(device)}"

    def allocate(self, buffer: Any) -> str:
        return (
            f"_empty({pytuple(buffer.size)}, {pytuple(buffer.stride)}, "
            f"dtype={self.const(buffer.dtype)}{self.device_arg()})"
        )

    def const(self, value: Any) -> str:
        if value is None or isinstance(value, (bool, str)):
            return repr(value)
        if isinstance(value, sympy.Basic):  # a size expression: computed from the ks values
            return pyexpr(value)
        if isinstance(value, int):
            return repr(value)
        if isinstance(value, float) and math.isfinite(value):
            return repr(value)
        if isinstance(value, (list, tuple)):
            inner = ", ".join(self.arg(v) for v in value)
            return (
                f"[{inner}]"
                if isinstance(value, list)
                else f"({inner}{',' if len(value) == 1 else ''})"
            )
        name = f"_c{self._constants}"
        self._constants += 1
        self.namespace[name] = value
        return name

    def tensor(self, view: BufferView) -> str:
        name = view.buffer.name
        if view.is_whole():
            return name
        return (
            f"_as_strided({name}, {pytuple(view.size)}, {pytuple(view.stride)}, "
            f"{name}.storage_offset() + {pyexpr(view.offset)})"
        )

    def arg(self, value: Any) -> str:
        if isinstance(value, BufferView):
            return self.tensor(value)
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k!r}: {self.arg(v)}" for k, v in value.items()) + "}"
        return self.const(value)

    def build(self) -> str:
        graph = self.graph
        names = [
            b.name if isinstance(b, InputBuffer) else f"s{i}" for i, b in enumerate(graph.inputs)
        ]
        sources = self._size_sources(names)
        emit = self.lines.append
        emit("def call(*args):")
        if names:
            emit(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = args")
        checks, grad_checks = [], []
        if sources:
            # the size symbols' values, read where the inputs hold them, once the inputs'
            # kinds and ranks are checked (so reading them cannot raise)
            ranks: dict[int, str] = {}
            for position, dim, _ in sources.values():
                name = names[position]
                ranks[position] = (
                    f"{name}.__class__ is not int"
                    if dim is None
                    else f"not isinstance({name}, _Tensor) or {name}.dim() != "
                    f"{len(graph.inputs[position].size)}"
                )
            emit(f"    if {' or '.join(f'({c})' for c in ranks.values())}:")
            emit("        return _fallback(args, 'inputs differ from the compiled example')")
            for symbol, (position, dim, kind) in sources.items():
                if dim is not None:
                    emit(f"    {symbol} = {names[position]}.{kind}({dim})")
            checks.append(" or ".join(f"{symbol} < {MIN_SIZE}" for symbol in sources))
        for name, value in zip(names, graph.inputs, strict=True):
            if isinstance(value, InputBuffer):
                dtype = self.const(value.dtype)
                checks.append(
                    f"{name}.size() != {pytuple(value.size)} or {name}.stride() != {pytuple(value.stride)} "
                    f"or {name}.dtype is not {dtype} or {self.device_check(name)}"
                )
                grad_checks.append(f"{name}.requires_grad")
            elif isinstance(value, SizeInput):
                if not (isinstance(value.expr, sympy.Symbol) and value.expr.name == name):
                    checks.append(f"{name}.__class__ is not int or {name} != {pyexpr(value.expr)}")
            else:
                checks.append(
                    f"{name}.__class__ is not {self.const(type(value))} or {name} != {self.const(value)}"
                )
        checks.extend(f"not {pyexpr(condition)}" for condition in self.conditions)
        for name in graph.constants:
            emit(f"    {name} = _const_{name}")
            self.namespace[f"_const_{name}"] = graph.constants[name]
            grad_checks.append(f"{name}.requires_grad")
        if checks:
            emit(f"    if {' or '.join(f'({c})' for c in checks)}:")
            emit("        return _fallback(args, 'inputs differ from the compiled example')")
        if grad_checks:
            emit(f"    if _grad_enabled() and ({' or '.join(grad_checks)}):")
            emit(
                "        return _fallback(args, 'autograd is needed (grad mode on, inputs require grad)')"
            )
        self._emit_steps()
        self._emit_return()
        return "\n\n".join([*self.preamble, "\n".join(self.lines)])

    def _size_sources(self, names: list[str]) -> dict[str, tuple[int, int | None, str]]:
        """Where each size symbol's value is read: a size input that is the symbol itself
        (dim None), else the first input size or stride that is."""
        wanted = set(self.graph.sizes.hints)
        found: dict[str, tuple[int, int | None, str]] = {}
        for position, value in enumerate(self.graph.inputs):
            if (
                isinstance(value, SizeInput)
                and value.expr in wanted
                and value.expr.name not in found
            ):
                found[value.expr.name] = (position, None, "")
                names[position] = value.expr.name  # the input is the symbol's variable
        for kind in ("size", "stride"):
            for position, value in enumerate(self.graph.inputs):
                if isinstance(value, InputBuffer):
                    for dim, expr in enumerate(getattr(value, kind)):
                        if isinstance(expr, sympy.Symbol) and expr in wanted:
                            found.setdefault(expr.name, (position, dim, kind))
        missing = sorted(s.name for s in wanted if s.name not in found)
        if missing:
            raise SymbolicUnsupported(f"no input holds the size symbols {missing}")
        return dict(sorted(found.items(), key=lambda item: int(item[0][2:])))

    def _emit_steps(self) -> None:
        emit = self.lines.append
        last_read = buffer_readers(self.steps)
        output_names = {v.buffer.name for v in self.graph.outputs if isinstance(v, BufferView)}
        # an extern may return views of its inputs: buffers it reads are never reused
        keep = output_names | {
            name for s in self.steps if isinstance(s, ExternCall) for name in extern_arg_buffers(s)
        }
        # extern results nobody reads are never touched: ATen may return None for them
        # (an undefined tensor, e.g. the workspace of mkldnn_rnn under no_grad)
        self._read = set(last_read) | output_names
        free: dict[tuple[Any, ...], list[str]] = {}
        pending_free: list[tuple[int, str, tuple[Any, ...]]] = []
        for position, step in enumerate(self.steps):
            # buffers whose last reader ran before this step may be reused now
            for item in [p for p in pending_free if p[0] < position]:
                pending_free.remove(item)
                free.setdefault(item[2], []).append(item[1])
            if isinstance(step, FusedGroup):
                for node in step.nodes:
                    buffer = node.buffer
                    if buffer.name not in step.stored:
                        continue
                    key = (buffer.size, buffer.stride, buffer.dtype)
                    if buffer.name in step.in_place:  # the kernel writes the extern's memory
                        donor = self.graph.buffers[step.in_place[buffer.name]]
                        emit(f"    {buffer.name} = {self.tensor(_as_view_of(donor, buffer))}")
                    elif free.get(key) and buffer.name not in keep:
                        emit(f"    {buffer.name} = {free[key].pop()}")
                    else:
                        emit(f"    {buffer.name} = {self.allocate(buffer)}")
                    if buffer.name not in keep:
                        pending_free.append(
                            (last_read.get(buffer.name, position), buffer.name, key)
                        )
                spec = self.kernels.kernels[step.name]
                self.namespace[f"_k_{step.name}"] = None  # bound when the library is loaded
                for name in spec.scratch:  # memory the kernel needs for the call only
                    emit(f"    {name} = {self.allocate(self.graph.buffers[name])}")
                call = self.kernel_call(step.name)
                if self.kernels.takes_tensors:  # nonzero: a bad index, or the launch failed
                    emit(f"    if {call}:")
                    emit(f"        return _fallback(args, _k_{step.name}.failure)")
                elif spec.checks_bounds:
                    emit(f"    if {call}:")
                    emit("        return _fallback(args, 'an index was out of range')")
                else:
                    emit(f"    {call}")
            else:
                self._emit_extern(step)

    def kernel_call(self, name: str) -> str:
        spec = self.kernels.kernels[name]
        if not self.kernels.takes_tensors:
            return (
                f"_k_{name}({', '.join([*(f'{n}.data_ptr()' for n in spec.buffers), *spec.sizes])})"
            )
        # Triton: the grid is computed here, from the block size the launcher picks
        xnumel = pyexpr(spec.launch["xnumel"])
        args = "".join(f"{n}, " for n in [*spec.buffers, *spec.sizes])
        if spec.sizes:  # the grid reads this call's sizes
            return (
                f"_k_{name}({args}grid=lambda XBLOCK: ((({xnumel} + XBLOCK - 1) // XBLOCK), 1, 1))"
            )
        self.preamble.append(
            f"def _grid_{name}(XBLOCK):\n    return ((({xnumel} + XBLOCK - 1) // XBLOCK), 1, 1)"
        )
        return f"_k_{name}({args}grid=_grid_{name})"

    def _emit_extern(self, call: ExternCall) -> None:
        emit = self.lines.append
        op = self.const(call.op)
        args = ", ".join(self.arg(a) for a in call.args)
        kwargs = ", ".join(f"{k}={self.arg(v)}" for k, v in call.kwargs.items())
        result = f"{call.name}_result"
        emit(f"    {result} = {op}({', '.join(p for p in (args, kwargs) if p)})")
        if call.outputs and not call.single_output:
            emit(f"    {result} = _tree_leaves({result})")
        for buffer in call.outputs:
            if buffer.name not in self._read:
                continue
            source = result if call.single_output else f"{result}[{buffer.path[0]}]"
            emit(f"    {buffer.name} = {source}")
            empty = self.allocate(buffer)
            # ATen returns None for an undefined tensor (e.g. mkldnn_rnn's workspace when
            # not training) where meta says an empty tensor: consumers get the empty tensor
            emit(f"    if {buffer.name} is None:")
            emit(f"        {buffer.name} = {empty}")
            emit(f"    elif {buffer.name}.stride() != {pytuple(buffer.stride)}:")
            emit(f"        {buffer.name} = {empty}.copy_({buffer.name})")

    def _emit_return(self) -> None:
        leaves = [self.arg(v) for v in self.graph.outputs]
        spec = self.out_spec
        flat = all(child.is_leaf() for child in spec.children())
        if spec.is_leaf():
            self.lines.append(f"    return {leaves[0]}")
        elif spec.type is tuple and flat:
            self.lines.append(f"    return ({', '.join(leaves)}{',' if len(leaves) == 1 else ''})")
        elif spec.type is list and flat:
            self.lines.append(f"    return [{', '.join(leaves)}]")
        else:
            self.namespace["_out_spec"] = spec
            self.namespace["_unflatten"] = pytree.tree_unflatten
            self.lines.append(f"    return _unflatten([{', '.join(leaves)}], _out_spec)")


_wrapper_numbers = itertools.count()


def load_wrapper(source: str, namespace: dict[str, Any]) -> Callable[..., Any]:
    """Define the wrapper's `call`.  Its file name lies inside this package, so front ends
    that tell user code from library code by path (graphcapture does) never capture it, also
    when it is called from inside AOTAutograd; linecache holds the source for tracebacks."""
    filename = os.path.join(os.path.dirname(__file__), f"<wrapper {next(_wrapper_numbers)}>.py")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace["call"]


def stored_computed(steps: list[Step]) -> list[ComputedBuffer]:
    return [
        n.buffer
        for s in steps
        if isinstance(s, FusedGroup)
        for n in s.nodes
        if n.buffer.name in s.stored
    ]
