"""Questions torch code asks about process state (`torch.is_anomaly_enabled()`,
`torch.get_autocast_dtype("cpu")`, `torch.backends.cuda.flash_sdp_enabled()`): asked for
real while tracing, and the answer folded with a guard that asks again on every call.

A query is a torch callable named like one (QUERY_PREFIXES/QUERY_SUFFIXES) called with
literal arguments only.  It is asked outside the fake mode the trace propagates ops in:
under it `is_in_torch_dispatch_mode()` and `_len_torch_dispatch_stack()` saw the fake mode
and folded an answer eager never gives.  Answers fixed for the process (what was built) are
folded unguarded; an answer no guard can compare, or a query with no source to ask it
again through, is a graph break.
"""

from __future__ import annotations

import torch

from framejit.guards import CallSource, GuardKind, WeakRefCallSource
from framejit.guards.literals import is_literal

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker

# names (leading underscores dropped) that ask rather than do
QUERY_PREFIXES = ("get_", "is_", "are_", "has_", "len_")
QUERY_SUFFIXES = ("_enabled", "_allowed")
# words that make a name a command (`_set_grad_enabled`, `enable_flash_sdp`)
COMMAND_WORDS = frozenset(
    {"set", "enable", "disable", "allow", "use", "push", "pop", "reset", "clear"}
)

# answers fixed for the life of the process (how torch was built, what hardware there is)
PROCESS_CONSTANT_QUERIES = frozenset({"is_available", "is_built", "_is_compiled", "device_count"})


def _guard_kind(value) -> GuardKind | None:
    if is_literal(value):
        return GuardKind.EQUALS_MATCH
    if isinstance(value, torch.dtype):  # one object per dtype
        return GuardKind.ID_MATCH
    return None


def _named_like_a_query(name: str) -> bool:
    word = name.lstrip("_")
    if not (word.startswith(QUERY_PREFIXES) or word.endswith(QUERY_SUFFIXES)):
        return False
    return not COMMAND_WORDS.intersection(word.split("_"))


def is_query(fn, args: list, kwargs: dict) -> bool:
    module = getattr(fn, "__module__", None) or ""
    if module != "torch" and not module.startswith("torch."):
        return False
    if not _named_like_a_query(getattr(fn, "__name__", None) or ""):
        return False
    return not kwargs and all(
        a.is_python_constant() and is_literal(a.as_python_constant()) for a in args
    )


def answer_query(tx, fn_vt, args: list) -> VariableTracker:
    """The query's answer now, guarded by asking again (`G['torch'].is_anomaly_enabled()`)."""
    fn = fn_vt.value
    name = getattr(fn, "__name__", repr(fn))
    values = tuple(a.as_python_constant() for a in args)
    try:
        value = fn(*values)
    except Exception as e:  # e.g. a CUDA query in a CPU-only build: eager raises it too
        raise Unsupported(f"{name}() raised {type(e).__name__}") from e
    guard_answer(tx, fn_vt, name, values, value)
    return ConstantVariable(value)


def guard_answer(tx, fn_vt, name: str, values: tuple, value) -> None:
    if name in PROCESS_CONSTANT_QUERIES:
        return
    kind = _guard_kind(value)
    if fn_vt.source is None or kind is None:
        raise Unsupported(f"{name}() cannot be guarded")
    source = CallSource(fn_vt.source, values) if values else WeakRefCallSource(fn_vt.source)
    tx.output.add_guard(source, kind, value, origin=tx.origin())
