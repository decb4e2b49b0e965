"""Builds and loads the native hit-path helpers (tensor_guards.cpp), once per machine.

``___check_tensors``, ``___check_global_state``, ``___check_hasattr`` and
``___check_no_aliasing`` have C++ bodies.  The extension is compiled with the system C++
compiler against the installed torch's headers and cached on disk under a key made of the
source, the torch build and the interpreter; later processes just load it.  It is linked
without an rpath (torch's own libraries are already loaded when it is imported), so one
build serves every virtual environment with the same torch build.

Nothing on a user's call path waits for the compiler: ``load()`` returns the module when
it is built, and otherwise starts the build in a detached background process and returns
None, so guard sets compiled meanwhile use the pure-Python bodies (same semantics); guard
sets compiled once the build has landed get the native ones.  ``load(wait=True)`` (and
``python -m framejit.guards.native``, to build ahead of time, e.g. at install) block until
it is ready.  Builds are safe across processes: the builder holds a file lock for its whole
run (a second process sees the lock and does not start another), writes to a private
temporary file and renames it into place, so a reader sees no file or a whole one.

When no compiler is available (or ``FRAMEJIT_GUARDS_NATIVE=0``), ``load()`` returns
None and the guards use the pure-Python bodies; a failed build leaves a ``build.failed``
note next to its target so it is not retried per process.
"""

from __future__ import annotations

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


def _compile_command() -> list[str]:
    """The compiler command line, without its ``-o <output>``."""
    import torch

    # What torch.utils.cpp_extension's include_paths()/library_paths() give for a CPU build,
    # without importing it (over a second: this runs on the first compile's path).
    root = Path(torch.__file__).resolve().parent
    include_paths = [root / "include", root / "include" / "torch" / "csrc" / "api" / "include"]
    library_paths = [root / "lib"]
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or "c++"
    abi = int(torch._C._GLIBCXX_USE_CXX11_ABI)
    cmd = [cxx, "-O2", "-shared", "-fPIC", "-std=c++20", f"-D_GLIBCXX_USE_CXX11_ABI={abi}"]
    cmd += [f"-I{p}" for p in [*include_paths, sysconfig.get_paths()["include"]]]
    cmd += [str(SOURCE)]
    # No rpath: torch has loaded these libraries (by soname) before this module is
    # imported, so the same build serves every environment with this torch build.
    cmd += [f"-L{lib}" for lib in library_paths]
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


# Run by the detached builder process (stdlib only, no torch import): compile to a private
# file and rename it into place; on failure leave the note.  The lock fd is inherited.
_BUILDER = """
import os, subprocess, sys
cmd, tmp, target, failed = sys.argv[1:-3], sys.argv[-3], sys.argv[-2], sys.argv[-1]
try:
    proc = subprocess.run(cmd + ["-o", tmp], capture_output=True, text=True)
    error = None if proc.returncode == 0 else "compiler failed:" + chr(10) + proc.stderr[-4000:]
except OSError as e:
    error = "compiler not runnable: " + str(e)
if error is None:
    os.replace(tmp, target)
else:
    with open(failed, "w") as f:
        f.write("RuntimeError: " + error)
    if os.path.exists(tmp):
        os.unlink(tmp)
"""


class _Build:
    """This process's view of the build of one target (at most one spawn per process)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.failed_marker = target.with_name("build.failed")
        self.lock_path = target.with_name("build.lock")
        self.process: subprocess.Popen | None = None

    def done(self) -> bool:
        return self.target.exists() or self.failed_marker.exists()

    def start(self) -> None:
        """Spawn the builder unless another process is building (it holds the lock)."""
        if self.process is not None or self.done():
            return
        self.target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # someone else is building it now; load() will find the result
            if self.done():  # finished between our check and the lock
                return
            tmp = self.target.with_name(f".{self.target.name}.{os.getpid()}.tmp")
            cmd = _compile_command()
            log.info("building the native guard helper in the background: %s", self.target)
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _BUILDER,
                    *cmd,
                    str(tmp),
                    str(self.target),
                    str(self.failed_marker),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(fd,),  # the builder holds the lock until it exits
                start_new_session=True,  # and finishes even if this process exits first
            )
        finally:
            os.close(fd)  # the lock stays held through the builder's copy of the fd

    def wait(self) -> None:
        if self.process is not None:
            self.process.wait()
            return
        if self.done() or not self.lock_path.exists():
            return
        with open(self.lock_path, "a") as lock_file:  # another process builds: wait for it
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            fcntl.flock(lock_file, fcntl.LOCK_UN)


_build: _Build | None = None


def _target() -> Path:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return cache_dir() / _build_key() / f"{MODULE_NAME}{suffix}"


def load(wait: bool = False) -> ModuleType | None:
    """The native module when it is built, else None (the Python bodies are used).

    A missing build is started in the background; ``wait=True`` blocks until it ends.
    """
    global _loaded, _failed, _build
    if _loaded is not None or _failed is not None:
        return _loaded
    with _lock:
        if _loaded is not None or _failed is not None:
            return _loaded
        if os.environ.get("FRAMEJIT_GUARDS_NATIVE", "1") == "0":
            _failed = "disabled by FRAMEJIT_GUARDS_NATIVE=0"
            return None
        try:
            if _build is None:
                _build = _Build(_target())
            build = _build
            if not build.done():
                build.start()
                if wait:
                    build.wait()
            if build.failed_marker.exists():  # this key failed before: do not retry each run
                _failed = build.failed_marker.read_text(errors="replace")[-2000:]
                log.info("native tensor guards unavailable (build failed), using pure Python")
                return None
            if not build.target.exists():
                if build.process is not None and build.process.poll() not in (None, 0):
                    _failed = f"the builder exited with status {build.process.returncode}"
                return None  # still building: the Python bodies meanwhile
            _loaded = _import_from(build.target)
        except Exception as e:  # no compiler, no headers, ...: the Python path is equivalent
            _failed = f"{type(e).__name__}: {e}"
            log.warning("native tensor guards unavailable, using pure Python: %s", _failed)
        return _loaded


def building() -> bool:
    """Whether the helper is still being built (load() returns None meanwhile)."""
    return _loaded is None and _failed is None and _build is not None and not _build.done()


def helper(name: str, fallback: Any) -> Any:
    """The native function ``name`` when the module loads, else the Python ``fallback``."""
    module = load()
    return fallback if module is None else getattr(module, name)


def unavailable_reason() -> str | None:
    """Why ``load()`` returned None (None while loaded or not tried yet)."""
    return _failed
