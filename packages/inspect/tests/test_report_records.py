"""The HTML report from synthetic CompileRecords (no graphcapture, no browser needed)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("framejit.guards")

from records import make_records  # noqa: E402
from report_reading import SUMMARY_IDS, expected_counts, read_page  # noqa: E402

from framejit.inspect import write_report  # noqa: E402
from framejit.inspect.report_data import build, suggested_fix  # noqa: E402


@pytest.fixture
def page(tmp_path):
    records = make_records()
    path = tmp_path / "report.html"
    data = write_report(records, path)
    return records, data, path.read_text(encoding="utf-8")


def test_summary_numbers_match_the_records(page):
    records, _, text = page
    counts = read_page(text).counts
    expected = expected_counts(records)
    assert {k: counts[k] for k in SUMMARY_IDS} == expected
    assert expected["ran-eagerly"] == 1 and expected["recompiles"] == 1  # the fixture covers both


def test_page_is_self_contained(page):
    _, _, text = page
    parsed = read_page(text)
    assert parsed.external == []
    assert "http://" not in text and "https://" not in text and "@import" not in text
    assert text.count("<script>") == 1 and "<style>" in text


def test_frame_sections(page):
    records, data, text = page
    first = data.frames[0]
    # source with the break line marked, the reason, a suggested fix
    marked = [(n, why) for n, _, why in first.source if why]
    assert marked == [(records[0].graph_breaks[0].lineno, "data-dependent branch: if on a Tensor")]
    assert 'class="brk"' in text and "# graph break: data-dependent branch" in text
    assert "torch.where" in first.breaks[0].fix
    # graphs as a table and as code, and the backend's kernels
    graph = first.graphs[0]
    assert "placeholder" in graph.table and "def forward" in graph.code
    assert (
        graph.kernels and "# generated kernels" in graph.kernels and "# generated kernels" in text
    )
    # guards with the line that created them (the fixture's guards carry no origin)
    assert [g.text for g in first.guards] == list(records[0].check_fn.verbose_code_parts)
    # every recompile with its failing guards
    (entry,) = data.frames[1].recompile_failures
    assert entry[0].text.startswith("tensor 'L['a']' size mismatch")
    assert "why it recompiled" in text
    # the frame that ran eagerly says why
    assert data.frames[2].status == "ran eagerly" and "ran eagerly: no tensor operations" in text
    assert "__compiled_fn_0(a, b)" in first.rewritten
    assert '<details class="frame"' in text and 'id="filter"' in text


def test_user_text_is_escaped(tmp_path):
    records = make_records()
    records[0].graph_breaks[0].reason = "<script>alert(1)</script>"
    write_report(records, tmp_path / "r.html")
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_breaks_are_ranked_by_cost():
    records = make_records()
    # the break splits off the resume function's graph: make the resume frame a record
    resume = records[2]
    resume.code = records[0].resume_functions["__resume_at_30_1"]
    resume.graphs = list(records[0].graphs)
    data = build(records)
    (ranked,) = data.ranked_breaks
    assert ranked.frames_split == 1
    assert ranked.ops_split_off == data.frames[2].op_count > 0


def test_origin_and_user_line_of_a_guard():
    from framejit.inspect.report_data import Located

    here = f"{__file__}:{test_origin_and_user_line_of_a_guard.__code__.co_firstlineno} in f"
    g = Located.parse(f"L['x'] == 3  # {here}")
    assert (g.text, g.origin) == ("L['x'] == 3", here)
    assert g.source_line == "def test_origin_and_user_line_of_a_guard():"


@pytest.mark.parametrize(
    "reason, words",
    [
        ("data-dependent branch: if on a Tensor", "torch.where"),
        ("call to print (not tensor math)", "fj.disable"),
        ("opcode SETUP_WITH is not supported", "rewrite"),
        ("something new", "fj.disable"),
        (
            "constructing a _View object (base class Sequence (builtin or __slots__))",
            "once outside",
        ),
    ],
)
def test_suggested_fix_table(reason, words):
    assert words in suggested_fix(reason)


def test_cache_limit_events_from_the_recompiles_log(tmp_path):
    """The record graphcapture logs at the cache limit (test_with_graphcapture makes a real
    one) becomes a row with the guard's user line and the fix, and a frame note."""
    import logging
    from types import SimpleNamespace

    from framejit.inspect.cache_limits import collect

    records = make_records()
    frame = records[1]
    here = f"{__file__}:{test_cache_limit_events_from_the_recompiles_log.__code__.co_firstlineno}"
    # the fields of graphcapture.recompiles.CacheLimitHit, as its log record carries them
    hit = SimpleNamespace(
        function_name=frame.function_name,
        filename=frame.filename,
        lineno=frame.firstlineno,
        limit=8,
        guard=f"tensor 'L['a']' size mismatch at index 0. expected 3, actual 4  # {here} in f",
        fix="mark the changing dimension dynamic (fj.mark_dynamic(tensor, dim)); or raise "
        "framejit.graphcapture.config.cache_size_limit",
    )
    message = f"framejit: {hit.function_name} hit the cache size limit (8); ..."
    log = logging.getLogger("framejit.recompiles")
    with collect() as events:
        log.warning("%s", message, extra={"cache_limit": hit})
        log.warning("an unrelated warning")
        log.warning("framejit: g hit the cache size limit (8); text alone is not an event")
    (event,) = events
    assert (event.function_name, event.limit, event.message) == (frame.function_name, 8, message)
    data = write_report(records, tmp_path / "r.html", cache_limits=events)
    (view,) = data.cache_limits
    assert view.guard.origin == f"{here} in f"
    assert (
        view.guard.source_line == "def test_cache_limit_events_from_the_recompiles_log(tmp_path):"
    )
    assert "mark_dynamic" in view.fix and "cache_size_limit" in view.fix
    assert data.hit_cache_limit(data.frames[1]) is view
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert read_page(text).counts["cache-limits"] == 1
    assert "hit the cache size limit (8)" in text
