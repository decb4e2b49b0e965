"""Guards for a builtin a traced frame reads by name (LOAD_GLOBAL falling through to the
builtins): that no global of the name appears later to shadow it, and that the builtins
dict still holds the same object (``unittest.mock.patch('builtins.print')``, a namespace
with its own ``__builtins__``)."""

from __future__ import annotations

from typing import Any

from framejit.guards import BuiltinSource, GlobalsSource, GuardKind
from framejit.guards.source import builtins_dict

from .sources import ItemSource


def guard_builtin_read(tx, name: str, value: Any) -> None:
    root, origin = tx.root, tx.origin()
    if tx.f_globals is root.f_globals:
        # `name not in G` itself: an exec'd namespace is no module's __dict__
        globals_source = GlobalsSource()
    else:
        # an inlined function's module, as `name not in module.__dict__` (not hasattr, which
        # runs a lazy module's __getattr__ on every check); a namespace that is no module's
        # (exec) cannot be reached from the root's globals, and is left unguarded
        globals_source = root.module_alias_source(tx.f_globals, "__dict__")
    if globals_source is not None:
        tx.output.add_guard(
            ItemSource(globals_source, name), GuardKind.DICT_CONTAINS, False, origin=origin
        )
    if root.f_builtins is builtins_dict(root.f_globals):  # what the check's B is
        tx.output.add_guard(BuiltinSource(name), GuardKind.ID_MATCH, value, origin=origin)
