"""`with torch.autocast(...)` in the frame: one graph with the autocast switch, dtypes as eager."""

from __future__ import annotations

import importlib.util

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture.testing import CompileCounter


def mm_in_autocast(x, y):
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        b = torch.mm(a, y)
    return b, torch.mm(x, y)


def mm_in_cpu_amp(x, y):
    with torch.cpu.amp.autocast():
        a = torch.mm(x, y)
    return a + 1


def nested_disable(x, y):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.mm(x, y)
        with torch.autocast("cpu", enabled=False):
            b = torch.mm(x, y)
    return a, b


_INDUCTOR_LITE = pytest.param(
    "inductor-lite",
    marks=pytest.mark.skipif(
        importlib.util.find_spec("framejit.inductor_lite") is None,
        reason="framejit-inductor-lite is not installed (graphcapture's own session)",
    ),
)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("fn", [mm_in_autocast, mm_in_cpu_amp, nested_disable])
@pytest.mark.parametrize("backend", ["count", _INDUCTOR_LITE])
def test_autocast_block_one_graph(fn, backend):
    cnt = CompileCounter() if backend == "count" else backend
    x, y = torch.rand(8, 8), torch.rand(8, 8)
    expected = fn(x, y)
    got = fj.compile(fn, backend=cnt, fullgraph=True)(x, y)
    for e, g in zip(expected if isinstance(expected, tuple) else [expected],
                    got if isinstance(got, tuple) else [got], strict=True):  # fmt: skip
        assert g.dtype == e.dtype
        torch.testing.assert_close(g, e)
    assert not torch.is_autocast_enabled("cpu")
    if backend == "count":
        assert cnt.frame_count == 1


def test_break_inside_autocast_moves_the_break_to_the_block():
    """A break inside the block: the trace breaks where the context is made, so the graph
    before it is kept and the block runs under the real autocast (frame stays compiled)."""

    def fn(x):
        w = x * 2
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = torch.mm(w, x)
            print("", end="")  # a graph break inside the block
            z = torch.mm(y.float(), x)
        return z, torch.mm(x, x)

    x = torch.rand(4, 4)
    expected = fn(x)
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(fn, backend="eager")
        for _ in range(2):
            got = compiled(x)
            assert [t.dtype for t in got] == [t.dtype for t in expected]
            torch.testing.assert_close(got, expected)
            assert not torch.is_autocast_enabled("cpu")
    finally:
        unsubscribe()
    root = [r for r in records if r.function_name == "fn"]
    assert root[0].skipped_reason is None and root[0].graphs
    assert "autocast block" in root[0].graph_breaks[-1].reason


def test_autocast_state_guarded():
    def fn(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return torch.mm(x, x) + 1

    cnt = CompileCounter()
    compiled = fj.compile(fn, backend=cnt)
    x = torch.rand(4, 4)
    assert compiled(x).dtype == torch.bfloat16
    with torch.autocast("cpu", enabled=False):
        assert compiled(x).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")
