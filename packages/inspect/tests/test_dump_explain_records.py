"""dump's files and explain's report from synthetic CompileRecords (no graphcapture needed)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("framejit.guards")

from records import make_records  # noqa: E402

from framejit.inspect import Dumper, summarize, write_record  # noqa: E402
from framejit.inspect.artifacts import graph_table, op_nodes  # noqa: E402


def _tree(root):
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_write_record_writes_every_artifact(tmp_path):
    record = make_records()[0]
    write_record(record, tmp_path)
    files = _tree(tmp_path)
    for name in ("source.py", "original_bytecode.txt", "transformed_bytecode.txt", "transformed_decompiled.py",
                 "guards.txt", "record.json", "timings.json"):  # fmt: skip
        assert name in files
    assert "def toy_example(a, b):" in files["source.py"]
    decompiled = files["transformed_decompiled.py"]
    compile(decompiled, "<dump>", "exec")
    assert "__compiled_fn_0(a, b)" in decompiled and "__resume_at_30_1(b, x)" in decompiled
    assert "def _resume(b, x):" in files["resume/__resume_at_30_1.py"]
    assert "BINARY_OP" in files["resume/__resume_at_30_1.bytecode.txt"]
    for part in record.check_fn.code_parts:
        assert part in files["guards.txt"]
    for line in record.check_fn.verbose_code_parts:
        assert line in files["guards.txt"]
    graph = record.graphs[0]
    assert files["graphs/__compiled_fn_0.tabular.txt"] == graph_table(graph.graph_module)
    for node in graph.graph_module.graph.nodes:
        assert node.name in files["graphs/__compiled_fn_0.tabular.txt"]
    for node in op_nodes(graph.graph_module):
        assert node.name in files["graphs/__compiled_fn_0.py"]
    assert files["graphs/__compiled_fn_0.output_code.py"] == graph.compiled.source_code
    summary = json.loads(files["record.json"])
    assert summary["graph_breaks"][0]["source_line"] == record.graph_breaks[0].source_line
    assert json.loads(files["timings.json"]) == record.timings


def test_dumps_of_the_same_records_are_identical_and_address_free(tmp_path):
    trees = []
    for run in ("first", "second"):
        dumper = Dumper(tmp_path / run)
        for record in make_records():
            dumper(record)
        tree = _tree(tmp_path / run)
        trees.append({k: v for k, v in tree.items() if not k.endswith("timings.json")})
    assert trees[0] == trees[1]
    assert sorted({name.split("/")[0] for name in trees[0]}) == [
        "000_toy_example", "001_toy_example", "002_helper", "index.txt",
    ]  # fmt: skip
    for name, text in trees[0].items():
        assert " at 0x" not in text, name


def test_index_lists_frames_breaks_and_recompiles_in_order(tmp_path):
    records = make_records()
    dumper = Dumper(tmp_path)
    for record in records:
        dumper(record)
    index = (tmp_path / "index.txt").read_text().splitlines()
    folders = [line.split(":")[0] for line in index if line and not line.startswith(("#", " "))]
    assert folders == ["000_toy_example", "001_toy_example", "002_helper"]
    text = "\n".join(index)
    brk = records[0].graph_breaks[0]
    assert f"{brk.filename}:{brk.lineno}: {brk.reason}" in text
    assert brk.source_line in text
    assert records[1].recompile_reasons[0] in text
    assert records[2].skipped_reason in text
    assert text.index("000_toy_example") < text.index(brk.reason) < text.index("001_toy_example")


def test_summarize_counts_graphs_ops_breaks_and_recompiles():
    records = make_records()
    out = summarize(records)
    graphs = [g for r in records for g in r.graphs]
    assert out.graph_count == len(graphs)
    assert out.ops_per_graph == [len(op_nodes(g.graph_module)) for g in graphs]
    assert out.graph_break_count == sum(len(r.graph_breaks) for r in records)
    assert [r.reasons for r in out.recompiles] == [
        r.recompile_reasons for r in records if r.is_recompile
    ]
    assert out.frames_compiled == sum(r.transformed_code is not None for r in records)
    report = str(out)
    brk = records[0].graph_breaks[0]
    assert (
        f"{brk.filename}:{brk.lineno}" in report
        and brk.source_line in report
        and brk.reason in report
    )
    assert records[1].recompile_reasons[0] in report
    assert records[2].skipped_reason in report
