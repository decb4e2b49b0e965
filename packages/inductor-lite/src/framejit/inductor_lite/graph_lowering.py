"""Walk a core-ATen FX graph and lower every node into IR buffers and values.

Each call_function goes through the lowering table; what is not lowered (or not understood)
becomes an `ExternCall` that runs the ATen op itself.  Pointwise values stay virtual and are
inlined into their readers unless they are graph outputs, expensive and read several times,
or needed by an extern.
"""

from __future__ import annotations

import logging
import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch._prims_common import is_non_overlapping_and_dense_or_false
from torch.utils import _pytree as pytree

from .config import config
from .ir import (
    Buffer,
    BufferView,
    ComputedBuffer,
    ConstantBuffer,
    ExternBuffer,
    ExternCall,
    InputBuffer,
    Pointwise,
    PointwiseBody,
    ReductionBody,
    TensorValue,
    contiguous_strides,
    kernel_device,
    same_device,
)
from .loop_body import trace
from .lowering import EXTERN_BY_DESIGN, LOWERINGS, SUPPORTED_DTYPES, LoweringContext, NotLowered
from .sizes import SizeEnv, SymbolicUnsupported, using

log = logging.getLogger("framejit.inductor_lite")


def _undecidable(error: TypeError) -> bool:
    """A lowering compared symbolic sizes it cannot decide (sympy's TypeError): it is left
    to ATen, which is right for every size."""
    return "truth value" in str(error) or "Relational" in str(error)


@dataclass
class SizeInput:
    """A graph input that is a size (a SymInt placeholder): its expression in ks symbols."""

    expr: Any


