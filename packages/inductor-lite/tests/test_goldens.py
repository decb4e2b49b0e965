"""Golden kernels ("process replay"): the rendered kernels of a fixed set of graphs are
committed under tests/goldens/<language>/, and any change to them fails with the diff.

After an intended change of the generated code, rewrite the goldens and review their diff:

    FRAMEJIT_UPDATE_GOLDENS=1 python -m pytest packages/inductor-lite/tests/test_goldens.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest
import torch.fx
from golden_graphs import CASES

from framejit.inductor_lite.compile_fx import render_kernels

GOLDENS = Path(__file__).parent / "goldens"
UPDATE = os.environ.get("FRAMEJIT_UPDATE_GOLDENS") == "1"
SUFFIX = {"cpp": ".cpp", "triton": ".triton"}  # not .py: goldens are not linted


def _check(language: str, name: str, fn, make_inputs) -> None:
    source = render_kernels(torch.fx.symbolic_trace(fn), make_inputs(), language)
    path = GOLDENS / language / f"{name}{SUFFIX[language]}"
    if UPDATE or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        if not UPDATE:
            pytest.fail(f"golden {path} did not exist; written now, commit it")
        return
    expected = path.read_text()
    if source != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(True), source.splitlines(True), str(path), "rendered now"
            )
        )
        pytest.fail(f"generated {language} kernels of {name!r} changed:\n{diff}")


@pytest.mark.parametrize("name,fn,make_inputs", CASES, ids=[c[0] for c in CASES])
def test_cpp_golden(name, fn, make_inputs):
    _check("cpp", name, fn, make_inputs)


@pytest.mark.parametrize("name,fn,make_inputs", CASES, ids=[c[0] for c in CASES])
def test_triton_golden(name, fn, make_inputs):
    pytest.importorskip("triton", exc_type=ImportError)  # rendering needs only the package
    _check("triton", name, fn, make_inputs)
