"""``explain(fn, *args)``: compile and run once, then report graphs, graph breaks and recompiles.

The report is built from the CompileRecords graphcapture publishes while ``fn``
runs (``summarize`` accepts any records with the same attributes, so it is
tested without graphcapture).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from . import _graphcapture
from .artifacts import op_name, op_nodes

# The CompileRecord field where graphcapture counts frames it let run eagerly without a
# record (trace rules); read when present.
RAN_EAGERLY_FIELD = "frames_ran_eagerly"


@dataclass
class GraphSummary:
    name: str
    function_name: str
    op_count: int
    ops: list[str]


@dataclass
class GraphBreakSummary:
    function_name: str
    reason: str
    filename: str
    lineno: int
    source_line: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno} in {self.function_name}: {self.reason}\n      {self.source_line}"


@dataclass
class RecompileSummary:
    function_name: str
    reasons: list[str]  # the first failing guard of each cache entry
    failures: list[list[str]] = field(default_factory=list)  # every failing guard, per entry

    def __str__(self) -> str:
        if not self.failures:
            return f"{self.function_name}: " + "; ".join(self.reasons or ["(no reason recorded)"])
        lines = [f"{self.function_name}: every failing guard of {len(self.failures)} cache entries"]
        for i, per_entry in enumerate(self.failures):
            lines.append(f"    entry {i}:")
            lines.extend(f"      - {r}" for r in per_entry or ["(no failing guard found)"])
        return "\n".join(lines)


@dataclass
class ExplainOutput:
    """What ``explain`` found; ``str()`` is the printed report."""

    graphs: list[GraphSummary] = field(default_factory=list)
    graph_breaks: list[GraphBreakSummary] = field(default_factory=list)
    recompiles: list[RecompileSummary] = field(default_factory=list)
    frames_compiled: int = 0
    frames_skipped: list[str] = field(default_factory=list)
    # frames the capture layer chose not to intercept, counted by graphcapture (no record each)
    frames_not_intercepted: int = 0

    @property
    def frames_ran_eagerly(self) -> int:
        return len(self.frames_skipped) + self.frames_not_intercepted

    @property
    def recompile_count(self) -> int:
        return len(self.recompiles)

    @property
    def graph_count(self) -> int:
        return len(self.graphs)

    @property
    def graph_break_count(self) -> int:
        return len(self.graph_breaks)

    @property
    def op_count(self) -> int:
        return sum(g.op_count for g in self.graphs)

    @property
    def ops_per_graph(self) -> list[int]:
        return [g.op_count for g in self.graphs]

    def __str__(self) -> str:
        lines = [
            f"Frames compiled: {self.frames_compiled}",
            f"Graph count: {self.graph_count}",
            f"Graph break count: {self.graph_break_count}",
            f"Op count: {self.op_count}",
            f"Frames that ran eagerly: {self.frames_ran_eagerly}",
            f"Recompiles: {self.recompile_count}",
            "Ops per graph:",
        ]
        for g in self.graphs:
            lines.append(f"  {g.name} ({g.function_name}): {g.op_count} ops")
            lines.extend(f"    {op}" for op in g.ops)
        lines.append("Graph breaks:")
        lines.extend(f"  {i}. {b}" for i, b in enumerate(self.graph_breaks, 1))
        if not self.graph_breaks:
            lines.append("  (none)")
        lines.append("Recompiles:")
        lines.extend(f"  {r}" for r in self.recompiles)
        if not self.recompiles:
            lines.append("  (none)")
        if self.frames_skipped:
            lines.append("Frames that ran eagerly:")
            lines.extend(f"  {s}" for s in self.frames_skipped)
        return "\n".join(lines)


def summarize(records: Iterable[Any]) -> ExplainOutput:
    """Fold CompileRecords (duck-typed) into an ExplainOutput."""
    out = ExplainOutput()
    for record in records:
        name = getattr(record, "function_name", "?")
        if getattr(record, "transformed_code", None) is None and getattr(
            record, "skipped_reason", None
        ):
            out.frames_skipped.append(f"{name}: {record.skipped_reason}")
        else:
            out.frames_compiled += 1
        for graph in getattr(record, "graphs", []):
            ops = op_nodes(graph.graph_module)
            out.graphs.append(GraphSummary(graph.name, name, len(ops), [op_name(n) for n in ops]))
        for brk in getattr(record, "graph_breaks", []):
            out.graph_breaks.append(
                GraphBreakSummary(
                    getattr(brk, "function_name", name),
                    brk.reason,
                    brk.filename,
                    brk.lineno,
                    brk.source_line,
                )
            )
        if getattr(record, "is_recompile", False):
            out.recompiles.append(
                RecompileSummary(
                    name,
                    list(getattr(record, "recompile_reasons", [])),
                    [list(f) for f in getattr(record, "recompile_failures", [])],
                )
            )
        out.frames_not_intercepted = max(
            out.frames_not_intercepted, int(getattr(record, RAN_EAGERLY_FIELD, 0) or 0)
        )
    return out


def explain(fn: Any, *args: Any, **kwargs: Any) -> ExplainOutput:
    """Compile ``fn`` with graphcapture (a backend that only records graphs), run it on the
    arguments, print and return what was captured.

    Like ``torch._dynamo.explain`` this starts from empty caches (``graphcapture.reset()``),
    so every frame ``fn`` reaches is compiled afresh during the call.
    """
    fj = _graphcapture.load()
    records: list[Any] = []
    fj.reset()
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(fn, backend="eager")
        compiled(*args, **kwargs)
    finally:
        unsubscribe()
    output = summarize(records)
    print(output)
    return output
