"""Grad-mode context objects (no_grad(), enable_grad(), set_grad_enabled(b)) across a graph
break: rebuilt for the resume function, and wrapped again when it reads them.

`ctx = torch.set_grad_enabled(True)` switches at once and remembers the mode before it
(`prev`), which its `__exit__` goes back to; a `with ctx:` after a break needs that object.
The rewritten frame builds an equal one without switching again (the graph already did):
set_grad_enabled's `prev` and `mode` set on a bare instance.  no_grad() and enable_grad()
hold nothing until entered (their `__enter__` saves `prev`): a fresh one is the same.  The
resume function wraps such an object as a GradModeVariable, guarded on its type and, for
set_grad_enabled, on `mode` and `prev`.
"""

from __future__ import annotations

import torch

from framejit.guards import GuardKind

from ..sources import AttrSource
from .torch_calls import GRAD_MODE_CLASSES


def rebuild_grad_mode(kind: type, target: bool, previous: bool | None):
    """An object of `kind` equal to the traced one, made without touching grad mode."""
    if kind is not torch.set_grad_enabled:
        return kind()
    ctx = object.__new__(torch.set_grad_enabled)
    ctx.prev, ctx.mode = bool(previous), target
    return ctx


def reconstruct(cg, ctx) -> None:
    cg.add_push_null(lambda: cg.load_const(rebuild_grad_mode))
    cg.load_const(ctx.python_type())
    cg.load_const(ctx.target)
    cg.load_const(ctx.previous)
    cg.call(3)


def is_grad_mode_object(value) -> bool:
    kind = type(value)
    if kind is torch.set_grad_enabled:
        return isinstance(getattr(value, "prev", None), bool) and isinstance(
            getattr(value, "mode", None), bool
        )
    return kind in GRAD_MODE_CLASSES


def wrap_grad_mode_object(tx, value, source):
    from .objects import GradModeVariable

    def guard(src, kind, v):
        if source is not None:
            tx.output.add_guard(src, kind, v, origin=tx.origin())

    guard(source, GuardKind.TYPE_MATCH, value)
    if type(value) is not torch.set_grad_enabled:
        return GradModeVariable(GRAD_MODE_CLASSES[type(value)])
    guard(AttrSource(source, "mode"), GuardKind.EQUALS_MATCH, value.mode)
    guard(AttrSource(source, "prev"), GuardKind.EQUALS_MATCH, value.prev)
    ctx = GradModeVariable(value.mode)
    ctx.previous = value.prev
    ctx.switched_at_init = True
    return ctx
