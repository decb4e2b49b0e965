"""``with fji.report("report.html"): ...`` and ``write_report(records, path)``: one HTML page.

The page (``report_html``) is built from the CompileRecords published while the block
runs (``report_data``); it is self-contained, so it can be mailed or attached to an issue.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from . import _graphcapture
from .cache_limits import CacheLimitEvent, collect
from .report_data import ReportData, build
from .report_html import render


def write_report(
    records: Iterable[Any],
    path: str | os.PathLike,
    title: str = "framejit compile report",
    cache_limits: Iterable[CacheLimitEvent] = (),
) -> ReportData:
    """Write the report of ``records`` (and of the functions that hit the cache limit) to
    ``path``; returns what it showed."""
    data = build(records, cache_limits)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(data, title), encoding="utf-8")
    return data


@contextlib.contextmanager
def report(path: str | os.PathLike, title: str = "framejit compile report") -> Iterator[list]:
    """Collect every frame graphcapture compiles inside the block; write the page on exit
    (also when the block raises).  Yields the list the records are collected in."""
    fj = _graphcapture.load()
    records: list[Any] = []
    unsubscribe = fj.events.subscribe(records.append)
    with collect() as limits:
        try:
            yield records
        finally:
            unsubscribe()
            write_report(records, path, title, limits)
