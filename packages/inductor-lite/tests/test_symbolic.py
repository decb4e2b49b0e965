"""Kernels over symbolic sizes: a graph captured with SymInt sizes compiles once, and the same
kernels and wrapper serve every size (1-free: the capture specializes 0 and 1), against eager.

Graphs are captured as torch.compile hands them to a backend (the reference front end, tests
only): SymInt placeholders, FakeTensor metas of the capture's ShapeEnv, Python ints for the
sizes among the example inputs."""

from __future__ import annotations

import importlib

import pytest
import torch
import torch.nn.functional as F

from framejit.inductor_lite import compile_fx, cpp_builder

# the module (the package exports the function under the same name)
compile_module = importlib.import_module("framejit.inductor_lite.compile_fx")


class Captured:
    """A graph as a symbolic capture hands it over (dynamic=True), and how to call it for
    other tensors: the user's tensors replace theirs, lifted parameters stay, and each SymInt
    placeholder gets the size it stands for."""

    def __init__(self, fn, *args):
        recorded = {}

        def backend(gm, example_inputs):
            recorded["gm"], recorded["inputs"] = gm, example_inputs
            return gm.forward

        torch._dynamo.reset()
        with torch._dynamo.config.patch(specialize_float=True):
            torch.compile(fn, dynamic=True, backend=backend, fullgraph=True)(*args)
        self.gm = recorded["gm"]
        self.placeholders = self.gm.graph.find_nodes(op="placeholder")
        for node in self.placeholders:
            node.meta["val"] = node.meta["example_value"]
        self.template = list(recorded["inputs"])
        self.user = [
            next(i for i, v in enumerate(self.template) if v is a) for a in args
        ]  # where each user argument sits among the graph's inputs
        self.example_inputs = self.args_for(args)

    def args_for(self, tensors):
        values = list(self.template)
        for position, tensor in zip(self.user, tensors, strict=True):
            values[position] = tensor
        sources = {}
        for node, value in zip(self.placeholders, values, strict=True):
            meta = node.meta["val"]
            if isinstance(meta, torch.Tensor):
                for dims, actual in ((meta.shape, value.shape), (meta.stride(), value.stride())):
                    for dim, size in enumerate(dims):
                        if isinstance(size, torch.SymInt):
                            sources.setdefault(str(size.node.expr), actual[dim])
        for position, node in enumerate(self.placeholders):
            meta = node.meta["val"]
            if isinstance(meta, torch.SymInt):
                expr = meta.node.expr
                values[position] = int(expr) if expr.is_number else sources[str(expr)]
        return values


class Counts:
    """C++ builds (compiled or from the disk cache), parts lowered and eager runs since now."""

    def __init__(self):
        self.start = self.now()

    @staticmethod
    def now():
        s = compile_module.stats
        return (
            cpp_builder.stats.compiles + cpp_builder.stats.disk_hits,
            s.parts_compiled,
            s.eager_runs,
        )

    def since(self):
        return tuple(b - a for a, b in zip(self.start, self.now(), strict=True))


def check_sizes(fn, make_inputs, sizes, *, atol=None, rtol=None, codegen=None):
    """Capture fn at the first size, then run every size: same answer as eager, and nothing
    compiles nor falls back after the first compile."""
    captured = Captured(fn, *make_inputs(sizes[0]))
    compiled = compile_fx(captured.gm, captured.example_inputs, codegen=codegen)
    assert compiled.kernel_count >= 1, compiled.source_code
    counts = Counts()
    tolerance = {} if atol is None else {"atol": atol, "rtol": rtol}
    for size in sizes:
        tensors = make_inputs(size)
        got = compiled(*captured.args_for(tensors))
        torch.testing.assert_close(list(got), list(_as_tuple(fn(*tensors))), **tolerance)
    assert counts.since() == (0, 0, 0), (counts.since(), compiled.source_code)
    return compiled


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


SIZES = [2, 3, 7, 13, 31, 64, 97, 130]  # odd, primes, a vector-width multiple, past it


def test_pointwise_over_symbolic_sizes():
    def fn(x, y):
        return torch.tanh(x) * y + torch.sigmoid(x - 1.5)

    compiled = check_sizes(fn, lambda n: (torch.randn(n, n + 3), torch.randn(n, n + 3)), SIZES)
    assert "ks0" in compiled.kernel_source  # the kernel takes the size, not a constant


def test_broadcasting_over_symbolic_sizes():
    def fn(x, row, col):
        return (x + row) * col - row.exp()

    check_sizes(
        fn, lambda n: (torch.randn(n, 2 * n + 1), torch.randn(2 * n + 1), torch.randn(n, 1)), SIZES
    )


@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_over_symbolic_sizes(dim):
    def fn(x):
        return torch.softmax(x * 0.5, dim), torch.log_softmax(x, dim)

    check_sizes(fn, lambda n: (torch.randn(n + 2, 3 * n),), SIZES)


def test_layer_norm_over_symbolic_rows():
    norm = torch.nn.LayerNorm(48)

    def fn(x):
        return norm(x).relu()

    with torch.no_grad():
        check_sizes(fn, lambda n: (torch.randn(n, 48),), SIZES, atol=1e-5, rtol=1e-5)


def test_layer_norm_over_symbolic_width():
    def fn(x, w, b):
        return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    check_sizes(
        fn,
        lambda n: (torch.randn(5, n), torch.randn(n), torch.randn(n)),
        SIZES,
        atol=1e-5,
        rtol=1e-5,
    )


