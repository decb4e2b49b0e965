"""The decomposition table AOTAutograd traces with (core ATen, less what the lowerings
handle whole), the record of one functional ATen graph, and the mutation check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch._decomp import core_aten_decompositions
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
            torch.ops.aten.std.correction,
            torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default,
        ):
            table.pop(op, None)
        _DECOMPOSITIONS = table
    return _DECOMPOSITIONS


def mutating_ops(gm: torch.fx.GraphModule) -> list[Any]:
    return [
        node.target
        for node in gm.graph.nodes
        if node.op == "call_function"
        and isinstance(node.target, torch._ops.OpOverload)
        and node.target._schema.is_mutable
    ]
