"""Cache-limit events: a function that recompiled until it hit the cache size limit.

graphcapture does not publish a CompileRecord when a function reaches the limit (from then
on it runs eagerly); it logs one warning on ``framejit.recompiles`` naming the function,
the guard that kept failing (with the user line that made it) and what to do.  ``collect``
listens for those warnings while a report is recorded and ``parse`` turns each into a
``CacheLimitEvent`` the report shows beside the recompiles.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass

LOGGER = "framejit.recompiles"

# graphcapture.recompiles.cache_limit_message, field by field
_MESSAGE = re.compile(
    r"^framejit: (?P<fn>\S+) \((?P<file>.*):(?P<line>\d+)\) hit the cache size limit "
    r"\((?P<limit>\d+)\); it runs eagerly from now on\. The guard that keeps failing: "
    r"(?P<guard>.*)\. What to do: (?P<fix>.*?)\.?$",
    re.DOTALL,
)


@dataclass
class CacheLimitEvent:
    function_name: str
    filename: str
    lineno: int
    limit: int
    guard: str  # the guard that kept failing, as the recompile log prints it (with its origin)
    fix: str  # what to do: the advice for that guard, or a larger limit
    message: str  # the whole warning, for anything the fields above do not say


def parse(message: str) -> CacheLimitEvent | None:
    found = _MESSAGE.match(message.strip())
    if found is None:
        return None
    return CacheLimitEvent(
        found["fn"],
        found["file"],
        int(found["line"]),
        int(found["limit"]),
        found["guard"],
        found["fix"],
        message.strip(),
    )


class _Collector(logging.Handler):
    def __init__(self, events: list[CacheLimitEvent]) -> None:
        super().__init__(logging.WARNING)
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        try:
            event = parse(record.getMessage())
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