def test_sum_mean_amax_over_a_symbolic_dim():
    def fn(x):
        return x.sum(1), x.mean(0), x.amax(-1), x.var(1)

    check_sizes(fn, lambda n: (torch.randn(n, 2 * n + 1),), [*SIZES, 1000], atol=1e-4, rtol=1e-4)


def test_views_of_unrealized_values_stay_index_maps():
    def fn(x, y):
        a = (x * 2).transpose(0, 1).unsqueeze(0)  # dims moved and added
        b = (y + 1).unsqueeze(-1).expand(y.shape[0], x.shape[0])  # broadcast
        return (torch.sigmoid(a) + b).permute(0, 2, 1) * 3

    compiled = check_sizes(
        fn, lambda n: (torch.randn(n, n + 3), torch.randn(n + 3)), SIZES, atol=1e-5, rtol=1e-5
    )
    assert compiled.kernel_count == 1, compiled.source_code  # nothing realized in between


def test_matmul_extern_over_symbolic_sizes():
    def fn(a, b, bias):
        return torch.relu(a @ b + bias)

    check_sizes(
        fn,
        lambda n: (torch.randn(n, 16), torch.randn(16, n + 1), torch.randn(n + 1)),
        SIZES,
        atol=1e-4,
        rtol=1e-4,
    )


class Attention(torch.nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.norm = torch.nn.LayerNorm(dim)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y)


def test_attention_block_over_sequence_lengths():
    model = Attention().eval()
    with torch.no_grad():
        check_sizes(
            model,
            lambda n: (torch.randn(2, n, 16),),
            [5, 2, 3, 9, 17, 33, 61],
            atol=1e-5,
            rtol=1e-5,
        )


def test_wrong_sizes_run_eagerly_never_wrong():
    def fn(x, y):
        return x * y + 1

    captured = Captured(fn, torch.randn(4, 6), torch.randn(4, 6))
    compiled = compile_fx(captured.gm, captured.example_inputs)
    x, y = torch.randn(5, 6), torch.randn(5, 6)
    counts = Counts()
    # a size argument that disagrees with the tensors, and a symbol below 2
    args = captured.args_for((x, y))
    bad = [a + 1 if isinstance(a, int) else a for a in args]
    torch.testing.assert_close(compiled(*bad)[0], captured.gm(*bad)[0])
    one = captured.args_for((torch.randn(1, 6), torch.randn(1, 6)))
    torch.testing.assert_close(compiled(*one)[0], captured.gm(*one)[0])
    assert counts.since()[2] == 2  # both ran the graph eagerly


def test_training_over_symbolic_sizes_saves_sizes_for_backward():
    linear = torch.nn.Linear(8, 8)

    def fn(x):
        return torch.softmax(linear(x).tanh(), -1).sum()

    captured = Captured(fn, torch.randn(5, 8, requires_grad=True))
    compiled = compile_fx(captured.gm, captured.example_inputs)
    assert [p.role for p in compiled.parts] == ["forward", "backward"]
    counts = Counts()
    for n in [5, 2, 3, 7, 13, 50]:
        x = torch.randn(n, 8, requires_grad=True)
        reference = x.detach().clone().requires_grad_()
        got = compiled(*captured.args_for([x]))[0]
        got.backward()
        grads = [p.grad.clone() for p in linear.parameters()]
        linear.zero_grad()
        expected = fn(reference)
        expected.backward()
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(x.grad, reference.grad)
        torch.testing.assert_close(grads, [p.grad for p in linear.parameters()])
        linear.zero_grad()
    assert counts.since() == (0, 0, 0)
    # the backward takes the size the forward saved
    backward = compiled.parts[1].fn
    assert "ks0" in backward.wrapper_source, backward.wrapper_source


triton = pytest.importorskip("triton")
TRITON_SIZES = [3, 2, 17]  # the interpreter is slow: few, small sizes


def test_triton_pointwise_and_broadcast_over_symbolic_sizes():
    def fn(x, row):
        return torch.tanh(x) * row + 1

    compiled = check_sizes(
        fn, lambda n: (torch.randn(n, n + 2), torch.randn(n + 2)), TRITON_SIZES, codegen="triton"
    )
    assert "do_not_specialize" in compiled.kernel_source


def test_triton_softmax_and_sum_over_symbolic_rows():
    def fn(x):
        return torch.softmax(x, -1), x.sum(0), x.amax(-1)

    check_sizes(
        fn,
        lambda n: (torch.randn(n, 2 * n + 1),),
        TRITON_SIZES,
        atol=1e-5,
        rtol=1e-5,
        codegen="triton",
    )


def test_size_outputs_are_each_calls_numbers():
    """Sizes the graph returns are computed from each call's sizes, as Python numbers of
    eager's types; the symbols they were traced as never leak out."""

    def fn(x):
        n, m = x.shape
        return x * 2, n * m + 1, (n + m) // 3, n % 4, n > m

    captured = Captured(fn, torch.randn(5, 3))
    compiled = compile_fx(captured.gm, captured.example_inputs)
    for size in SIZES:
        x = torch.randn(size, size % 5 + 2)
        got, want = compiled(*captured.args_for([x])), fn(x)
        torch.testing.assert_close(got[0], want[0])
        assert [type(v) for v in got[1:]] == [type(v) for v in want[1:]]
        assert tuple(got[1:]) == want[1:]
