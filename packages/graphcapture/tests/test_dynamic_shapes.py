"""Dynamic shapes: symbolic sizes through capture, their guards, and the dims policy."""

from __future__ import annotations

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


class Recorder:
    """A backend that keeps each graph and its example inputs and runs the graph."""

    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append((gm, list(example_inputs)))
        return gm.forward


@pytest.fixture(autouse=True)
def _fresh():
    fj.reset()
    yield
    fj.reset()


def sized_ops(x, y):
    n = x.size(0)
    z = (x + y).view(n * 2, -1)
    if x.size(0) > 4:
        z = z * 2
    return z.sum(0) + torch.arange(n).sum()


def _parts(fn) -> list[str]:
    (entry,) = fe.cache_entries(fn)
    return list(entry.check_fn.code_parts)


def test_dynamic_true_one_graph_with_symint_placeholders_and_shape_guards():
    rec = Recorder()
    compiled = fj.compile(sized_ops, backend=rec, dynamic=True)
    for n in (5, 6, 9):
        x, y = torch.randn(n, 4), torch.randn(n, 4)
        torch.testing.assert_close(compiled(x, y), sized_ops(x, y))
    assert len(rec.graphs) == 1
    gm, example_inputs = rec.graphs[0]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    kinds = [type(n.meta["val"]) for n in placeholders]
    assert kinds[:2] == [torch.SymInt, torch.SymInt]
    assert all(isinstance(n.meta["example_value"], type(n.meta["val"])) for n in placeholders)
    assert [type(v) for v in example_inputs[:2]] == [int, int]
    assert example_inputs[:2] == [5, 4]
    assert isinstance(placeholders[2].meta["val"].shape[0], torch.SymInt)
    parts = _parts(sized_ops)
    assert "L['x'].size()[0] == L['y'].size()[0]" in parts
    assert "L['x'].size()[0] > 4" in parts
    assert "5 <= L['x'].size()[0]" in parts


def test_a_branch_on_a_size_is_guarded_not_a_wrong_reuse():
    rec = Recorder()
    compiled = fj.compile(sized_ops, backend=rec, dynamic=True)
    for n in (5, 3, 7, 2):
        x, y = torch.randn(n, 4), torch.randn(n, 4)
        torch.testing.assert_close(compiled(x, y), sized_ops(x, y))
    assert len(rec.graphs) == 2  # one per direction of `x.size(0) > 4`


def test_backend_runs_inside_a_tracing_context_with_the_fake_mode():
    seen = []

    def backend(gm, example_inputs):
        ctx = torch._guards.TracingContext.try_get()
        seen.append(ctx.fake_mode if ctx is not None else None)
        return gm.forward

    compiled = fj.compile(sized_ops, backend=backend, dynamic=True)
    x, y = torch.randn(6, 4), torch.randn(6, 4)
    torch.testing.assert_close(compiled(x, y), sized_ops(x, y))
    (mode,) = seen
    assert mode is not None and mode.shape_env is not None
