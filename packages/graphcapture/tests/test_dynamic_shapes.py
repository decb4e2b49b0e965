"""Dynamic shapes: symbolic sizes through capture, their guards, and the dims policy."""

from __future__ import annotations

import math

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


# ---------------------------------------------------------------- 20 sequence lengths


class Attention(torch.nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(T, T))
        att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


LENGTHS = list(range(3, 23))  # 20 distinct sequence lengths


def _compiles_per_code(fn, inputs, dynamic=None) -> dict[str, int]:
    per_code: dict[str, int] = {}

    def count(record):
        if record.transformed_code is not None:
            per_code[record.function_name] = per_code.get(record.function_name, 0) + 1

    unsubscribe = fj.events.subscribe(count)
    try:
        compiled = fj.compile(fn, backend="eager", dynamic=dynamic)
        for args in inputs:
            torch.testing.assert_close(compiled(*args), fn(*args))
    finally:
        unsubscribe()
    return per_code


def test_attention_over_20_sequence_lengths_compiles_twice():
    torch.manual_seed(0)
    model = Attention()
    inputs = [(torch.randn(2, t, 8),) for t in LENGTHS]
    assert _compiles_per_code(model, inputs) == {"forward": 2}  # torch.compile: 2 as well


def test_attention_dynamic_true_compiles_once():
    torch.manual_seed(0)
    model = Attention()
    inputs = [(torch.randn(2, t, 8),) for t in LENGTHS]
    assert _compiles_per_code(model, inputs, dynamic=True) == {"forward": 1}


def test_toy_example_over_20_lengths_compiles_each_frame_at_most_twice():
    torch.manual_seed(0)
    inputs = [(torch.randn(t), torch.randn(t)) for t in LENGTHS]
    per_code = _compiles_per_code(toy_example, inputs)
    assert per_code["toy_example"] == 2
    assert all(n <= 2 for n in per_code.values())
    # dynamism crosses the graph break: the resume functions, first reached after
    # toy_example went dynamic, start dynamic (torch.compile: 5 frames in all, as here)
    assert sum(per_code.values()) <= 5


def test_the_recompiles_log_says_which_dim_became_dynamic(caplog):
    compiled = fj.compile(double_rows, backend="eager")
    with caplog.at_level("DEBUG", logger="framejit.recompiles"):
        for n in (3, 4, 5):
            x = torch.randn(n, 2)
            torch.testing.assert_close(compiled(x), double_rows(x))
    assert len(fe.cache_entries(double_rows)) == 2
    assert "automatic dynamic: L['x'].size()[0] changed from 3 to 4" in caplog.text


def double_rows(x):
    return x * 2


# ---------------------------------------------------------------- policy


def test_dynamic_false_never_makes_a_dim_symbolic():
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec, dynamic=False)
    for n in (3, 4, 5):
        compiled(torch.randn(n, 2))
    assert len(rec.graphs) == 3
    assert all(
        not any(isinstance(v, int) for v in example_inputs) for _, example_inputs in rec.graphs
    )


def test_sizes_0_and_1_stay_specialised():
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec, dynamic=True)
    for n in (1, 0, 5, 6):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), double_rows(x))
    assert len(rec.graphs) == 3  # 1, 0, then one symbolic graph for 5 and 6
    assert "2 <= L['x'].size()[0]" in fe.cache_entries(double_rows)[0].check_fn.code_parts


def test_mark_dynamic_makes_the_dim_symbolic_on_the_first_compile():
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec)
    for n in (4, 9):
        x = torch.randn(n, 3)
        fj.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), double_rows(x))
    assert len(rec.graphs) == 1
    _, example_inputs = rec.graphs[0]
    assert example_inputs[0] == 4
    assert isinstance(example_inputs[1], torch.Tensor)


def test_a_marked_dim_of_size_1_is_specialised_quietly():
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec)
    for n in (1, 5, 1, 0, 7):
        x = torch.randn(n, 3)
        fj.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(x), double_rows(x))
    assert len(rec.graphs) == 3  # 1, the symbol (5 and 7), 0: torch.compile compiles 3 too


