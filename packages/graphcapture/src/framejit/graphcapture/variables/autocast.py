"""`with torch.autocast(...)` (and torch.cpu.amp / torch.cuda.amp.autocast) in the frame.

Traced as torch.compile traces it: the graph calls `torch.amp._enter_autocast(device, dtype,
enabled, cache_enabled)` and `torch.amp._exit_autocast(mode)` around the block's ops, and
the trace itself runs under that autocast state, so the ops' example results get the
dtypes eager gives them.  The block must open and close inside one graph: a graph break
inside it moves the break to where the context was made (the block then runs in resume
functions under the real autocast, as before this was traced); an object that escapes or a
context entered and never left makes the frame run eagerly (with its reason), so no
compiled code leaves autocast switched.  The autocast
state the trace starts from is part of the frame's global-state guard.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from ..exc import RestartAnalysis, Unsupported
from .base import ConstantVariable, VariableTracker

# class -> the device it fixes (None: the first argument, device_type)
AUTOCAST_CLASSES = {
    torch.amp.autocast_mode.autocast: None,
    torch.cpu.amp.autocast: "cpu",
    torch.cuda.amp.autocast: "cuda",
}


def restart_before_open_block(output, break_inst) -> None:
    """A break (or the return) with an autocast block still open: trace again, breaking
    where the outermost open one was made."""
    if not output.open_contexts or break_inst is None:
        return
    inst, visit = output.open_contexts[0].origin
    reason = "graph break inside an autocast block (the break moves to where it is made)"
    restart = RestartAnalysis(inst.offset, reason, inst.lineno, visit, inst.index)
    restart.moved_break = True  # (the one restart after a break that convert_frame allows)
    raise restart


def make_autocast(tx, cls, args: list, kwargs: dict) -> VariableTracker:
    if not all(a.is_python_constant() for a in [*args, *kwargs.values()]):
        raise Unsupported(f"{cls.__qualname__}() with arguments that are not constants")
    try:
        bound = inspect.signature(cls.__init__).bind(
            None,
            *[a.as_python_constant() for a in args],
            **{k: v.as_python_constant() for k, v in kwargs.items()},
        )
    except TypeError as e:
        raise Unsupported(f"TypeError: {cls.__qualname__}(): {e}") from None
    bound.apply_defaults()
    values = bound.arguments
    device = AUTOCAST_CLASSES[cls] or values["device_type"]
    values = (device, values["dtype"], values["enabled"], values["cache_enabled"])
    return AutocastVariable(values, cls, tx.root.current_step)


class AutocastVariable(VariableTracker):
    def __init__(self, values: tuple, cls: type, origin: tuple):
        self.values = values
        self.cls = cls
        self.origin = origin  # (instruction, visit) of the root frame that made it
        self.mode = None  # the trace's own entered autocast
        self.node = None

    def python_type(self) -> type:
        return self.cls

    def enter(self, tx) -> None:
        if self.mode is not None:
            raise Unsupported("an autocast context entered twice")
        try:
            self.mode = torch.amp._enter_autocast(*self.values)
        except Exception as e:  # eager's autocast() raises it
            raise Unsupported(f"{type(e).__name__} entering autocast: {e}") from e
        tx.output.open_contexts.append(self)
        self.node = tx.output.create_node(
            "call_function", torch.amp._enter_autocast, self.values, {}, None
        )

    def exit(self, tx) -> None:
        open_contexts = tx.output.open_contexts
        if self.mode is None or not open_contexts or open_contexts[-1] is not self:
            raise Unsupported("an autocast context left out of order")
        open_contexts.pop()
        self.leave_trace_state()
        tx.output.create_node("call_function", torch.amp._exit_autocast, (self.node,), {}, None)

    def leave_trace_state(self) -> None:
        """Undo the trace's own autocast switch (at exit, or when the trace ends early)."""
        mode, self.mode = self.mode, None
        if mode is not None:
            torch.amp._exit_autocast(mode)

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__" and not args and not kwargs:
            self.enter(tx)
            return self
        if name == "__exit__":
            self.exit(tx)
            return ConstantVariable(False)
        raise Unsupported(f"autocast context .{name}")

    def reconstruct(self, cg) -> None:
        raise Unsupported("an autocast context object escaping the frame")

    def reconstruct_entered(self, cg) -> None:
        raise Unsupported("graph break inside an autocast block")


_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "xla")


@dataclass
class AutocastState:
    """The thread's autocast switches, put back when a graph that enters autocast raises."""

    devices: tuple  # (device, enabled, dtype) for each device type this torch knows
    cache: bool
    nesting: int

    @classmethod
    def now(cls) -> AutocastState:
        devices = []
        for d in _DEVICES:
            try:
                devices.append((d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)))
            except RuntimeError:  # a device type this build does not have
                continue
        return cls(tuple(devices), torch.is_autocast_cache_enabled(), _nesting())

    def restore(self) -> None:
        for d, enabled, dtype in self.devices:
            torch.set_autocast_enabled(d, enabled)
            torch.set_autocast_dtype(d, dtype)
        torch.set_autocast_cache_enabled(self.cache)
        current = _nesting()
        for _ in range(current - self.nesting):
            torch.autocast_decrement_nesting()
        if current > self.nesting == 0:  # none open any more: as autocast.__exit__ does
            torch.clear_autocast_cache()


def _nesting() -> int:
    """How many autocast contexts are open (torch only has increment/decrement)."""
    depth = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return depth
