"""Behavioural oracle: standard-library modules still pass their own test suites after every
one of their Python functions is replaced by the decompiled-and-recompiled code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SUITES = [
    ("test.test_textwrap", "textwrap"),
    ("test.test_shlex", "shlex"),
    ("test.test_fnmatch", "fnmatch"),
    ("test.test_colorsys", "colorsys"),
    ("test.test_string", "string"),
    ("test.test_difflib", "difflib"),
    ("test.test_html", "html"),
    ("test.test_htmlparser", "html.parser"),
    ("test.test_graphlib", "graphlib"),
    ("test.test_copy", "copy"),
    ("test.test_base64", "base64"),
    ("test.test_glob", "glob"),
    ("test.test_ipaddress", "ipaddress"),
    ("test.test_pprint", "pprint"),
    ("test.test_calendar", "calendar"),
]
HELPER = Path(__file__).with_name("stdlib_suite.py")


@pytest.mark.parametrize("test_module, module", SUITES, ids=[m for _, m in SUITES])
def test_module_passes_its_tests_with_decompiled_functions(test_module, module):
    pytest.importorskip(test_module)
    result = subprocess.run(
        [sys.executable, str(HELPER), test_module, module],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["swapped"] > 0
    assert report["patched"]["run"] == report["baseline"]["run"]
    assert report["patched"]["problems"] == report["baseline"]["problems"], report["patched"][
        "problems"
    ][:5]
