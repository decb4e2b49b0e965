"""The build: unsupported interpreters are refused, and a checkout never runs a stale build."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from framejit.frameeval import _ffibuild, _native

CHECKOUT_PACKAGE = Path(__file__).resolve().parents[1] / "src" / "framejit" / "frameeval"


@pytest.mark.parametrize("version", [(3, 10), (3, 14), (3, 15)])
def test_unsupported_versions_are_refused_with_a_clear_message(version):
    with pytest.raises(
        _ffibuild.UnsupportedPython, match=r"supports CPython 3\.11, 3\.12 and 3\.13 only"
    ):
        _ffibuild.check_supported(version)


def test_supported_version_is_accepted():
    _ffibuild.check_supported((3, 11))
    _ffibuild.check_supported(tuple(sys.version_info[:2]))


def test_free_threaded_python_is_refused_with_a_clear_message(monkeypatch):
    real = _ffibuild.sysconfig.get_config_var
    monkeypatch.setattr(
        _ffibuild.sysconfig,
        "get_config_var",
        lambda name: 1 if name == "Py_GIL_DISABLED" else real(name),
    )
    with pytest.raises(_ffibuild.UnsupportedPython, match=r"free-threaded CPython \(3\.13t"):
        _ffibuild.check_supported((3, 13))


def import_in_subprocess(src: Path, **env):
    inherited = {k: v for k, v in os.environ.items() if k != _native.NO_REBUILD_ENV}
    code = "from framejit import frameeval as fe; from framejit.frameeval import _native; print(fe._api._C.SOURCE_SHA256)"
    return subprocess.run(
        [sys.executable, "-c", code],
        env={**inherited, "PYTHONPATH": str(src), **env},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=src,
    )


def test_stale_extension_in_a_checkout_is_refused_or_rebuilt(tmp_path):
    package = tmp_path / "src" / "framejit" / "frameeval"
    shutil.copytree(
        CHECKOUT_PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "*.partial")
    )
    src = tmp_path / "src"
    first = import_in_subprocess(src)  # builds (or reuses) the extension for this interpreter
    assert first.returncode == 0, first.stderr

    source = package / "_eval_frame.c"
    source.write_text(source.read_text() + "\n/* edited after the build */\n")
    refused = import_in_subprocess(src, FRAMEJIT_FRAMEEVAL_NO_REBUILD="1")
    assert refused.returncode != 0
    assert "is stale" in refused.stderr and "_ffibuild" in refused.stderr

    rebuilt = import_in_subprocess(src)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "rebuilding" in rebuilt.stderr
    new_hash = rebuilt.stdout.strip()
    assert new_hash != first.stdout.strip()

    again = import_in_subprocess(src, FRAMEJIT_FRAMEEVAL_NO_REBUILD="1")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == new_hash
    assert "rebuilding" not in again.stderr
