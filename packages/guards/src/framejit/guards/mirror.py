"""Plain-Python evaluation of a guard set, one guard at a time.

No generated code, no batching, no native helper: each guard's ``mirror`` reads its
source through ``Source.get`` and checks it in ordinary Python.  Used as the oracle
that the compiled ``check_fn`` is tested against, and by ``failure_reason`` to name
the first failing guard with detail.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .guard import Guard
from .kinds import handler_for


def guard_failure(guard: Guard, L: dict[str, Any], G: dict[str, Any]) -> str | None:
    """None when ``guard`` holds for locals ``L`` and globals ``G``, else why not."""
    try:
        return handler_for(guard.kind).mirror(guard, L, G)
    except Exception as e:
        where = guard.source.name() if guard.source is not None else guard.kind.name
        return f"{guard.kind.name} on {where}: evaluating it raised {type(e).__name__}: {e}"


def iter_failures(
    guards: Iterable[Guard],
    L: dict[str, Any],
    G: dict[str, Any],
) -> Iterator[tuple[Guard, str]]:
    for guard in guards:
        reason = guard_failure(guard, L, G)
        if reason is not None:
            yield guard, reason


def mirror_check(guards: Iterable[Guard], L: dict[str, Any], global_scope: dict[str, Any]) -> bool:
    """True when every guard holds: the reference semantics of ``compile_guards``."""
    return next(iter_failures(guards, L, global_scope), None) is None
