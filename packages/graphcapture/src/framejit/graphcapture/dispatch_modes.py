"""User TorchDispatchModes: frames under one, or inside one's handler, run eagerly, as in torch.

A TorchDispatchMode sees every ATen call of eager code; a compiled graph (fused kernels,
decomposed ops) would hand it different calls or none, a silent difference from eager.  So
while a mode that does not opt out is active (`ignore_compile_internals()` False, not one of
torch's infra modes such as FakeTensorMode), a frame is not compiled: the callback lets it
run eagerly this call.  Compiled entries never hit then either: the dispatch-mode stack
depth is part of every frame's global-state guard.

A mode's own `__torch_dispatch__` runs with the mode popped; torch wraps it (unless the
class's `_should_skip_dynamo()` is False) so that nothing it calls is compiled, except a
function compiled explicitly inside it.  Here: a frame whose Python callers include such a
handler, with no compile wrapper (`fj.compile`/`fj.optimize`) entered since, runs eagerly.
"""

from __future__ import annotations

import os
import sys

import torch

_stack_len = torch._C._len_torch_dispatch_stack


def _stack_at(index: int):
    from torch.utils._python_dispatch import _get_dispatch_stack_at

    return _get_dispatch_stack_at(index)


def _respects_eager(mode) -> bool:
    """The mode wants eager semantics: torch.compile falls back to eager under it."""
    is_infra = getattr(mode, "is_infra_mode", None)
    if is_infra is not None and is_infra():
        return False
    ignores = getattr(mode, "ignore_compile_internals", None)
    return not (ignores is not None and ignores())


def eager_mode_active() -> type | None:
    """The class of the first active dispatch mode that makes frames run eagerly, or None."""
    depth = _stack_len()
    if not depth:
        return None
    for index in range(depth):
        mode = _stack_at(index)
        if _respects_eager(mode):
            return type(mode)
    return None


_HANDLER = "__torch_dispatch__"
_HANDLER_ARG = "self"
_WRAPPER = "framejit_wrapper"  # api._wrap_with_callback's function: a compile region starts
_API_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "api.py")


def _skips_compile(f_locals) -> bool:
    mode = f_locals.get(_HANDLER_ARG)
    from torch.utils._python_dispatch import TorchDispatchMode

    if not isinstance(mode, TorchDispatchMode):
        return False
    should_skip = getattr(type(mode), "_should_skip_dynamo", None)
    return should_skip is None or bool(should_skip())


def inside_mode_handler(frame) -> bool:
    """`frame` (an fe.Frame) is, or is called from, a dispatch mode's handler that torch keeps
    uncompiled, with no framejit compile wrapper entered since (the walk up the callers stops
    at the first of the two)."""
    if frame.f_code.co_name == _HANDLER and _skips_compile(frame.f_locals):
        return True
    caller = sys._getframe(1)
    while caller is not None:
        code = caller.f_code
        if code.co_name == _HANDLER and _skips_compile(caller.f_locals):
            return True
        if code.co_name == _WRAPPER and code.co_filename == _API_FILE:
            return False
        caller = caller.f_back
    return False
