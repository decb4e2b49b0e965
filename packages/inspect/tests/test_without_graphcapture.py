"""framejit.inspect imports and reports clearly when graphcapture is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from framejit.inspect.cli import _parse

BLOCK_GRAPHCAPTURE = "import sys; sys.modules['framejit.graphcapture'] = None\n"


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_GRAPHCAPTURE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=300,
    )


def test_import_and_decompile_work_without_graphcapture(tmp_path):
    result = _run(
        """
        import framejit.inspect as fji
        def f(x):
            return [y * 2 for y in x if y]
        print(fji.decompile(f))
        """,
        FRAMEJIT_DUMP_DIR=str(tmp_path / "dump"),
    )
    assert result.returncode == 0, result.stderr
    assert "return [y * 2 for y in x if y]" in result.stdout


def test_explain_and_dump_say_how_to_get_graphcapture():
    result = _run(
        """
        import framejit.inspect as fji
        calls = (
            lambda: fji.explain(len, []),
            lambda: fji.dump("out").__enter__(),
            lambda: fji.report("r.html").__enter__(),
        )
        for call in calls:
            try:
                call()
            except ImportError as exc:
                print("ImportError:", exc)
        """
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("ImportError:")]
    assert len(lines) == 3
    assert all("pip install framejit-inspect[graphcapture]" in line for line in lines)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "s.py"], ("run", "s.py", [], None, None, None)),
        (["run", "s.py", "a", "--dump", "out/"], ("run", "s.py", ["a"], "out/", None, None)),
        (
            ["run", "s.py", "--dump=o", "x", "--logs", "graph_breaks"],
            ("run", "s.py", ["x"], "o", "graph_breaks", None),
        ),
        (
            ["run", "s.py", "--", "--dump", "kept"],
            ("run", "s.py", ["--dump", "kept"], None, None, None),
        ),
        (["report", "s.py", "1"], ("report", "s.py", ["1"], None, None, "framejit-report.html")),
        (
            ["report", "s.py", "-o", "r.html", "--logs=+dynamo"],
            ("report", "s.py", [], None, "+dynamo", "r.html"),
        ),
        (["report", "s.py", "--output=r.html"], ("report", "s.py", [], None, None, "r.html")),
    ],
)
def test_command_line_parsing(argv, expected):
    inv = _parse(argv)
    assert (
        inv.command,
        inv.script,
        inv.script_args,
        inv.dump_dir,
        inv.logs,
        inv.output,
    ) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["explain"],
        ["run"],
        ["run", "s.py", "--dump"],
        ["run", "s.py", "-o", "r.html"],
        ["report", "s.py", "-o"],
    ],
)
def test_command_line_usage_errors(argv):
    with pytest.raises(SystemExit) as info:
        _parse(argv)
    assert "usage" in str(info.value)
