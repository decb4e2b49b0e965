"""The disk cache (a second process compiles nothing, owner-only directory, atomic files),
the public API's errors, whole-graph and per-op fallbacks, and the backend entry point."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.fx

from framejit.inductor_lite import compile_fx

SCRIPT = textwrap.dedent(
    """
    import torch, torch.fx
    from framejit.inductor_lite import compile_fx
    from framejit.inductor_lite import cpp_builder

    def fn(x, y):
        return (torch.tanh(x) * y + 1).softmax(-1), (x - y).abs().amax()

    x, y = torch.randn(7, 13), torch.randn(13)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x, y])
    torch.testing.assert_close(compiled(x, y), fn(x, y))
    print("COMPILES", cpp_builder.stats.compiles, "HITS", cpp_builder.stats.disk_hits)
    """
)


def _run(cache: Path) -> str:
    env = dict(os.environ, FRAMEJIT_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join(sys.path))
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


def test_second_process_compiles_nothing(tmp_path):
    cache = tmp_path / "cache"
    assert _run(cache) == "COMPILES 1 HITS 0"
    assert _run(cache) == "COMPILES 0 HITS 1"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    names = [p.name for p in cache.iterdir()]
    assert len(names) == 1 and names[0].endswith(".so"), names  # no temporary files left


def test_triton_codegen_without_triton_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # `import triton` raises ImportError
    gm = torch.fx.symbolic_trace(lambda x: x + 1)
    with pytest.raises(NotImplementedError, match=r"framejit-inductor-lite\[gpu\]"):
        compile_fx(gm, [torch.randn(3)], codegen="triton")
    # the C++ path never needs triton
    torch.testing.assert_close(compile_fx(gm, [torch.randn(3)])(torch.ones(3)), torch.ones(3) + 1)


def test_bad_arguments_have_clear_errors():
    with pytest.raises(ValueError, match="codegen must be one of"):
        compile_fx(torch.fx.symbolic_trace(lambda x: x + 1), [torch.randn(3)], codegen="cuda")
    with pytest.raises(TypeError, match="symbolic_trace"):
        compile_fx(lambda x: x + 1, [torch.randn(3)])


def test_unlowered_ops_run_in_aten(check):
    def fn(x):
        y = torch.cumsum(x * 2, 0)
        values, indices = torch.sort(y, dim=1)
        return values + 1, indices, torch.matmul(x, x.t()).relu(), torch.topk(x, 2).values * 2

    compiled, _, _ = check(fn, [torch.randn(5, 6)], lowered=False)
    assert compiled.kernel_count >= 1
    assert any("cumsum" in r for r in compiled.fallback_reasons)


def test_integer_division_stays_in_aten(check):
    def fn(a, b):
        return a // b, a % b, torch.div(a, b, rounding_mode="floor")

    a, b = torch.randint(-9, 9, (6,)), torch.tensor([1, -2, 3, -4, 5, 7])
    compiled, _, _ = check(fn, [a, b], lowered=False)
    with pytest.raises(RuntimeError):
        fn(a, torch.zeros(6, dtype=torch.int64))
    with pytest.raises(RuntimeError):
        compiled(a, torch.zeros(6, dtype=torch.int64))


def test_mutating_graph_is_functionalized_and_written_back_once():
    def fn(x):
        x.add_(1)
        return x * 2

    x = torch.randn(4)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), [x.clone()])
    assert compiled.kernel_count >= 1 and not compiled.fallback_reasons
    a, b = x.clone(), x.clone()
    for _ in range(3):
        torch.testing.assert_close(compiled(a), fn(b))
        torch.testing.assert_close(a, b)


def test_fake_tensor_example_inputs(check):
    from torch._subclasses.fake_tensor import FakeTensorMode

    def fn(x, y):
        return (x @ y).softmax(-1) * 2

    with FakeTensorMode() as mode:
        fake = [torch.empty(4, 5), torch.empty(5, 3)]
    assert all(isinstance(t, torch.Tensor) and t.fake_mode is mode for t in fake)
    compiled = compile_fx(torch.fx.symbolic_trace(fn), fake)
    real = [torch.randn(4, 5), torch.randn(5, 3)]
    torch.testing.assert_close(compiled(*real), fn(*real))
    assert compiled.kernel_count == 1


def test_backend_entry_point_is_declared():
    from importlib.metadata import PackageNotFoundError, entry_points, version

    try:
        version("framejit-inductor-lite")
    except PackageNotFoundError:
        pyproject = Path(__file__).parents[1] / "pyproject.toml"
        assert 'inductor-lite = "framejit.inductor_lite:compile_fx"' in pyproject.read_text()
        return
    found = {e.name: e for e in entry_points(group="framejit.backends")}
    assert found["inductor-lite"].load() is compile_fx
