"""What the HTML report shows, folded from CompileRecords (duck-typed) into plain dataclasses.

The summary numbers come from ``explain.summarize`` (one place that counts), so the
report, ``explain`` and the command line's summary always agree.  Graph breaks are
ranked by what they cost: a break that left its whole frame to the interpreter first,
then by the ops that ended up in later graphs instead of one (the graphs of the resume
functions the break created) and by how many frames it split.
"""

from __future__ import annotations

import inspect as pyinspect
import linecache
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .artifacts import decompiled, graph_code, graph_table, op_name, op_nodes, output_code, stable
from .cache_limits import CacheLimitEvent
from .explain import ExplainOutput, summarize

MAX_BLOCK = 200_000  # characters per text block: a large kernel must not make the page unusable

# A suggested fix per kind of graph-break reason (first match wins).
BREAK_FIXES: tuple[tuple[str, str], ...] = (
    (
        r"data-dependent|if on a Tensor|bool\(|\.item\(\)|tolist",
        "the Python control flow depends on a tensor's value: use torch.where / torch.cond-style "
        "tensor ops, or move the branch out of the compiled function",
    ),
    (
        r"constructing|cannot rebuild|custom __getattr__|descriptor|property",
        "an object the capture layer cannot model: create it once outside the compiled function "
        "and pass it in, or keep it a plain nn.Module/tensor",
    ),
    (
        r"is skipped|not tensor math|builtin|print|logging",
        "a call that is not captured: move it out of the hot function, or mark the helper with "
        "fj.disable so that only it runs eagerly",
    ),
    (
        r"opcode .* is not supported|with-block|generator|yield",
        "a Python construct the capture layer does not trace: rewrite it as plain calls and loops",
    ),
    (
        r"dynamic dims|SymInt|shape",
        "a dynamic size is used as a Python value: keep it symbolic (tensor ops on x.shape) or "
        "drop mark_dynamic for that dim",
    ),
)
DEFAULT_FIX = (
    "move the statement out of the compiled function, or wrap it in a function marked fj.disable"
)
_ORIGIN = re.compile(r"^(?P<file>.*):(?P<line>\d+) in (?P<fn>.*)$")


def suggested_fix(reason: str) -> str:
    for pattern, fix in BREAK_FIXES:
        if re.search(pattern, reason):
            return fix
    return DEFAULT_FIX


def _clip(text: str) -> str:
    if len(text) <= MAX_BLOCK:
        return text
    return text[:MAX_BLOCK] + f"\n# ... {len(text) - MAX_BLOCK} more characters not shown\n"


def _line(filename: str, lineno: int) -> str:
    return linecache.getline(filename, lineno).strip()


@dataclass
class Located:
    """A text (a guard, a failing guard) with the user line that created it."""

    text: str
    origin: str = ""
    source_line: str = ""

    @classmethod
    def parse(cls, text: str) -> Located:
        head, sep, origin = stable(text).partition("  # ")
        match = _ORIGIN.match(origin) if sep else None
        line = _line(match["file"], int(match["line"])) if match else ""
        return cls(head, origin, line)


@dataclass
class BreakView:
    function_name: str
    filename: str
    lineno: int
    source_line: str
    reason: str
    fix: str
    frames_split: int = 1
    ops_split_off: int = 0  # ops in the graphs of the resume functions this break created
    frame_ran_eagerly: bool = False

    @property
    def cost(self) -> tuple:
        return (self.frame_ran_eagerly, self.ops_split_off, self.frames_split)


@dataclass
class GraphView:
    name: str
    backend: str
    ops: list[str]
    table: str
    code: str
    kernels: str | None


@dataclass
class FrameView:
    index: int
    function_name: str
    filename: str
    firstlineno: int
    status: str  # "compiled" | "recompiled" | "ran eagerly"
    eager_reason: str | None
    source: list[tuple[int, str, str | None]]  # (lineno, text, break reason or None)
    breaks: list[BreakView]
    graphs: list[GraphView]
    guards: list[Located]
    recompile_failures: list[list[Located]]  # per cache entry, most recent first
    rewritten: str
    resume: dict[str, str]
    timings: dict[str, float]

    @property
    def op_count(self) -> int:
        return sum(len(g.ops) for g in self.graphs)


@dataclass
class CacheLimitView:
    """A function that hit the cache size limit: the guard that kept failing, what to do."""

    function_name: str
    filename: str
    lineno: int
    limit: int
    guard: Located
    fix: str


