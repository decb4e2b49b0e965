"""How much Python stack is left: capture must never cause a RecursionError of its own.

Tracing a frame runs the translator, fake-tensor propagation and the backend on top of the
user's own stack, and each inlined call adds several Python frames.  A frame called near the
recursion limit runs eagerly this once (it is compiled when called from higher up), and an
inlined call that would leave too little room becomes a graph break: compile what fits.
"""

from __future__ import annotations

import sys

from .config import config


def has_room(frames: int) -> bool:
    """Whether ``frames`` more Python frames fit under the current recursion limit."""
    depth = sys.getrecursionlimit() - frames
    if depth <= 0:
        return False
    try:
        sys._getframe(depth)  # walks the stack in C; only on the compile path
    except ValueError:
        return True  # the stack is shallower than that
    return False


def room_to_compile() -> bool:
    return has_room(config.compile_stack_room)


def room_to_inline() -> bool:
    return has_room(config.inline_stack_room)
