"""Cache-limit events: a function that recompiled until it hit the cache size limit.

graphcapture does not publish a CompileRecord when a function reaches the limit (from then
on it runs eagerly); it logs one warning on ``framejit.recompiles`` whose log record carries
the facts as fields (``record.cache_limit``: the function, the guard that kept failing with
the user line that made it, what to do).  ``collect`` listens for those records while a
report is recorded and keeps each as a ``CacheLimitEvent`` the report shows beside the
recompiles; inspect never imports graphcapture for it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass

LOGGER = "framejit.recompiles"
FIELD = "cache_limit"  # the log record's attribute holding graphcapture's CacheLimitHit


@dataclass
class CacheLimitEvent:
    function_name: str
    filename: str
    lineno: int
    limit: int
    guard: str  # the guard that kept failing, as the recompile log prints it (with its origin)
    fix: str  # what to do: the advice for that guard, or a larger limit
    message: str  # the whole warning, for anything the fields above do not say


def from_log_record(record: logging.LogRecord) -> CacheLimitEvent | None:
    """The event a ``framejit.recompiles`` log record carries; None for other records."""
    hit = getattr(record, FIELD, None)
    if hit is None:
        return None
    return CacheLimitEvent(
        hit.function_name,
        hit.filename,
        int(hit.lineno),
        int(hit.limit),
        hit.guard,
        hit.fix,
        record.getMessage(),
    )


class _Collector(logging.Handler):
    def __init__(self, events: list[CacheLimitEvent]) -> None:
        super().__init__(logging.WARNING)
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event = from_log_record(record)
        except Exception:  # a log handler must never break the program it watches
            return
        if event is not None:
            self.events.append(event)


@contextlib.contextmanager
def collect() -> Iterator[list[CacheLimitEvent]]:
    """The cache-limit events logged inside the block, in order."""
    events: list[CacheLimitEvent] = []
    handler = _Collector(events)
    log = logging.getLogger(LOGGER)
    log.addHandler(handler)
    try:
        yield events
    finally:
        log.removeHandler(handler)
