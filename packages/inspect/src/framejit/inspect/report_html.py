"""Render a ReportData as one self-contained HTML page (inline CSS and JS, no external asset).

Every piece of user text goes through ``html.escape``.  Large runs stay usable: each
frame and each of its sections is a collapsed ``<details>``, and a filter box hides the
frames whose text does not contain what is typed (also settable as ``#filter=text`` in
the address, which is how the browser test drives it).  The summary cells carry
``data-count`` attributes so a test can read the numbers back from the page.
"""

from __future__ import annotations

import datetime
import html
import platform

from .report_data import BreakView, CacheLimitView, FrameView, GraphView, Located, ReportData

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #1d1d1f; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h2 { font-size: 1.2em; margin-top: 1.4em; }
.meta { color: #666; margin: 0 0 1em; }
table { border-collapse: collapse; margin: .4em 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f6; }
table.summary td { text-align: right; font-weight: 600; min-width: 5em; }
pre { background: #f7f7f9; border: 1px solid #e3e3e8; padding: 6px 8px; overflow-x: auto;
      font: 12px/1.35 ui-monospace, Menlo, Consolas, monospace; margin: .3em 0; }
code { font: 12px ui-monospace, Menlo, Consolas, monospace; }
details { margin: .25em 0; } details > summary { cursor: pointer; }
details.frame { border: 1px solid #d0d0d8; border-radius: 4px; padding: .3em .6em; }
details.frame > summary { font-weight: 600; }
details.section { margin-left: 1em; }
.status-ran-eagerly { color: #a33; } .status-recompiled { color: #b60; }
.src .ln { color: #999; display: inline-block; width: 3.5em; text-align: right;
           margin-right: .8em; user-select: none; }
.src .brk { background: #ffe3e0; display: block; }
.src .why { color: #a33; font-style: italic; }
.fix { color: #246; } .origin { color: #555; }
#filter { font-size: 14px; padding: 4px 8px; width: 28em; }
.hidden { display: none; }
"""

SCRIPT = """
(function () {
  var box = document.getElementById('filter');
  var frames = Array.prototype.slice.call(document.querySelectorAll('details.frame'));
  var shown = document.getElementById('shown');
  function apply() {
    var q = box.value.trim().toLowerCase(), n = 0;
    frames.forEach(function (f) {
      var hit = !q || f.textContent.toLowerCase().indexOf(q) >= 0;
      f.classList.toggle('hidden', !hit);
      if (hit) { n += 1; }
      if (q && hit) { f.open = true; }
    });
    shown.textContent = String(n);
    shown.setAttribute('data-count', String(n));
  }
  box.addEventListener('input', apply);
  var m = /[#&]filter=([^&]*)/.exec(window.location.hash);
  if (m) { box.value = decodeURIComponent(m[1]); }
  apply();
})();
"""

# (label, element id, how to read it off the ReportData)
SUMMARY_ROWS = (
    ("Frames compiled", "frames-compiled", lambda d: d.summary.frames_compiled),
    ("Graphs", "graphs", lambda d: d.summary.graph_count),
    ("Ops in graphs", "ops", lambda d: d.summary.op_count),
    ("Graph breaks", "graph-breaks", lambda d: d.summary.graph_break_count),
    ("Frames that ran eagerly", "ran-eagerly", lambda d: d.summary.frames_ran_eagerly),
    ("Recompiles", "recompiles", lambda d: d.summary.recompile_count),
    ("Functions at the cache limit", "cache-limits", lambda d: len(d.cache_limits)),
)


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _pre(text: str, cls: str = "") -> str:
    return f'<pre class="{cls}">{_e(text)}</pre>' if cls else f"<pre>{_e(text)}</pre>"


def _section(title: str, body: str, open_: bool = False, cls: str = "section") -> str:
    return f'<details class="{cls}"{" open" if open_ else ""}><summary>{title}</summary>{body}</details>'


def _summary(data: ReportData) -> str:
    rows = [
        f'<tr><th>{label}</th><td id="n-{key}" data-count="{value(data)}">{value(data)}</td></tr>'
        for label, key, value in SUMMARY_ROWS
    ]
    for label, key, seconds in (
        ("Capture time", "capture-s", data.capture_seconds),
        ("Backend time", "backend-s", data.backend_seconds),
    ):
        rows.append(
            f'<tr><th>{label}</th><td id="t-{key}" data-seconds="{seconds:.6f}">{seconds:.3f} s</td></tr>'
        )
    return '<table class="summary">' + "".join(rows) + "</table>"


def _table(attrs: str, columns: tuple[str, ...], rows: str) -> str:
    """A table: one header row naming ``columns``, then ``rows`` (``<tr>`` elements)."""
    head = "".join(f"<th>{c}</th>" for c in columns)
    return f"<table {attrs}><tr>{head}</tr>{rows}</table>"


def _ranked(breaks: list[BreakView]) -> str:
    if not breaks:
        return "<p>No graph breaks.</p>"
    columns = ("#", "where", "reason", "frames split", "ops in later graphs", "suggested fix")
    rows = []
    for i, b in enumerate(breaks, 1):
        eager = " <b>(frame ran eagerly)</b>" if b.frame_ran_eagerly else ""
        rows.append(
            f'<tr class="break"><td>{i}</td><td><code>{_e(b.filename)}:{b.lineno}</code> in '
            f"{_e(b.function_name)}<br><code>{_e(b.source_line)}</code></td>"
            f"<td>{_e(b.reason)}{eager}</td><td>{b.frames_split}</td><td>{b.ops_split_off}</td>"
            f'<td class="fix">{_e(b.fix)}</td></tr>'
        )
    return _table('id="ranked-breaks"', columns, "".join(rows))


def _cache_limits(limits: list[CacheLimitView]) -> str:
    if not limits:
        return "<p>No function hit the cache size limit.</p>"
    columns = (
        "function",
        "limit",
        "guard that kept failing",
        "created at",
        "user line",
        "what to do",
    )
    rows = [
        f'<tr class="cache-limit"><td><code>{_e(c.function_name)}</code><br>'
        f'<span class="origin">{_e(c.filename)}:{c.lineno}</span></td><td>{c.limit}</td>'
        f"<td><code>{_e(c.guard.text)}</code></td><td class=origin>{_e(c.guard.origin)}</td>"
        f'<td><code>{_e(c.guard.source_line)}</code></td><td class="fix">{_e(c.fix)}</td></tr>'
        for c in limits
    ]
    return _table('id="cache-limit-table"', columns, "".join(rows))


def _source(frame: FrameView) -> str:
    if not frame.source:
        return "<p>(source not available)</p>"
    lines = []
    for lineno, text, why in frame.source:
        body = f'<span class="ln">{lineno}</span>{_e(text)}'
        if why is not None:
            body = f'<span class="brk">{body}  <span class="why"># graph break: {_e(why)}</span></span>'
        lines.append(body if why is not None else body + "\n")
    return '<pre class="src">' + "".join(lines) + "</pre>"


def _breaks(frame: FrameView) -> str:
    items = [
        f"<li><code>{_e(b.filename)}:{b.lineno}</code>: {_e(b.reason)}<br>"
        f'<code>{_e(b.source_line)}</code><br><span class="fix">fix: {_e(b.fix)}</span></li>'
        for b in frame.breaks
    ]
    return f"<ul>{''.join(items)}</ul>"


def _located_rows(items: list[Located]) -> str:
    return "".join(
        f'<tr><td><code>{_e(g.text)}</code></td><td class="origin">{_e(g.origin)}</td>'
        f"<td><code>{_e(g.source_line)}</code></td></tr>"
        for g in items
    )


def _guards(frame: FrameView) -> str:
    columns = ("guard", "created at", "user line")
    return _table('class="guards"', columns, _located_rows(frame.guards))


def _recompile(frame: FrameView) -> str:
    parts = []
    for i, per_entry in enumerate(frame.recompile_failures):
        columns = (f"failing guard (entry {i})", "created at", "user line")
        parts.append(_table('class="recompile"', columns, _located_rows(per_entry)))
    return "".join(parts)


def _graph(graph: GraphView) -> str:
    body = (
        f"<p>backend <code>{_e(graph.backend)}</code>, {len(graph.ops)} ops</p>"
        + _section("graph as a table", _pre(graph.table))
        + _section("graph as code", _pre(graph.code))
    )
    if graph.kernels is not None:
        body += _section("generated kernels", _pre(graph.kernels))
    return _section(f"<code>{_e(graph.name)}</code> ({len(graph.ops)} ops)", body)


def _timings(frame: FrameView) -> str:
    rows = "".join(
        f"<tr><th>{_e(k)}</th><td>{v * 1000:.2f} ms</td></tr>" for k, v in frame.timings.items()
    )
    return f"<table>{rows}</table>"


def _frame(frame: FrameView, limit: CacheLimitView | None = None) -> str:
    status_cls = "status-" + frame.status.replace(" ", "-")
    title = (
        f"#{frame.index} <code>{_e(frame.function_name)}</code> "
        f"<span class=origin>{_e(frame.filename)}:{frame.firstlineno}</span> — "
        f'<span class="{status_cls}">{frame.status}</span>, {len(frame.graphs)} graphs, '
        f"{frame.op_count} ops, {len(frame.breaks)} breaks"
    )
    body = ""
    if limit is not None:
        body += (
            f'<p class="status-ran-eagerly">hit the cache size limit ({limit.limit}): later '
            f"calls run eagerly. Guard that kept failing: <code>{_e(limit.guard.text)}</code>; "
            f'<span class="fix">{_e(limit.fix)}</span></p>'
        )
    if frame.eager_reason:
        body += f'<p class="{status_cls}">ran eagerly: {_e(frame.eager_reason)}</p>'
    body += _section("source (graph-break lines marked)", _source(frame), open_=bool(frame.breaks))
    if frame.breaks:
        body += _section(f"graph breaks ({len(frame.breaks)})", _breaks(frame), open_=True)
    if frame.recompile_failures:
        body += _section(
            "why it recompiled: every failing guard of every cache entry",
            _recompile(frame),
            open_=True,
        )
    if frame.graphs:
        body += _section(f"graphs ({len(frame.graphs)})", "".join(_graph(g) for g in frame.graphs))
    if frame.guards:
        body += _section(f"guards ({len(frame.guards)})", _guards(frame))
    if frame.rewritten:
        body += _section("rewritten frame, decompiled", _pre(frame.rewritten))
    for name, text in frame.resume.items():
        body += _section(f"resume function <code>{_e(name)}</code>, decompiled", _pre(text))
    body += _section("timings", _timings(frame))
    return f'<details class="frame" id="frame-{frame.index}"><summary>{title}</summary>{body}</details>'


def render(data: ReportData, title: str = "framejit compile report") -> str:
    meta = (
        f"{datetime.datetime.now().isoformat(timespec='seconds')} · Python {platform.python_version()}"
        f" · {len(data.frames)} compile records"
    )
    frames = "".join(_frame(f, data.hit_cache_limit(f)) for f in data.frames)
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'<h1>{_e(title)}</h1><p class="meta">{_e(meta)}</p>'
        f'<h2>Summary</h2><section id="summary">{_summary(data)}</section>'
        f'<h2>Graph breaks, most costly first</h2><section id="breaks">{_ranked(data.ranked_breaks)}</section>'
        f'<h2>Cache limit hits</h2><section id="cache-limits">{_cache_limits(data.cache_limits)}</section>'
        '<h2>Compiled frames</h2><p><input id="filter" type="search" '
        'placeholder="filter frames: function, file, op, guard, reason…" aria-label="filter"> '
        f'showing <span id="shown" data-count="{len(data.frames)}">{len(data.frames)}</span> of '
        f'{len(data.frames)}</p><section id="frames">{frames}</section>'
        f"<script>{SCRIPT}</script></body></html>\n"
    )
