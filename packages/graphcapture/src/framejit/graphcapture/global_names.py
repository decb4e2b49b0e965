"""The names generated code installs in a module's globals, chosen never to clobber user's.

``__compiled_fn_<n>`` and ``__resume_at_<offset>_<n>`` take ``n`` from one counter, as the
seed shows.  A name is free when the module has no such global, or has the very object
framejit put there (a recompile after ``reset()`` reuses the seed's names); a user's own
global of that name is left alone and the counter moves on to the next free name.
Compiled graphs leave the globals when the check function of their cache entry dies
(evicted, invalidated because a guarded object was freed, or cleared), so a dropped model's
GraphModule and parameters are not pinned by its module's globals.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from framejit.guards import globals_ref, read_globals

_counter = itertools.count()
# (id(globals), name) -> id(the value framejit installed there); ids only, nothing pinned
_installed: dict[tuple[int, str], int] = {}
_MISSING = object()


def reset_counter() -> None:
    global _counter
    _counter = itertools.count()


def is_free(f_globals: dict, name: str) -> bool:
    value = f_globals.get(name, _MISSING)
    return value is _MISSING or _installed.get((id(f_globals), name)) == id(value)


def new_name(f_globals: dict, make: Callable[[int], str]) -> str:
    """``make(n)`` for the next ``n`` of the shared counter that is free in ``f_globals``."""
    while True:
        name = make(next(_counter))
        if is_free(f_globals, name):
            return name


def install(f_globals: dict, name: str, value: Any) -> None:
    f_globals[name] = value
    _installed[(id(f_globals), name)] = id(value)


def uninstall(f_globals: dict, name: str, installed_id: int) -> None:
    """Remove ``name`` if it still holds the object (by id) framejit installed then: never a
    user's value, nor what a later compile (after ``reset()``) put under the same name."""
    key = (id(f_globals), name)
    value = f_globals.get(name, _MISSING)
    if value is not _MISSING and id(value) == installed_id and _installed.get(key) == installed_id:
        del f_globals[name]
        del _installed[key]


def uninstall_with(owner: Any, f_globals: dict, names: Iterable[str]) -> None:
    """Uninstall ``names`` when ``owner`` (a cache entry's check function) dies."""
    key = id(f_globals)
    installed = [(n, _installed[(key, n)]) for n in names if (key, n) in _installed]
    if installed:
        # the globals weakly: the finalizer registry must not keep an exec'd namespace alive
        weakref.finalize(owner, _uninstall_all, globals_ref(f_globals), key, installed)


def _uninstall_all(scope_ref: weakref.ref, key: int, installed: list[tuple[str, int]]) -> None:
    f_globals = read_globals(scope_ref)
    for name, installed_id in installed:
        if f_globals is not None:
            uninstall(f_globals, name, installed_id)
        elif _installed.get((key, name)) == installed_id:  # the globals died first
            del _installed[(key, name)]
