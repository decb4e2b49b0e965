"""Frames sent wholly to eager cannot hide (logged under `dynamo`, published with their
reason); float(t.numpy()...)/.tolist()/.item() and `and`/`or` on tensors break and resume."""

from __future__ import annotations

import logging

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture import eval_frame, events


@pytest.fixture
def records():
    seen = []
    unsubscribe = events.subscribe(seen.append)
    yield seen
    unsubscribe()


def test_eager_frame_is_logged_and_recorded(records, caplog):
    def f(x):
        y = x + 1

        def g():
            return y

        print(end="")  # a graph break while a closure over the frame's cells is alive
        return g() * 2

    x = torch.randn(3)
    with caplog.at_level(logging.INFO, logger="framejit.dynamo"):
        torch.testing.assert_close(fj.compile(f)(x), f(x))
    eager = [r for r in records if r.function_name == "f" and r.skipped_reason]
    if not eager:
        pytest.skip("this frame is captured now: nothing here runs wholly eagerly")
    assert any("eagerly" in m and eager[0].skipped_reason in m for m in caplog.messages)


def test_internal_error_publishes_an_eager_record(records, monkeypatch, caplog):
    def boom(*args, **kwargs):
        raise RuntimeError("synthetic")

    monkeypatch.setattr(fj.config, "raise_internal_errors", False)
    monkeypatch.setattr(eval_frame, "convert_frame", boom)

    def f(x):
        return x.sin()

    x = torch.randn(2)
    with caplog.at_level(logging.WARNING, logger="framejit.dynamo"):
        torch.testing.assert_close(fj.compile(f)(x), x.sin())
    [record] = [r for r in records if r.function_name == "f"]
    assert record.skipped_reason == "internal error: RuntimeError: synthetic"
    assert any("synthetic" in m for m in caplog.messages)


def _graphs_and_breaks(records):
    return sum(len(r.graphs) for r in records), [b for r in records for b in r.graph_breaks]


@pytest.mark.parametrize(
    "convert",
    [
        pytest.param(lambda t: float(t.numpy().sum()), id="numpy"),  # numpy() is traced
        pytest.param(lambda t: sum(t.tolist()), id="tolist"),
        pytest.param(lambda t: t.sum().item(), id="item"),
    ],
)
def test_python_values_break_and_resume(records, convert):
    def f(x):
        y = x.cos() + 1
        value = convert(y)
        return y * 2 + value

    x = torch.randn(4)
    torch.testing.assert_close(fj.compile(f)(x), f(x))
    graphs, breaks = _graphs_and_breaks(records)
    assert breaks, "the conversion is a graph break"
    assert graphs >= 2, "the code after the break is captured too"


def test_and_or_on_tensors(records):
    def f(x, y):
        a = (x > 0).all() and (y > 0).any()
        b = (x < 0).any() or y.sum() > 100
        return x * 2 + (1 if a else 0) + (3 if b else 0)

    for x, y in [(torch.ones(3), torch.ones(3)), (-torch.ones(3), torch.zeros(3))]:
        torch.testing.assert_close(fj.compile(f)(x, y), f(x, y))


def test_inplace_operator_on_a_number_and_a_tensor(records):
    """`n = 0; n += t` (T5's relative position buckets) was an fx SyntaxError (`0 += t`)."""

    def f(x):
        n = 0
        n += (x > 0).to(torch.long) * 4
        n *= 2
        return n + x.abs().to(torch.long)

    x = torch.randn(5)
    torch.testing.assert_close(fj.compile(f, fullgraph=True)(x), f(x))


@pytest.mark.filterwarnings("ignore:.*torch.jit.trace.*is deprecated:DeprecationWarning")
def test_frames_run_while_torch_jit_traces_are_not_captured():
    """torch.jit.trace inside a compiled function (torch's test_jit_save): the module's forward
    runs eagerly while jit records it, so the traced module holds its real ops."""

    class AddA(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = 3

        def forward(self, x):
            return x + self.a

    def fn(x):
        traced = torch.jit.trace(AddA(), (torch.rand(3, 4),))
        return traced(x) * 2

    x = torch.randn(3, 4)
    torch.testing.assert_close(fj.compile(fn)(x), fn(x))
