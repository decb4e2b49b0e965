"""dump, explain, the command line and the decompiler on code graphcapture really generates.

Needs framejit.graphcapture (skipped in ``nox -s inspect``, run by the integration session).
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import types

import pytest

torch = pytest.importorskip("torch")
fj = pytest.importorskip("framejit.graphcapture")

import framejit.inspect as fji  # noqa: E402


def with_break(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def loop_break(a, n):
    # a break inside the loop would run the frame eagerly (as torch.compile): the loop
    # follows the break, in the resume function
    a = a + 1
    print("graph break before a loop")
    for i in range(n):
        a = a * 2 + i
    return a


def nested_branches(a, b):
    y = a.cos()
    if a.sum() > 0:
        if b.sum() > 0:  # noqa: SIM108 - statements, not a ternary, are what is tested
            y = y + b
        else:
            y = y - b
    while y.sum() > 100:
        y = y / 2
    return y * 2


def expression_break(a, b):
    return a * 2 + float(b.sum()) * torch.sin(a)


CASES = [
    (with_break, (torch.randn(8), -torch.rand(8))),
    (with_break, (torch.randn(8), torch.rand(8))),
    (loop_break, (torch.randn(4), 3)),
    (nested_branches, (torch.rand(4), torch.rand(4))),
    (nested_branches, (torch.rand(4), -torch.rand(4) * 1000)),
    (expression_break, (torch.randn(4), torch.randn(4))),
]


def _records_of(fn, args):
    fj.reset()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        result = fj.compile(fn, backend="eager")(*args)
    finally:
        unsubscribe()
    return result, records


@pytest.mark.parametrize(
    "fn, args", CASES, ids=[f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CASES)]
)
def test_decompiled_generated_code_runs_like_the_generated_code(fn, args, capsys):
    fj.reset()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    compiled = fj.compile(fn, backend="eager")
    try:
        torch.testing.assert_close(compiled(*args), fn(*args))
    finally:
        unsubscribe()
    # rewritten frames: decompile, rebuild in the same globals, run like eager
    transformed = [
        r.transformed_code
        for r in records
        if r.code is fn.__code__ and r.transformed_code is not None
    ]
    assert transformed
    rebuilt = _rebuild(transformed[-1], fn.__globals__)
    torch.testing.assert_close(rebuilt(*args), fn(*args))
    # resume functions: capture the arguments each one really receives, then compare the
    # generated code object and its decompiled source on exactly those arguments
    resume_codes = {name: code for r in records for name, code in r.resume_functions.items()}
    g = fn.__globals__
    calls = []
    saved = {name: g[name] for name in resume_codes if name in g}

    def capturing(name, original):
        def capture(*call_args):
            calls.append((name, copy.deepcopy(call_args)))
            return original(*call_args)

        return capture

    g.update({name: capturing(name, original) for name, original in saved.items()})
    try:
        compiled(*args)
    finally:
        g.update(saved)
    assert calls and {name for name, _ in calls} <= set(saved)
    for name, call_args in calls:
        generated = types.FunctionType(resume_codes[name], g)
        decompiled = _rebuild(resume_codes[name], g)
        expected = generated(*copy.deepcopy(call_args))
        torch.testing.assert_close(decompiled(*copy.deepcopy(call_args)), expected)


def _rebuild(code, namespace):
    source = fji.decompile(code)
    assert "could not decompile" not in source, source
    scope = dict(namespace)
    exec(compile(source, f"<decompiled {code.co_name}>", "exec"), scope)
    return types.FunctionType(scope[code.co_name].__code__, namespace)


def test_explain_reports_graphs_breaks_and_source_lines(capsys):
    a, b = torch.randn(8), -torch.rand(8)
    out = fji.explain(with_break, a, b)
    printed = capsys.readouterr().out
    assert out.graph_count >= 2 and out.graph_break_count >= 1
    assert all(g.op_count == len(g.ops) for g in out.graphs)
    brk = out.graph_breaks[0]
    assert brk.filename == __file__ and brk.source_line == "if b.sum() < 0:"
    assert f"{__file__}:{brk.lineno}" in printed and "if b.sum() < 0:" in printed


def test_explain_lists_recompiles_with_the_failed_guard():
    def scaled(a, n):
        return a * n

    fj.reset()
    compiled = fj.compile(scaled, backend="eager")
    compiled(torch.ones(2), 2)
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled(torch.ones(2), 3)
    finally:
        unsubscribe()
    out = fji.summarize(records)
    assert [r.reasons for r in out.recompiles] == [
        r.recompile_reasons for r in records if r.is_recompile
    ]
    assert out.recompiles and any("L['n']" in reason for reason in out.recompiles[0].reasons)


def test_report_shows_the_function_that_hit_the_cache_limit(tmp_path, monkeypatch):
    from report_reading import read_page

    from framejit.graphcapture.config import config
    from framejit.inspect.report_data import build

    def grows(a):
        return a.sum() * 2

    monkeypatch.setattr(config, "cache_size_limit", 2)
    fj.reset()
    compiled = fj.compile(grows, backend="eager", dynamic=False)  # no automatic dynamic
    path = tmp_path / "report.html"
    with pytest.warns(RuntimeWarning, match="cache size limit"), fji.report(path) as records:
        for n in (2, 3, 4, 5):  # a new static size each call: the size guard keeps failing
            torch.testing.assert_close(compiled(torch.ones(n)), grows(torch.ones(n)))
    fj.reset()
    data = build(records)  # the records alone do not say it: the log does
    assert data.cache_limits == []
    text = path.read_text(encoding="utf-8")
    assert read_page(text).counts["cache-limits"] == 1
    assert len(records) == 2 and sum(r.is_recompile for r in records) == 1
    assert 'class="cache-limit"' in text and "grows" in text
    assert "L[&#x27;a&#x27;]" in text and "mark_dynamic" in text  # the guard and its fix
    assert "cache_size_limit" in text


def test_dump_context_manager_writes_each_frame(tmp_path):
    fj.reset()
    with fji.dump(tmp_path) as dumper:
        fj.compile(with_break, backend="eager")(torch.randn(8), -torch.rand(8))
    assert dumper.count >= 2
    index = (tmp_path / "index.txt").read_text()
    assert "000_with_break" in index and "if b.sum() < 0:" in index
    frame = tmp_path / "000_with_break"
    for name in ("source.py", "original_bytecode.txt", "transformed_bytecode.txt", "transformed_decompiled.py",
                 "guards.txt", "record.json"):  # fmt: skip
        assert (frame / name).is_file(), name
    assert list((frame / "graphs").glob("__compiled_fn_*.py"))
    assert list((frame / "resume").glob("__resume_at_*.py"))


SCRIPT = """
import sys, torch
from framejit import graphcapture as fj

