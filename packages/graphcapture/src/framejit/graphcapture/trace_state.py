"""The process-wide state a frame switches (grad mode, deterministic algorithms).

The trace switches it where the frame does, so what the trace reads later
(`torch.is_grad_enabled()`, `torch.are_deterministic_algorithms_enabled()`) sees the switch;
the trace's end and the backend's compile put the entry state back, which the global-state
guard checks.  The rewritten frame then replays the state the traced code left after the
graph call: a backend that traces the graph (AOTAutograd, inductor-lite) drops a switch
node with no outputs, and eager leaves the state switched after the frame returns.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TraceState:
    grad: bool
    deterministic: bool
    deterministic_warn_only: bool

    @classmethod
    def now(cls) -> TraceState:
        return cls(
            torch.is_grad_enabled(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        )

    def restore(self) -> None:
        torch._C._set_grad_enabled(self.grad)
        if self._deterministic() != TraceState.now()._deterministic():
            torch._C._set_deterministic_algorithms(
                self.deterministic, warn_only=self.deterministic_warn_only
            )

    def _deterministic(self) -> tuple[bool, bool]:
        return (self.deterministic, self.deterministic_warn_only)

    def emit_replay(self, cg, entry: TraceState) -> None:
        """Code that leaves the state this one holds where it differs from `entry`."""
        if self.grad != entry.grad:
            cg.add_push_null(lambda: cg.load_const(torch._C._set_grad_enabled))
            cg.load_const(self.grad)
            cg.call(1)
            cg.pop_top()
        if self._deterministic() != entry._deterministic():
            cg.add_push_null(lambda: cg.load_const(torch._C._set_deterministic_algorithms))
            cg.load_const(self.deterministic)
            cg.load_const(self.deterministic_warn_only)
            cg.call_kw(2, ("warn_only",))
            cg.pop_top()
