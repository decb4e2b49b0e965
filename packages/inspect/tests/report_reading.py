"""Read a report page back (stdlib html.parser) and count the same numbers from the records."""

from __future__ import annotations

from html.parser import HTMLParser

CALLS = ("call_function", "call_method", "call_module")
SUMMARY_IDS = ("frames-compiled", "graphs", "ops", "graph-breaks", "ran-eagerly", "recompiles")


class _Counts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.classes: dict[str, int] = {}
        self.hidden_frames = 0
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id", "").startswith("n-") and "data-count" in a:
            self.counts[a["id"][2:]] = int(a["data-count"])
        if a.get("id") == "shown":
            self.counts["shown"] = int(a["data-count"])
        for cls in (a.get("class") or "").split():
            self.classes[cls] = self.classes.get(cls, 0) + 1
        if tag == "details" and "frame" in (a.get("class") or "").split():
            self.hidden_frames += "hidden" in (a.get("class") or "").split()
        for key in ("src", "href"):
            if a.get(key):
                self.external.append(a[key])


def read_page(text: str) -> _Counts:
    parser = _Counts()
    parser.feed(text)
    return parser


def expected_counts(records) -> dict[str, int]:
    """The summary numbers, counted straight from the CompileRecords."""
    ran_eagerly = [r for r in records if r.transformed_code is None and r.skipped_reason]
    return {
        "frames-compiled": len(records) - len(ran_eagerly),
        "graphs": sum(len(r.graphs) for r in records),
        "ops": sum(
            1
            for r in records
            for g in r.graphs
            for n in g.graph_module.graph.nodes
            if n.op in CALLS
        ),
        "graph-breaks": sum(len(r.graph_breaks) for r in records),
        "ran-eagerly": len(ran_eagerly),
        "recompiles": sum(1 for r in records if r.is_recompile),
    }
