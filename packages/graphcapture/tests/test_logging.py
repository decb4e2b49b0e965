"""FRAMEJIT_LOGS artifacts: standard logging under framejit.*, with the seed's headings."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest
import torch

from framejit import graphcapture as fj


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


@pytest.fixture
def logs():
    fj.set_logs("dynamo,guards,bytecode,graph,graph_code,graph_breaks,recompiles,output_code")
    yield
    fj.set_logs("")


def _captured(caplog):
    return "\n".join(r.getMessage() for r in caplog.records)


def test_artifacts(logs, caplog):
    for name in ("bytecode", "guards", "graph", "graph_code", "graph_breaks", "recompiles"):
        logging.getLogger(f"framejit.{name}").propagate = True  # let caplog see them
    caplog.set_level(logging.DEBUG, logger="framejit")
    compiled = fj.compile(toy_example, backend="eager")
    compiled(torch.randn(10), torch.randn(10))
    compiled(torch.randn(11), torch.randn(11))
    text = _captured(caplog)
    assert "ORIGINAL BYTECODE toy_example" in text
    assert "MODIFIED BYTECODE toy_example" in text
    assert "__compiled_fn_0" in text
    assert "GUARDS:" in text
    # the seed's GUARDS log: one check_tensor line per tensor, with the line that made it
    assert (
        "check_tensor(L['a'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, "
        "AutogradCPU), torch.float32, device=None, requires_grad=False, size=[10], stride=[1])"
    ) in text
    assert f"size=[10], stride=[1])  # {__file__}:18 in toy_example" in text
    assert "TRACED GRAPH __compiled_fn_0" in text
    assert "opcode" in text and "placeholder" in text and "call_method" in text
    assert "def forward(self, L_a_" in text and "l_a_ = L_a_" in text  # named as torch's
    assert f"# File: {__file__}:18 in toy_example, code: x = a / (torch.abs(a) + 1)" in text
    assert "Graph break in user code at" in text and "if b.sum() < 0:" in text
    assert "Recompiling function toy_example" in text


def test_spec_syntax_as_torch_users_type_it():
    from framejit.graphcapture.logs import ARTIFACTS, parse_logs

    assert parse_logs("guards") == {"guards": logging.DEBUG}
    assert parse_logs("dynamo") == {"dynamo": logging.INFO}
    assert parse_logs("+dynamo, -graph") == {"dynamo": logging.DEBUG, "graph": logging.ERROR}
    every = parse_logs("all,-bytecode")
    assert set(every) == set(ARTIFACTS) and every["bytecode"] == logging.ERROR
    assert set(parse_logs("+all").values()) == {logging.DEBUG}
    assert parse_logs("help") == {}


def test_levels_reach_the_loggers():
    try:
        fj.set_logs("+dynamo,-graph,guards")
        assert logging.getLogger("framejit.dynamo").getEffectiveLevel() == logging.DEBUG
        assert logging.getLogger("framejit.graph").getEffectiveLevel() == logging.ERROR
        assert logging.getLogger("framejit.guards").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("framejit.graph").isEnabledFor(logging.DEBUG)
    finally:
        fj.set_logs("")
    assert logging.getLogger("framejit.graph").level == logging.NOTSET


def test_help_prints_one_line_per_artifact(capsys):
    from framejit.graphcapture.logs import ARTIFACTS

    fj.set_logs("help")
    err = capsys.readouterr().err
    for name in ARTIFACTS:
        assert any(line.split()[:1] == [name] for line in err.splitlines()), name
    assert "+name" in err and "-name" in err and "all" in err


def test_unknown_artifact_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown artifact"):
        fj.set_logs("bytecodes")
    with pytest.raises(ValueError, match=r"\['\+graps'\].*FRAMEJIT_LOGS=help"):
        fj.set_logs("+graps")


def test_environment_variable_switches_logs_on(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            """
            import torch
            from framejit import graphcapture as fj

            def f(x):
                return x.sin() + 1

            fj.compile(f, backend="eager")(torch.randn(3))
            """
        )
    )
    env = {**os.environ, "FRAMEJIT_LOGS": "bytecode,guards"}
    result = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "ORIGINAL BYTECODE f" in result.stderr
    assert "MODIFIED BYTECODE f" in result.stderr
    assert "GUARDS:" in result.stderr