def test_mark_dynamic_bounds_become_guards():
    compiled = fj.compile(double_rows, backend="eager")
    x = torch.randn(4, 3)
    fj.mark_dynamic(x, 0, min=3, max=10)
    compiled(x)
    parts = fe.cache_entries(double_rows)[0].check_fn.code_parts
    assert "3 <= L['x'].size()[0]" in parts and "L['x'].size()[0] <= 10" in parts
    y = torch.randn(12, 3)
    torch.testing.assert_close(compiled(y), double_rows(y))
    assert len(fe.cache_entries(double_rows)) == 2  # 12 is outside the marked range


def test_a_marked_size_outside_its_bounds_is_an_error():
    compiled = fj.compile(double_rows, backend="eager")
    x = torch.randn(12, 3)
    fj.mark_dynamic(x, 0, min=3, max=10)
    with pytest.raises(fj.ConstraintViolationError, match=r"L\['x'\]\.size\(\)\[0\] is 12"):
        compiled(x)


def test_mark_static_wins_over_dynamic_true():
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec, dynamic=True)
    for n in (4, 5):
        x = torch.randn(n, 3)
        fj.mark_static(x, 0)
        compiled(x)
    assert len(rec.graphs) == 2
    assert [type(v) for v in rec.graphs[0][1]] == [int, torch.Tensor]  # dim 1 still symbolic


def specialises(x):
    if x.size(0) == 4:
        return x + 1
    return x - 1


def test_a_marked_dim_forced_to_a_constant_is_an_error_naming_the_line():
    compiled = fj.compile(specialises, backend="eager")
    x = torch.randn(4, 3)
    fj.mark_dynamic(x, 0)
    with pytest.raises(fj.ConstraintViolationError, match=r"L\['x'\]\.size\(\)\[0\]") as info:
        compiled(x)
    assert "if x.size(0) == 4:" in str(info.value)


def test_a_branch_on_a_marked_dim_that_keeps_it_symbolic_is_fine():
    compiled = fj.compile(sized_ops, backend="eager")
    for n in (6, 8):
        x, y = torch.randn(n, 4), torch.randn(n, 4)
        fj.mark_dynamic(x, 0)
        fj.mark_dynamic(y, 0)  # x + y equates them: a static y would pin x's size
        torch.testing.assert_close(compiled(x, y), sized_ops(x, y))
    assert len(fe.cache_entries(sized_ops)) == 1


def test_a_marked_dim_equated_to_a_static_size_is_an_error():
    compiled = fj.compile(sized_ops, backend="eager")
    x, y = torch.randn(6, 4), torch.randn(6, 4)
    fj.mark_dynamic(x, 0)
    with pytest.raises(fj.ConstraintViolationError, match="constant 6"):
        compiled(x, y)


# ---------------------------------------------------------------- relations and sizes


def broadcast_add(x, y):
    return x + y


def test_broadcast_relations_between_inputs_are_guarded():
    compiled = fj.compile(broadcast_add, backend="eager", dynamic=True)
    x, y = torch.randn(5, 3), torch.randn(5, 3)
    torch.testing.assert_close(compiled(x, y), broadcast_add(x, y))
    parts = fe.cache_entries(broadcast_add)[0].check_fn.code_parts
    assert "L['x'].size()[0] == L['y'].size()[0]" in parts
    # sizes that no longer match: a recompile (and then eager's broadcast), never a reuse
    a, b = torch.randn(6, 3), torch.randn(1, 3)
    torch.testing.assert_close(compiled(a, b), broadcast_add(a, b))
    assert len(fe.cache_entries(broadcast_add)) == 2


def ranged(x):
    total = x[0]
    for i in range(x.size(0)):
        total = total + x[i]
    return total.reshape(1, -1).expand(x.size(0), x.size(1)) * x.numel()


