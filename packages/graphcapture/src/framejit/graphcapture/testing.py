"""Test helpers shipped with the package: a backend that counts frames and ops."""

from __future__ import annotations

import torch


class CompileCounter:
    """Backend counting compiled graphs (frame_count) and their call nodes (op_count); runs eagerly."""

    __name__ = "CompileCounter"

    def __init__(self) -> None:
        self.frame_count = 0
        self.op_count = 0
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list):
        self.frame_count += 1
        self.graphs.append(gm)
        for node in gm.graph.nodes:
            if node.op in ("call_function", "call_method", "call_module"):
                self.op_count += 1
        return gm.forward

    def clear(self) -> None:
        self.frame_count = 0
        self.op_count = 0
        self.graphs.clear()
