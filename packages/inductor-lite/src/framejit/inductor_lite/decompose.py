"""Retrace an FX graph (torch-level or ATen) into core ATen under FakeTensor.

Parameters and tensor attributes of the module stay live references (get_attr nodes on the
same objects), so in-place updates of weights are seen by the compiled graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch._decomp import core_aten_decompositions
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from torch.utils import _pytree as pytree


class Unsupported(Exception):
    """The whole graph runs eagerly; the message is the logged reason."""


@dataclass
class AtenGraph:
    gm: torch.fx.GraphModule
    fake_inputs: list[Any]  # FakeTensor or the example Python scalar
    out_spec: pytree.TreeSpec


_DECOMPOSITIONS: dict[Any, Any] | None = None


def decompositions() -> dict[Any, Any]:
    global _DECOMPOSITIONS
    if _DECOMPOSITIONS is None:
        table = dict(core_aten_decompositions())
        # keep these whole: the lowerings handle them better than their decompositions;
        # flash attention's forward must stay whole for its backward kernel, which reads the
        # logsumexp the forward kernel saved (the decomposed forward's differs: wrong grads)
        for op in (
            torch.ops.aten.addmm.default,
            torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,
        ):
            table.pop(op, None)
        _DECOMPOSITIONS = table
    return _DECOMPOSITIONS


def _fake_input(mode: FakeTensorMode, value: Any) -> Any:
    if not isinstance(value, torch.Tensor):
        if isinstance(value, (bool, int, float)) or value is None:
            return value
        raise Unsupported(f"graph input of type {type(value).__name__}")
    if any(isinstance(s, torch.SymInt) for s in (*value.shape, *value.stride())):
        raise Unsupported("symbolic (dynamic) sizes are not supported yet")
    if value.device.type not in ("cpu", "cuda"):
        raise Unsupported(f"input on device {value.device}: kernels are for CPU and CUDA only")
    if value.is_sparse or value.layout != torch.strided:
        raise Unsupported("non-strided input layout")
    with mode:
        return torch.empty_strided(
            tuple(value.shape), tuple(value.stride()), dtype=value.dtype, device=value.device
        )


def to_core_aten(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> AtenGraph:
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    fake_inputs = [_fake_input(mode, value) for value in example_inputs]
    specs: list[pytree.TreeSpec] = []

    def flat_forward(*args: Any) -> list[Any]:
        leaves, spec = pytree.tree_flatten(gm(*args))
        specs.append(spec)
        return leaves

    with torch.no_grad():
        traced = make_fx(
            flat_forward,
            decomposition_table=decompositions(),
            tracing_mode="real",
            _allow_non_fake_inputs=True,
        )(*fake_inputs)
    mutating = mutating_ops(traced)
    if mutating:
        raise Unsupported(f"mutating op {mutating[0]} in the graph")
    return AtenGraph(traced, fake_inputs, specs[-1])


def mutating_ops(gm: torch.fx.GraphModule) -> list[Any]:
    return [
        node.target
        for node in gm.graph.nodes
        if node.op == "call_function"
        and isinstance(node.target, torch._ops.OpOverload)
        and node.target._schema.is_mutable
    ]
