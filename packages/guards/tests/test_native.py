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
    print(native.load() is None, native.unavailable_reason())
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
    module = native.load()
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