@dataclass
class ReportData:
    summary: ExplainOutput
    frames: list[FrameView] = field(default_factory=list)
    ranked_breaks: list[BreakView] = field(default_factory=list)
    cache_limits: list[CacheLimitView] = field(default_factory=list)

    def hit_cache_limit(self, frame: FrameView) -> CacheLimitView | None:
        return next(
            (
                c
                for c in self.cache_limits
                if (c.function_name, c.filename, c.lineno)
                == (frame.function_name, frame.filename, frame.firstlineno)
            ),
            None,
        )

    @property
    def capture_seconds(self) -> float:
        return sum(
            max(f.timings.get("total", 0.0) - f.timings.get("backend", 0.0), 0.0)
            for f in self.frames
        )

    @property
    def backend_seconds(self) -> float:
        return sum(f.timings.get("backend", 0.0) for f in self.frames)


def _source(code: Any, breaks: list[Any]) -> list[tuple[int, str, str | None]]:
    try:
        lines, start = pyinspect.getsourcelines(code)
    except (OSError, TypeError):
        return []
    start = max(start, 1)
    marks = {b.lineno: b.reason for b in breaks if b.filename == code.co_filename}
    return [(start + i, text.rstrip("\n"), marks.get(start + i)) for i, text in enumerate(lines)]


def _graph_view(graph: Any) -> GraphView:
    ops = [op_name(n) for n in op_nodes(graph.graph_module)]
    generated = output_code(graph.compiled)
    return GraphView(
        graph.name,
        str(getattr(graph, "backend", "")),
        ops,
        _clip(graph_table(graph.graph_module)),
        _clip(graph_code(graph.graph_module)),
        _clip(generated) if generated is not None else None,
    )


def _failures(record: Any) -> list[list[Located]]:
    if not getattr(record, "is_recompile", False):
        return []
    per_entry = getattr(record, "recompile_failures", None) or [
        [r] for r in getattr(record, "recompile_reasons", [])
    ]
    return [[Located.parse(r) for r in reasons] for reasons in per_entry]


def _ran_eagerly(record: Any) -> bool:
    return getattr(record, "transformed_code", None) is None and bool(
        getattr(record, "skipped_reason", None)
    )


def _frame_view(record: Any) -> FrameView:
    eager = _ran_eagerly(record)
    status = (
        "ran eagerly"
        if eager
        else "recompiled"
        if getattr(record, "is_recompile", False)
        else "compiled"
    )
    breaks = [
        BreakView(
            getattr(b, "function_name", record.function_name),
            b.filename,
            b.lineno,
            b.source_line,
            b.reason,
            suggested_fix(b.reason),
            frame_ran_eagerly=eager,
        )
        for b in getattr(record, "graph_breaks", [])
    ]
    check_fn = getattr(record, "check_fn", None)
    verbose = getattr(check_fn, "verbose_code_parts", None) or getattr(check_fn, "code_parts", [])
    transformed = getattr(record, "transformed_code", None)
    return FrameView(
        index=getattr(record, "index", 0),
        function_name=record.function_name,
        filename=record.filename,
        firstlineno=record.firstlineno,
        status=status,
        eager_reason=getattr(record, "skipped_reason", None) if eager else None,
        source=_source(record.code, list(getattr(record, "graph_breaks", []))),
        breaks=breaks,
        graphs=[_graph_view(g) for g in getattr(record, "graphs", [])],
        guards=[Located.parse(str(p)) for p in verbose],
        recompile_failures=_failures(record),
        rewritten=_clip(decompiled(transformed)) if transformed is not None else "",
        resume={
            name: _clip(decompiled(code))
            for name, code in sorted(getattr(record, "resume_functions", {}).items())
        },
        timings=dict(getattr(record, "timings", {})),
    )


def _rank(records: list[Any], frames: list[FrameView]) -> list[BreakView]:
    ops_by_code = {id(r.code): f.op_count for r, f in zip(records, frames, strict=True)}
    merged: dict[tuple, BreakView] = {}
    for record, frame in zip(records, frames, strict=True):
        resumed = sum(
            ops_by_code.get(id(c), 0) for c in getattr(record, "resume_functions", {}).values()
        )
        for brk in frame.breaks:
            key = (brk.filename, brk.lineno, brk.reason)
            seen = merged.get(key)
            if seen is None:
                merged[key] = BreakView(**{**vars(brk), "ops_split_off": resumed})
                continue
            seen.frames_split += 1
            seen.ops_split_off += resumed
            seen.frame_ran_eagerly |= brk.frame_ran_eagerly
    return sorted(merged.values(), key=lambda b: b.cost, reverse=True)


def _cache_limit_view(event: CacheLimitEvent) -> CacheLimitView:
    return CacheLimitView(
        event.function_name,
        event.filename,
        event.lineno,
        event.limit,
        Located.parse(event.guard),
        event.fix,
    )


def build(records: Iterable[Any], cache_limits: Iterable[CacheLimitEvent] = ()) -> ReportData:
    records = list(records)
    frames = [_frame_view(r) for r in records]
    limits = [_cache_limit_view(e) for e in cache_limits]
    return ReportData(summarize(records), frames, _rank(records, frames), limits)
