"""Builds and loads the native hit-path helpers (tensor_guards.cpp), once per machine.

``___check_tensors``, ``___check_global_state``, ``___check_hasattr`` and
``___check_no_aliasing`` have C++ bodies.  The extension is compiled with the system C++ compiler against the installed
torch's headers the first time a guard set needs it, and cached on disk under a key
made of the source, the torch build and the interpreter; later processes just load
it.  It is linked without an rpath (torch's own libraries are already loaded when it
is imported), so one build serves every virtual environment with the same torch build.
``python -m framejit.guards.native`` builds it ahead of time.  A file lock keeps
parallel processes from building it twice.

When no compiler is available (or ``FRAMEJIT_GUARDS_NATIVE=0``), ``load()`` returns
None and the guards use the pure-Python bodies, which have the same semantics; a failed
build leaves a ``build.failed`` note next to its target so it is not retried per process.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

log = logging.getLogger("framejit.guards")

MODULE_NAME = "_framejit_tensor_guards"
SOURCE = Path(__file__).with_name("tensor_guards.cpp")

_lock = threading.Lock()
_loaded: ModuleType | None = None
_failed: str | None = None


def cache_dir() -> Path:
    base = os.environ.get("FRAMEJIT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "framejit"
    )
    return Path(base) / "guards"


def _compile_command(output: Path) -> list[str]:
    import torch
    from torch.utils.cpp_extension import include_paths, library_paths

    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    cmd = [cxx, "-O2", "-shared", "-fPIC", "-std=c++20", f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
    cmd += [f"-I{p}" for p in [*include_paths(), sysconfig.get_paths()["include"]]]
    cmd += [str(SOURCE), "-o", str(output)]
    # No rpath: torch has loaded these libraries (by soname) before this module is
    # imported, so the same build serves every environment with this torch build.
    cmd += [f"-L{lib}" for lib in library_paths()]
    cmd += ["-lc10", "-ltorch_cpu", "-ltorch_python"]
    return cmd


def _build_key() -> str:
    import torch

    h = hashlib.sha256(SOURCE.read_bytes())
    h.update(f"{torch.__version__}|{torch.version.git_version}|{sys.version}".encode())
    return h.hexdigest()[:20]


def _import_from(path: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(path))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _build(target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / "build.lock", "w") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)  # another process may be building it now
        try:
            if target.exists():
                return
            log.info("building the native tensor guard helper (one-off): %s", target)
            with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
                out = Path(tmp) / target.name
                proc = subprocess.run(_compile_command(out), capture_output=True, text=True)
                if proc.returncode != 0:
                    raise RuntimeError(f"compiler failed:\n{proc.stderr[-4000:]}")
                os.replace(out, target)
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def load() -> ModuleType | None:
    """The native module, building it if needed; None when unavailable (reason logged once)."""
    global _loaded, _failed
    if _loaded is not None or _failed is not None:
        return _loaded
    with _lock:
        if _loaded is not None or _failed is not None:
            return _loaded
        if os.environ.get("FRAMEJIT_GUARDS_NATIVE", "1") == "0":
            _failed = "disabled by FRAMEJIT_GUARDS_NATIVE=0"
            return None
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        target = cache_dir() / _build_key() / f"{MODULE_NAME}{suffix}"
        failed_marker = target.with_name("build.failed")
        if failed_marker.exists():  # a build with this key failed before: do not retry each run
            _failed = failed_marker.read_text(errors="replace")[-2000:]
            log.info("native tensor guards unavailable (earlier build failed), using pure Python")
            return None
        try:
            if not target.exists():
                _build(target)
            _loaded = _import_from(target)
        except Exception as e:  # no compiler, no headers, ...: the Python path is equivalent
            _failed = f"{type(e).__name__}: {e}"
            log.warning("native tensor guards unavailable, using pure Python: %s", _failed)
            with contextlib.suppress(OSError):
                target.unlink(missing_ok=True)
                failed_marker.parent.mkdir(parents=True, exist_ok=True)
                failed_marker.write_text(_failed)
        return _loaded


def helper(name: str, fallback: Any) -> Any:
    """The native function ``name`` when the module loads, else the Python ``fallback``."""
    module = load()
    return fallback if module is None else getattr(module, name)


def unavailable_reason() -> str | None:
    """Why ``load()`` returned None (None while loaded or not tried yet)."""
    return _failed
