"""The native helper: builds or falls back to pure Python, never breaks a guard set."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from framejit.guards import AttrSource, Guard, GuardKind, LocalSource, compile_guards, native

PROBE = textwrap.dedent(
    """
    import torch
    from framejit.guards import Guard, GuardKind, LocalSource, compile_guards, native
    t = torch.randn(3)
    fn = compile_guards([Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, t)], {})
    assert fn({"a": t}) and not fn({"a": t.double()})
    print(native.load(wait=True) is None, native.unavailable_reason())
    """
)


def _probe(tmp_path, **env):
    full_env = {**os.environ, "FRAMEJIT_CACHE_DIR": str(tmp_path), **env}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=full_env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_failed_build_falls_back_to_python_and_is_not_retried(tmp_path):
    first = _probe(tmp_path, CXX="/bin/false")
    assert first.startswith("True RuntimeError: compiler failed")
    assert list(tmp_path.rglob("build.failed"))
    second = _probe(tmp_path, CXX="/bin/false")
    assert second.startswith("True ")


def test_disabled_by_environment(tmp_path):
    assert (
        _probe(tmp_path, FRAMEJIT_GUARDS_NATIVE="0") == "True disabled by FRAMEJIT_GUARDS_NATIVE=0"
    )


def test_native_objects_in_the_closure():
    module = native.load(wait=True)
    if module is None:
        pytest.fail(f"native helper did not build: {native.unavailable_reason()}")
    t = torch.randn(2)
    fn = compile_guards([Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, t)], {})
    assert isinstance(fn.closure_vars["___check_tensors"].__self__, module.TensorGuards)
    assert module.check_no_aliasing(*[object() for _ in range(40)])
    objs = [object() for _ in range(40)]
    assert not module.check_no_aliasing(*objs, objs[7])


def test_non_ascii_identifier_is_not_normalised():
    class Obj:
        pass

    o = Obj()
    # "ﬁle" NFKC-normalises to "file" when written as an identifier: o.ﬁle would set o.file
    setattr(o, "\ufb01le", 1)  # noqa: B010
    src = AttrSource(LocalSource("o"), "\ufb01le")
    assert src.name() == "getattr(L['o'], 'ﬁle')"
    fn = compile_guards([Guard(src, GuardKind.EQUALS_MATCH, 1)], {})
    assert fn({"o": o})


def test_nested_tensor_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nested tensors are a prototype"
        nt = torch.nested.nested_tensor([torch.randn(2), torch.randn(3)])
    with pytest.raises(TypeError, match="nested tensors"):
        Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, nt)


FIRST_COMPILE = textwrap.dedent(
    """
    import time, torch
    from framejit.guards import Guard, GuardKind, LocalSource, compile_guards, native
    t = torch.randn(3)
    start = time.perf_counter()
    fn = compile_guards([Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, t)], {})
    elapsed = time.perf_counter() - start
    first_is_python = type(fn.closure_vars["___check_tensors"].__self__).__name__ == "PyTensorGuards"
    assert fn({"a": t}) and not fn({"a": t.double()})  # right while the helper builds
    building = native.building()
    module = native.load(wait=True)
    fn2 = compile_guards([Guard(LocalSource("a"), GuardKind.TENSOR_MATCH, t)], {})
    swapped = isinstance(fn2.closure_vars["___check_tensors"].__self__, module.TensorGuards)
    assert fn2({"a": t}) and not fn2({"a": t.double()})
    print(first_is_python, building, swapped, f"{elapsed:.3f}")
    """
)


def _run(code, cache_dir, **env):
    full_env = {**os.environ, "FRAMEJIT_CACHE_DIR": str(cache_dir), **env}
    return subprocess.Popen(
        [sys.executable, "-c", code], env=full_env, stdout=subprocess.PIPE, text=True
    )


def test_first_compile_with_an_empty_cache_never_waits_for_the_compiler(tmp_path):
    """The guard set compiled while the helper builds uses the Python bodies (no g++ on the
    call path); once the background build lands, new guard sets use the native ones."""
    proc = _run(FIRST_COMPILE, tmp_path)
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0
    first_is_python, building, swapped, _elapsed = out.split()
    assert (first_is_python, building, swapped) == ("True", "True", "True")


def test_two_processes_building_at_once_do_not_race(tmp_path):
    procs = [_run(FIRST_COMPILE, tmp_path) for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert all(out.split()[2] == "True" for out in outs)  # both loaded the one build
    built = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix == ".so"]
    assert len(built) == 1
    assert not list(tmp_path.rglob("*.tmp")) and not list(tmp_path.rglob("build.failed"))