class GraphLowering:
    def __init__(
        self, gm: torch.fx.GraphModule, fake_inputs: list[Any], column_reductions: bool = False
    ) -> None:
        self.gm = gm
        # the code generator renders column reductions (scheduler.column_loops)
        self.column_reductions = column_reductions
        self.fake_inputs = fake_inputs
        self.device = kernel_device(fake_inputs)  # ops on other devices stay in ATen
        self.buffers: dict[str, Buffer] = {}
        self.steps: list[ComputedBuffer | ExternCall] = []
        self.inputs: list[InputBuffer | SizeInput | Any] = []  # or the specialized scalar
        self.sizes = SizeEnv()
        self.fake_mode = next(
            (getattr(v, "fake_mode", None) for v in fake_inputs if hasattr(v, "fake_mode")), None
        )
        self.constants: dict[str, torch.Tensor] = {}
        self.env: dict[torch.fx.Node, Any] = {}
        self.outputs: list[Any] = []
        self.fallback_reasons: list[str] = []
        self._realized: dict[int, BufferView] = {}
        self._counter = 0
        output_node = next(n for n in gm.graph.nodes if n.op == "output")
        self.output_nodes = {
            leaf
            for leaf in pytree.tree_leaves(output_node.args[0])
            if isinstance(leaf, torch.fx.Node)
        }

    def new_name(self, prefix: str) -> str:
        name = f"{prefix}{self._counter}"
        self._counter += 1
        return name

    # ------------------------------------------------------------------ buffers

    def dtype_of(self, name: str) -> torch.dtype:
        return self.buffers[name].dtype

    def add_computed(
        self,
        size: tuple[int, ...],
        dtype: torch.dtype,
        body: PointwiseBody | ReductionBody,
        stride: tuple[int, ...] | None = None,
    ) -> BufferView:
        stride = stride or contiguous_strides(size)
        buffer = ComputedBuffer(self.new_name("buf"), tuple(size), tuple(stride), dtype, body)
        self.buffers[buffer.name] = buffer
        self.steps.append(buffer)
        return BufferView.whole(buffer)

    def realize(self, value: TensorValue, stride: tuple[int, ...] | None = None) -> BufferView:
        if isinstance(value, BufferView):
            return value
        known = self._realized.get(id(value))
        if known is not None:
            return known
        assert isinstance(value, Pointwise)
        loop = trace(value.inner_fn, value.size, self.dtype_of)
        view = self.add_computed(value.size, value.dtype, PointwiseBody(value.size, loop), stride)
        self._realized[id(value)] = view
        self._realized_keepalive = getattr(self, "_realized_keepalive", [])
        self._realized_keepalive.append(value)
        return view

    # ------------------------------------------------------------------ nodes

    def run(self) -> GraphLowering:
        with using(self.sizes):  # heuristics in lowerings read the example sizes
            for node in self.gm.graph.nodes:
                getattr(self, f"lower_{node.op}")(node)
        return self

    def lower_placeholder(self, node: torch.fx.Node) -> None:
        position = len(self.inputs)
        value = self.fake_inputs[position]
        if isinstance(value, torch.Tensor):
            size, stride = self.sizes.exprs(value.shape), self.sizes.exprs(value.stride())
            buffer = InputBuffer(f"arg{position}", size, stride, value.dtype, position)
            self.buffers[buffer.name] = buffer
            self.inputs.append(buffer)
            self.env[node] = BufferView.whole(buffer)
        elif isinstance(value, torch.SymInt):
            expr = self.sizes.expr(value)
            self.inputs.append(SizeInput(expr))
            self.env[node] = expr
        elif isinstance(value, (torch.SymFloat, torch.SymBool)):
            raise SymbolicUnsupported(f"a {type(value).__name__} graph input")
        else:
            self.inputs.append(value)
            self.env[node] = value

    def lower_get_attr(self, node: torch.fx.Node) -> None:
        value = self.gm
        for part in node.target.split("."):
            value = getattr(value, part)
        if not isinstance(value, torch.Tensor):
            self.env[node] = value
            return
        buffer = ConstantBuffer(
            self.new_name("const"),
            tuple(value.shape),
            tuple(value.stride()),
            value.dtype,
            node.target,
        )
        self.constants[buffer.name] = value
        self.buffers[buffer.name] = buffer
        self.env[node] = BufferView.whole(buffer)

    def lower_call_function(self, node: torch.fx.Node) -> None:
        args, kwargs = torch.fx.node.map_arg((node.args, node.kwargs), self.env.__getitem__)
        meta = node.meta.get("val")
        if isinstance(meta, torch.SymInt):  # size arithmetic: its value is its expression
            self.env[node] = self.sizes.expr(meta)
            return
        if isinstance(meta, (torch.SymFloat, torch.SymBool)):
            raise SymbolicUnsupported(f"{node.target} computes a {type(meta).__name__}")
        if node.target is operator.getitem:
            self.env[node] = args[0][args[1]]
            self._after(node)
            return
        value, reason = None, ""
        lowering = LOWERINGS.get(node.target)
        problem = self._dtype_problem(node)
        if node.target in EXTERN_BY_DESIGN:
            reason = f"{node.target} stays in ATen (library kernel)"
        elif lowering is None:
            reason = f"no lowering for {node.target}"
        elif problem:
            reason = problem
        else:
            try:
                value = lowering(LoweringContext(self, node), *args, **kwargs)
            except (NotLowered, SymbolicUnsupported) as error:
                reason = f"{node.target}: {error}"
            except TypeError as error:
                if not _undecidable(error):
                    raise
                reason = f"{node.target}: undecidable for symbolic sizes ({error})"
        if value is None:
            value = self.extern(node, args, kwargs, reason)
        self.env[node] = value
        self._after(node)

    def lower_output(self, node: torch.fx.Node) -> None:
        leaves = pytree.tree_leaves(node.args[0])
        for leaf in leaves:
            value = self.env[leaf] if isinstance(leaf, torch.fx.Node) else leaf
            if isinstance(value, Pointwise):
                value = self.realize(value, self._meta_layout(leaf.meta.get("val")))
            self.outputs.append(value)

    # ------------------------------------------------------------------ helpers

    def _meta_layout(self, meta: Any) -> tuple[Any, ...] | None:
        if isinstance(meta, torch.Tensor) and is_non_overlapping_and_dense_or_false(meta):
            return self.sizes.exprs(meta.stride())
        return None

    def _dtype_problem(self, node: torch.fx.Node) -> str:
        metas = [node.meta.get("val")]
        metas += [a.meta.get("val") for a in node.all_input_nodes]
        for meta in pytree.tree_leaves(metas):
            if isinstance(meta, torch.Tensor):
                if meta.dtype not in SUPPORTED_DTYPES:
                    return f"{node.target}: dtype {meta.dtype} stays in ATen"
                if not same_device(meta.device, self.device):
                    return f"{node.target}: tensor on {meta.device}, kernels run on {self.device}"
        return ""

    def _after(self, node: torch.fx.Node) -> None:
        """Decide whether a freshly lowered pointwise value is materialized."""
        value = self.env[node]
        if not isinstance(value, Pointwise):
            return
        meta = node.meta.get("val")
        if node in self.output_nodes:
            self.env[node] = self.realize(value, self._meta_layout(meta))
        elif value.op_count > config.max_fused_ops or (
            len(node.users) > 1
            and (
                value.heavy
                or value.op_count > config.inline_max_ops
                or value.read_count > config.inline_max_reads
            )
        ):
            self.env[node] = self.realize(value)

    def extern(self, node: torch.fx.Node, args: Any, kwargs: Any, reason: str) -> Any:
        """Leave this call to ATen: realize tensor arguments, describe the outputs from meta."""
        log.debug("inductor-lite: extern %s (%s)", node.target, reason)
        self.fallback_reasons.append(reason)
        arg_nodes = torch.fx.node.map_arg((node.args, node.kwargs), lambda n: n)
        flat_nodes = pytree.tree_leaves(arg_nodes)
        flat_values, spec = pytree.tree_flatten((args, kwargs))
        realized = []
        for value, source in zip(flat_values, flat_nodes, strict=False):
            if isinstance(value, TensorValue):
                meta = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
                value = self.realize(value, self._meta_layout(meta))
            realized.append(value)
        call_args, call_kwargs = pytree.tree_unflatten(realized, spec)
        call = ExternCall(
            self.new_name("extern"), node.target, tuple(call_args), dict(call_kwargs), reason=reason
        )
        self.steps.append(call)
        meta = node.meta.get("val")
        leaves, out_spec = pytree.tree_flatten(meta)
        call.single_output = isinstance(meta, torch.Tensor)
        values = []
        for position, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                buffer = ExternBuffer(
                    f"{call.name}_out{position}", self.sizes.exprs(leaf.shape),
                    self.sizes.exprs(leaf.stride()), leaf.dtype, call, (position,),
                )  # fmt: skip
                self.buffers[buffer.name] = buffer
                call.outputs.append(buffer)
                values.append(BufferView.whole(buffer))
            elif isinstance(leaf, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                from .decompose import Unsupported

                raise Unsupported(f"{node.target} returns a symbolic scalar")
            else:
                values.append(leaf)
        return pytree.tree_unflatten(values, out_spec)
