"""`warnings.catch_warnings(...)` in traced code (detectron2's `Instances.set`, library code
that silences a warning around a length or a conversion).

The context saves the warnings module's filters and `showwarning` on entry and puts them
back on exit; with `record=True` it also diverts the warnings raised inside into a list
that `__enter__` returns.  Traced, as torch.compile traces it, the block is nothing in the
graph: no Python warning can be raised by compiled tensor code, and any call into the
warnings machinery inside the block (`simplefilter`, `warn`) is a graph break that runs
inside a real, entered catch_warnings (a resume function re-enters a fresh one, so the
filters it changes are put back by the real exit).  What is refused, as a graph break:

- `action=` or `module=` (entering would change the filters the block's code runs under);
- binding the list of `record=True` (`as w`: the warnings it holds are eager's);
- an object entered in the trace escaping the frame, or entered twice (eager's
  RuntimeError).

An object that escapes unentered (returned, stored) is built again after the graph, as
`warnings.catch_warnings(**its keyword arguments)`.
"""

from __future__ import annotations

import warnings

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker

# the keyword arguments whose effect is confined to what the block's Python code sees
_ALLOWED = {"record", "category", "lineno", "append"}


class CatchWarningsVariable(VariableTracker):
    """A `warnings.catch_warnings(...)` made in the frame, with constant keyword arguments."""

    def __init__(self, kwargs: dict):
        self.kwargs = kwargs  # name -> Python constant
        self.entered = False

    def python_type(self) -> type:
        return warnings.catch_warnings

    def enter(self, tx) -> None:
        if self.entered:
            raise Unsupported("a catch_warnings context entered twice (eager's RuntimeError)")
        self.entered = True

    def enter_result(self, bound: bool) -> VariableTracker:
        """What `__enter__` returns: None, or (record=True) a list that must stay unbound."""
        if self.kwargs.get("record") and bound:
            raise Unsupported("`with catch_warnings(record=True) as w:` (the list is eager's)")
        return ConstantVariable(None)

    def exit(self, tx) -> None:
        pass

    def reconstruct(self, cg) -> None:
        if self.entered:
            raise Unsupported("a catch_warnings context entered in the trace escaping the frame")
        cg.reconstruct_once(self, self._build)

    def _build(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(warnings.catch_warnings))
        for value in self.kwargs.values():
            cg.load_const(value)
        cg.call_kw(len(self.kwargs), tuple(self.kwargs))

    def reconstruct_entered(self, cg) -> None:
        """A resume function inside the block: a fresh context, entered, its __exit__ left."""
        self._build(cg)
        cg.emit("BEFORE_WITH")
        cg.pop_top()


def _catch_warnings(tx, *args, **kwargs) -> VariableTracker | None:
    if args or not set(kwargs) <= _ALLOWED:
        return None  # positional arguments are eager's TypeError; action/module: see above
    if not all(v.is_python_constant() for v in kwargs.values()):
        return None
    return CatchWarningsVariable({k: v.as_python_constant() for k, v in kwargs.items()})


WARNINGS_MODELS = {warnings.catch_warnings: _catch_warnings}