def test_range_over_a_symbolic_size_is_guarded_never_a_wrong_unroll():
    compiled = fj.compile(ranged, backend="eager", dynamic=True)
    for n in (3, 5, 3):
        x = torch.randn(n, 2)
        torch.testing.assert_close(compiled(x), ranged(x))
    assert len(fe.cache_entries(ranged)) == 2  # one per unrolled length


def returns_sizes(x):
    return x.shape, x.size(1) + 1, len(x)


def test_symbolic_sizes_returned_to_python_are_the_real_ones():
    compiled = fj.compile(returns_sizes, backend="eager", dynamic=True)
    for n in (3, 7):
        x = torch.randn(n, n + 1)
        assert compiled(x) == returns_sizes(x)
    assert len(fe.cache_entries(returns_sizes)) == 1


def scaled(x, n):
    return x * n


def rows_then_break(x):
    x = x * 2
    torch._dynamo.graph_break()
    return x.sum(0)


# config.dynamic_sources (torch.compiler.config.dynamic_sources' syntax): the named sources
# are symbols from the first compile, over dynamic=False; `:N` limits an entry to dim N.
# (spec, dynamic=, fn, argument lists, graphs compiled)
DYNAMIC_SOURCES = [
    ("L['x']", None, double_rows, [(torch.randn(n, 3),) for n in (2, 3, 4)], 1),
    ("L['x']", False, double_rows, [(torch.randn(n, 3),) for n in (2, 3, 4)], 1),
    ("L['y']", False, double_rows, [(torch.randn(n, 3),) for n in (2, 3)], 2),
    ("L['x']:1", False, double_rows, [(torch.randn(2, n),) for n in (2, 3, 4)], 1),
    ("L['x']:1", False, double_rows, [(torch.randn(n, 2),) for n in (2, 3)], 2),
    ("L['x'], L['n']", False, scaled, [(torch.randn(n), n) for n in (2, 3, 4)], 1),
    (r"L\['x.*'\], L\['n.*'\]", False, scaled, [(torch.randn(n), n) for n in (2, 3, 4)], 1),
    # a regex whose own colon is not a dim suffix
    (r"L\['(?:x|n)'\]", False, scaled, [(torch.randn(n), n) for n in (2, 3, 4)], 1),
    # the resume function after a break names the same local: no recompiles there either
    ("L['x']", None, rows_then_break, [(torch.randn(n, 3),) for n in (2, 3, 4)], 2),
]


@pytest.mark.parametrize(("spec", "dynamic", "fn", "calls", "graphs"), DYNAMIC_SOURCES)
def test_dynamic_sources_are_symbols_from_the_first_compile(
    monkeypatch, spec, dynamic, fn, calls, graphs
):
    monkeypatch.setattr(fj.config, "dynamic_sources", spec)
    rec = Recorder()
    compiled = fj.compile(fn, backend=rec, dynamic=dynamic)
    for args in calls:
        torch.testing.assert_close(compiled(*args), fn(*args))
    assert len(rec.graphs) == graphs


def test_dynamic_sources_yield_to_mark_static(monkeypatch):
    monkeypatch.setattr(fj.config, "dynamic_sources", "L['x']")
    rec = Recorder()
    compiled = fj.compile(double_rows, backend=rec, dynamic=False)
    for n in (4, 5):
        x = torch.randn(n, 3)
        fj.mark_static(x, 0)
        torch.testing.assert_close(compiled(x), double_rows(x))
    assert len(rec.graphs) == 2


def upsampled_to_twice(x):
    n = x.size(2)
    return torch.nn.functional.interpolate(x, size=(2 * n, 2 * n), mode="bilinear")


def test_interpolate_to_symbolic_sizes_is_one_graph():
    """upsample_bilinear2d.vec's C++ kernel takes no symbolic sizes: its Python
    decomposition propagates them (the Python dispatcher, as torch.compile's)."""
    rec = Recorder()
    compiled = fj.compile(upsampled_to_twice, backend=rec, dynamic=True, fullgraph=True)
    for n in (4, 5, 7):
        x = torch.randn(1, 2, n, n)
        torch.testing.assert_close(compiled(x), upsampled_to_twice(x))
    assert len(rec.graphs) == 1
