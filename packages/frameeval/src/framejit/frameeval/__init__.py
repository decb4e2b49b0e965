"""framejit.frameeval: a PEP 523 frame-evaluation hook with a per-code guarded cache.

The C hook (``_eval_frame.c``, compiled with cffi) intercepts Python function calls on threads that
have a callback; see the package README and DESIGN.md ("frameeval") for the contract.
"""

from ._api import (
    CacheView,
    Frame,
    Locals,
    always_true,
    cache_entries,
    callback,
    clear,
    discard,
    get_cache_limit,
    get_callback,
    hook_state,
    is_skipped,
    reset,
    set_cache_limit,
    set_callback,
    skip,
    stats,
)
from ._types import RUN_ONLY, SKIP, SKIP_CODE, CacheEntry, GuardedCode

__all__ = [
    "RUN_ONLY",
    "SKIP",
    "SKIP_CODE",
    "CacheEntry",
    "CacheView",
    "Frame",
    "GuardedCode",
    "Locals",
    "always_true",
    "cache_entries",
    "callback",
    "clear",
    "discard",
    "get_cache_limit",
    "get_callback",
    "hook_state",
    "is_skipped",
    "reset",
    "set_cache_limit",
    "set_callback",
    "skip",
    "stats",
]
