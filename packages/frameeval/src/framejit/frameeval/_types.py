"""The records and sentinels of the frameeval callback protocol (pure Python)."""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


class _Sentinel:
    """A named singleton compared by identity (in C)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"framejit.frameeval.{self._name}"

    def __reduce__(self) -> str:
        return self._name


SKIP_CODE = _Sentinel("SKIP_CODE")
"""Callback result: never intercept this code object again (it runs untouched)."""

SKIP = _Sentinel("SKIP")
"""Callback setting: on this thread every frame runs untouched (the hook stays installed)."""

RUN_ONLY = _Sentinel("RUN_ONLY")
"""Callback setting: use cached entries on this thread, run the original on a miss, never call a
callback."""


@dataclass(frozen=True, slots=True)
class GuardedCode:
    """What a callback returns to cache `code` for the frame's code object.

    check_fn(L) receives the call's arguments and the function's free variables (closure cell
    contents; an empty cell is absent) as a mapping name -> value (L['a']); the first
    cached entry whose check is true runs `code` with the frame's arguments, closure and
    globals.  `code` must have the original's arguments, flags and free variables.

    owner: the callback setting the entry serves (held while the entry lives).  A thread
    whose callback is another object passes over the entry (and compiles its own); None
    serves every callback.  RUN_ONLY uses every entry.
    """

    check_fn: Callable[[Mapping[str, Any]], object]
    code: types.CodeType
    payload: Any = None
    owner: Any = None

    def __post_init__(self) -> None:
        if not callable(self.check_fn):
            raise TypeError(
                f"GuardedCode.check_fn must be callable as check_fn(L), got {type(self.check_fn).__name__}"
            )
        if not isinstance(self.code, types.CodeType):
            raise TypeError(
                f"GuardedCode.code must be a code object, got {type(self.code).__name__}"
            )


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One cached (check_fn, code, payload, owner), as reported by cache_entries()."""

    check_fn: Callable[[Mapping[str, Any]], object]
    code: types.CodeType
    payload: Any = None
    owner: Any = None
