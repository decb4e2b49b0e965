"""The one mutation functionalization gets wrong: a fill through an expanded view.

Eager lets a few in-place writes (fill_, zero_, masked_fill_, index_fill_, a scalar
setitem) write a tensor whose elements share memory (a stride-0 dim of size > 1, as
`expand` makes); every other in-place op raises there.  Functionalization replays such a
write onto the base as the sum of the per-element changes, so `x.expand(2, 3)[0].zero_()`
turns x[0] = 2.5 into -5.  Graphs holding one run eagerly (compile_fx), with this reason.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx
from torch._subclasses.fake_tensor import FakeTensorMode

# call_method / function / OpOverload packet names of the writes eager allows on overlap
OVERLAP_TOLERANT_WRITES = frozenset(
    {"zero_", "fill_", "masked_fill_", "index_fill_", "index_put_", "setitem", "__setitem__"}
)


def _write_name(node: torch.fx.Node) -> str | None:
    if node.op == "call_method":
        return str(node.target)
    if node.op == "call_function":
        target = node.target
        if isinstance(target, torch._ops.OpOverload):
            return target.overloadpacket.__name__
        return getattr(target, "__name__", None)
    return None


def _overlaps(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and any(
        stride == 0 and size > 1 for size, stride in zip(value.shape, value.stride(), strict=True)
    )


class _FindOverlappingWrite(torch.fx.Interpreter):
    def __init__(self, gm: torch.fx.GraphModule, writes: set[torch.fx.Node]) -> None:
        super().__init__(gm)
        self.writes = writes
        self.found: torch.fx.Node | None = None

    def run_node(self, n: torch.fx.Node) -> Any:
        if n in self.writes and self.found is None and n.args:
            target = n.args[0]
            if isinstance(target, torch.fx.Node) and _overlaps(self.env.get(target)):
                self.found = n
        return super().run_node(n)


def overlapping_write(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> str | None:
    """Why gm must run eagerly, when it fills a tensor whose elements share memory."""
    writes = {n for n in gm.graph.nodes if _write_name(n) in OVERLAP_TOLERANT_WRITES}
    if not writes or not all(
        isinstance(a, torch.Tensor | int | float | bool) and not isinstance(a, torch.SymInt)
        for a in example_inputs
    ):
        return None
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    finder = _FindOverlappingWrite(gm, writes)
    try:
        with mode, torch.no_grad():
            fakes = [
                mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in example_inputs
            ]
            finder.run(*fakes)
    except Exception:
        pass  # the values up to the failure were checked; AOTAutograd reports the rest
    if finder.found is None:
        return None
    return f"{finder.found.format_node()} writes a tensor whose elements share memory (stride 0)"