@fj.compile
def f(a):
    a = a + 1
    if a.sum() > 0:
        a = a * 2
    return a

f(torch.ones(3))
print("args:", sys.argv[1:])
"""


def _run(args, env=None):
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


def test_command_line_runs_a_script_with_dump_and_summary(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    result = _run(
        ["-m", "framejit.inspect", "run", str(script), "hello", "--dump", str(tmp_path / "out")]
    )
    assert result.returncode == 0, result.stderr
    assert "args: ['hello']" in result.stdout
    assert "framejit summary" in result.stderr and "Graph break count: 1" in result.stderr
    assert (tmp_path / "out" / "index.txt").is_file()
    assert (tmp_path / "out" / "000_f" / "transformed_decompiled.py").is_file()


def _dumps_with_env_var(tmp_path, text: str) -> None:
    """``text`` run as a script with FRAMEJIT_DUMP_DIR set dumps its compiled frame there."""
    script = tmp_path / "script.py"
    script.write_text(text)
    out = tmp_path / "env-dump"
    result = _run([str(script)], env={"FRAMEJIT_DUMP_DIR": str(out)})
    assert result.returncode == 0, result.stderr
    assert (out / "index.txt").is_file()
    assert (out / "000_f" / "guards.txt").is_file()


def test_dump_dir_environment_variable(tmp_path):
    _dumps_with_env_var(tmp_path, "import framejit.inspect\n" + SCRIPT)


def test_dump_dir_environment_variable_without_importing_inspect(tmp_path):
    """Installed, inspect registers a `framejit.listeners` entry point that graphcapture
    runs when FRAMEJIT_DUMP_DIR is set: the script itself never imports inspect."""
    from importlib.metadata import entry_points

    if not any(ep.name == "dump-dir" for ep in entry_points(group="framejit.listeners")):
        pytest.skip("framejit-inspect is not installed (source checkout): no entry points")
    _dumps_with_env_var(tmp_path, SCRIPT + "assert 'framejit.inspect.dump' in sys.modules\n")
