"""Why a frame recompiles: every failing guard of every cache entry, and cache-limit advice.

Only ever run after a miss (every entry's ``check_fn(L)`` was already false), so the hit
path pays nothing: the guards' ``failure_reasons`` re-check guard by guard in plain Python.
"""

from __future__ import annotations

import re
import types
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

# What to do about the guard that keeps failing, by the kind of failure (first match wins).
ADVICE: tuple[tuple[str, str], ...] = (
    (
        r"size mismatch|stride mismatch|rank mismatch",
        "mark the changing dimension dynamic (fj.mark_dynamic(tensor, dim)) or pad inputs to "
        "a few fixed shapes",
    ),
    (
        r"dtype mismatch|device mismatch|requires_grad mismatch|Python class mismatch",
        "the tensor's dtype/device/requires_grad/class changes between calls: convert it once "
        "before the call, or compile one function per variant",
    ),
    (
        r"^L\['self'\]\S* is not the traced object",
        "each instance of this nn.Module class gets its own cache entry (the guards check which "
        "object `self` is): raise the cache size limit to the number of instances, or compile "
        "the enclosing model so the instances are traced inside one frame",
    ),
    (
        r"is not the traced object|^id\(",
        "a new object reaches the function on every call: create it once outside, or pass the "
        "tensors it holds as arguments",
    ),
    (
        r" == .*\(actual|keys changed|^len\(",
        "a Python value the graph was specialised on changes each call: pass it as a tensor, or "
        "keep it constant",
    ),
)
DEFAULT_ADVICE = "change the code so that the guard holds from call to call"
_KEY = re.compile(r"\. expected |  \(actual| == | is not the traced object")


def failing_guards(check_fn, f_locals) -> list[str]:
    """Every failing guard of one cache entry (with its origin); never raises."""
    reasons = getattr(check_fn, "failure_reasons", None)
    try:
        if reasons is not None:
            return list(reasons(f_locals))
        first = getattr(check_fn, "failure_reason", None)
        found = first(f_locals) if first is not None else None
        return [found] if found else []
    except Exception as e:  # a guard that cannot even be evaluated is itself the reason
        return [f"{type(e).__name__}: {e}"]


def entry_failures(entries: Sequence, f_locals, owner=None) -> list[list[str]]:
    """One list of failing guards per cache entry, most recent entry first; an entry that
    serves another callback than `owner` (another backend or fullgraph setting) fails
    for that reason."""
    return [
        [f"compiled for another backend or settings: {entry.owner!r}"]
        if owner is not None and getattr(entry, "owner", None) not in (None, owner)
        else failing_guards(entry.check_fn, f_locals)
        for entry in entries
    ]


def guard_key(reason: str) -> str:
    """The guard a reason is about (its source and origin), without this call's values."""
    head, _, origin = reason.partition("  # ")
    return _KEY.split(head, maxsplit=1)[0] + (f"  # {origin}" if origin else "")


def kept_failing(failures: Sequence[Sequence[str]]) -> str | None:
    """The failing guard shared by the most entries (the latest reason for it)."""
    counts = Counter(guard_key(r) for per_entry in failures for r in set(per_entry))
    if not counts:
        return None
    key, _ = counts.most_common(1)[0]
    return next(r for per_entry in failures for r in per_entry if guard_key(r) == key)


def advice_for(reason: str | None) -> str:
    for pattern, advice in ADVICE:
        if reason and re.search(pattern, reason):
            return advice
    return DEFAULT_ADVICE


def format_recompile(code: types.CodeType, failures: Sequence[Sequence[str]]) -> str:
    lines = [
        f"Recompiling function {code.co_name} in {code.co_filename}:{code.co_firstlineno}",
        f"    triggered by the following guard failure(s), for each of {len(failures)} cache "
        "entries (most recent first):",
    ]
    for i, per_entry in enumerate(failures):
        lines.append(f"    - entry {i}:")
        lines += [f"        {r}" for r in per_entry or ["(no failing guard found)"]]
    return "\n".join(lines)


@dataclass(frozen=True)
class CacheLimitHit:
    """A function hit the cache size limit and runs eagerly from now on: logged once on
    ``framejit.recompiles`` with this record as the log record's ``cache_limit`` attribute."""

    function_name: str
    filename: str
    lineno: int
    limit: int
    guard: str  # the guard that kept failing, with its origin ("unknown" when none did)
    fix: str  # what to do about it, or a larger limit

    @property
    def message(self) -> str:
        return (
            f"framejit: {self.function_name} ({self.filename}:{self.lineno}) hit the cache size "
            f"limit ({self.limit}); it runs eagerly from now on. The guard that keeps failing: "
            f"{self.guard}. What to do: {self.fix}."
        )


def cache_limit_hit(
    code: types.CodeType, limit: int, failures: Sequence[Sequence[str]]
) -> CacheLimitHit:
    reason = kept_failing(failures)
    fix = f"{advice_for(reason)}; or raise framejit.graphcapture.config.cache_size_limit"
    return CacheLimitHit(
        code.co_name, code.co_filename, code.co_firstlineno, limit, reason or "unknown", fix
    )
