"""What a guard keeps of the traced object, and what happens to a check when that object dies.

Guards hold what they check, never the traced objects themselves, so compiled code does not
keep a dropped model or its inputs alive:

- TENSOR_MATCH keeps a TensorSpec (properties), TYPE_MATCH the type, LENGTH_CHECK and
  DICT_KEYS the length and the keys; the traced value is dropped once snapshotted.  A class
  made at run time (not reachable by name from its module: exec'd, local, type()) is
  TYPE_MATCHed like an ID_MATCH, by id and a weak reference (``kinds.lives_with_its_module``):
  its methods' globals would otherwise reach the check through co_extra.
- ID_MATCH keeps the id plus a weak reference.  When the object dies, every check function
  built on it is invalidated (it returns False from then on, so a reused id can never hit)
  and its ``on_invalidate`` callbacks run (graphcapture drops the cache entry there).
- The rule where no weak reference is possible (int, str, tuple, list, dict, None, ...
  instances of classes without ``__weakref__``): ID_MATCH keeps a strong reference, the only
  way an id stays unique.  Such objects are constants and small containers in practice.
- The frame's globals (``G``) are read through ``GlobalsAnchor``: a plain dict cannot be
  weakly referenced, and a check that held ``G`` would close the loop globals -> function ->
  code -> co_extra -> check -> globals, which the GC cannot see through (code objects do
  not traverse co_extra), so an exec'd namespace or a dynamically made function would
  never die.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

log = logging.getLogger("framejit.guards")


class Held:
    """The object an ID_MATCH guard (or a run-time class's TYPE_MATCH) was traced on: weakly when possible, else strongly."""

    __slots__ = ("_ref", "_strong", "description")

    def __init__(self, obj: Any, description: str) -> None:
        self.description = description
        try:
            self._ref: weakref.ref | None = weakref.ref(obj)
            self._strong = None
        except TypeError:  # no __weakref__: the rule above
            self._ref = None
            self._strong = obj

    @property
    def is_weak(self) -> bool:
        return self._ref is not None

    def get(self) -> Any:
        """The object, or None once it has been freed."""
        return self._ref() if self._ref is not None else self._strong

    def watch(self, callback: Any) -> weakref.ref | None:
        """A weak reference calling ``callback`` when the object dies (None: held strongly)."""
        obj = self.get()
        if self._ref is None or obj is None:
            return None
        return weakref.ref(obj, callback)


ANCHOR_KEY = "__framejit_globals__"


class GlobalsAnchor:
    """Stored in a globals dict under ``ANCHOR_KEY``, holding that dict: a cycle the GC sees,
    so the dict dies with its last outside reference, while checks reach it through a weak
    reference to the anchor (``globals_ref(G)().globals``; the call returns None once gone).
    """

    __slots__ = ("__weakref__", "globals")

    def __init__(self, G: dict) -> None:
        self.globals = G

    def __repr__(self) -> str:
        return f"<framejit globals anchor of {self.globals.get('__name__', '?')!r}>"


def globals_ref(G: dict) -> weakref.ref:
    """A weak reference to ``G``'s anchor (made on first use; a copied dict gets its own)."""
    anchor = G.get(ANCHOR_KEY)
    if type(anchor) is not GlobalsAnchor or anchor.globals is not G:
        anchor = GlobalsAnchor(G)
        G[ANCHOR_KEY] = anchor
    return weakref.ref(anchor)


def read_globals(ref: weakref.ref) -> dict | None:
    anchor = ref()
    return anchor.globals if anchor is not None else None


_dead_codes: dict[int, Any] = {}


def _dead_code(n_free: int) -> Any:
    """The code of ``lambda L: False`` with ``n_free`` free variables (to swap into a check)."""
    found = _dead_codes.get(n_free)
    if found is None:
        names = [f"___v{i}" for i in range(n_free)]
        refs = ", ".join(names) + ("," if names else "")
        src = (
            f"def ___make({', '.join(names)}):\n"
            "    def guard(L):\n"
            "        return False\n"
            f"        ({refs})\n"  # unreachable: only makes the names free variables
            "    return guard\n"
        )
        scope: dict[str, Any] = {}
        exec(compile(src, "<framejit dead guard>", "exec"), scope)
        found = scope["___make"](*([None] * n_free)).__code__
        _dead_codes[n_free] = found
    return found


def watch_held(check_fn: Any, held: list[Held]) -> None:
    """Invalidate ``check_fn`` when any weakly held object dies (see the module docstring)."""
    check_fn.invalidated = None  # the reason, once invalidated
    check_fn.on_invalidate = []
    fn_ref = weakref.ref(check_fn)
    refs = []
    for h in held:
        if h.is_weak and h.get() is None:
            invalidate(check_fn, f"{h.description} was freed before the guards were built")
            return

        def died(_ref, description=h.description):
            fn = fn_ref()
            if fn is not None:
                invalidate(fn, f"{description} was freed")

        ref = h.watch(died)
        if ref is not None:
            refs.append(ref)
    check_fn.watched = refs  # the weak references must live as long as the check


def invalidate(check_fn: Any, reason: str) -> None:
    """Make ``check_fn`` always fail and run its ``on_invalidate`` callbacks (once)."""
    if getattr(check_fn, "invalidated", None) is not None:
        return
    check_fn.invalidated = reason
    check_fn.__code__ = _dead_code(len(check_fn.__code__.co_freevars))
    check_fn.watched = []
    for callback in list(getattr(check_fn, "on_invalidate", ())):
        try:
            callback(check_fn)
        except Exception:  # runs from a weakref callback: nobody could catch it
            log.exception("framejit: an on_invalidate callback failed")
    check_fn.on_invalidate = []
    log.debug("guards invalidated: %s", reason)
