"""Test oracles: eager results and the torch calls eager makes (via a TorchFunctionMode)."""

from __future__ import annotations

import operator

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

NOT_GRAPH_OPS = {operator.getitem, torch._C._set_grad_enabled}


class CountTensorOps(TorchFunctionMode):
    """Counts top-level torch calls that produce tensors, as eager runs them."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        leaves, _ = tree_flatten(out)
        if (
            any(isinstance(x, torch.Tensor) for x in leaves)
            or (name.endswith("_") and not name.startswith("__"))
            or name == "__setitem__"
        ):
            self.count += 1
        return out


def eager_op_count(fn, *args) -> int:
    with CountTensorOps() as mode:
        fn(*args)
    return mode.count


def graph_op_count(graphs) -> int:
    n = 0
    for gm in graphs:
        for node in gm.graph.nodes:
            if node.op not in ("call_function", "call_method", "call_module"):
                continue
            if node.target is operator.getitem and not isinstance(
                node.args[0].meta.get("example_value"), torch.Tensor
            ):
                continue  # picking an element of a multi-output op's result
            if node.target not in NOT_GRAPH_OPS or node.target is operator.getitem:
                n += 1
    return n


def clone_args(args):
    return [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
