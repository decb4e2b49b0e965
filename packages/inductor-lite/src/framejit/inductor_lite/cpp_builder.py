"""Compile C++ to a shared object, cache it on disk by content hash, load it with cffi.

The key covers the source, the compiler's identity, the flags, the CPU and the Python and
torch versions.  Files are written to a temporary name and renamed, so concurrent processes
never see half a file; the cache directory is owner-only.  Compiles run on a thread pool, so
several graphs compile in parallel.
"""

from __future__ import annotations

import ctypes.util
import functools
import hashlib
import logging
import os
import platform
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import cffi
import torch

from .codegen.common import GeneratedKernels
from .config import config

log = logging.getLogger("framejit.inductor_lite")

BASE_FLAGS = [
    "-O3",
    "-march=native",
    "-fopenmp",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-fwrapv",
    "-std=c++17",
    "-shared",
    "-fPIC",
    "-w",
]


class CompileError(RuntimeError):
    pass


@dataclass
class Stats:
    compiles: int = 0
    disk_hits: int = 0


stats = Stats()
_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None


@functools.cache
def mvec_available() -> bool:
    return (
        platform.machine() in ("x86_64", "AMD64") and ctypes.util.find_library("mvec") is not None
    )


@functools.cache
def compiler_identity() -> str:
    try:
        result = subprocess.run(
            [config.cxx, "--version"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError) as error:
        raise CompileError(f"C++ compiler {config.cxx!r} not usable: {error}") from error
    return result.stdout.splitlines()[0] if result.stdout else config.cxx


@functools.cache
def cpu_identity() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return hashlib.sha256(line.encode()).hexdigest()[:16]
    except OSError:
        pass
    return platform.processor() or platform.machine()


def link_flags() -> list[str]:
    return (["-lmvec"] if mvec_available() else []) + ["-lm"]


def cache_key(source: str) -> str:
    parts = [
        source,
        compiler_identity(),
        " ".join(BASE_FLAGS + link_flags()),
        cpu_identity(),
        sys.version,
        torch.__version__,
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def cache_dir() -> Path:
    directory = config.cache_dir
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    info = directory.stat()
    if info.st_uid != os.getuid():
        raise CompileError(
            f"cache directory {directory} belongs to another user; set FRAMEJIT_CACHE_DIR"
        )
    if info.st_mode & 0o077:
        os.chmod(directory, 0o700)
    return directory


def build(source: str) -> Path:
    """The shared object for this source: from the cache, or compiled now."""
    directory = cache_dir()
    key = cache_key(source)
    target = directory / f"{key}.so"
    if target.exists():
        with _lock:
            stats.disk_hits += 1
        return target
    fd, cpp_path = tempfile.mkstemp(suffix=".cpp", prefix=f"{key[:16]}-", dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write(source)
    fd, tmp_so = tempfile.mkstemp(suffix=".so.tmp", prefix=f"{key[:16]}-", dir=directory)
    os.close(fd)
    command = [config.cxx, *BASE_FLAGS, cpp_path, "-o", tmp_so, *link_flags()]
    try:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CompileError(f"{' '.join(command)} failed:\n{result.stderr[-4000:]}")
        os.replace(tmp_so, target)
    finally:
        for leftover in (cpp_path, tmp_so):
            if os.path.exists(leftover):
                os.unlink(leftover)
    with _lock:
        stats.compiles += 1
    log.debug("compiled %s", target)
    return target


def _load(generated: GeneratedKernels) -> dict[str, Callable[..., int]]:
    path = build(generated.source)
    ffi = cffi.FFI()
    declarations = []
    for spec in generated.kernels.values():
        params = ", ".join(["uintptr_t"] * len(spec.buffers) + ["int64_t"] * len(spec.sizes))
        params = params or "void"
        declarations.append(f"int {spec.name}({params});")
    ffi.cdef("\n".join(declarations))
    library = ffi.dlopen(str(path))
    kernels = {name: getattr(library, name) for name in generated.kernels}
    kernels["__library__"] = library  # keeps the shared object loaded
    return kernels


def load_async(generated: GeneratedKernels) -> Future[dict[str, Callable[..., int]]]:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(config.compile_threads, thread_name_prefix="fj-cxx")
    return _executor.submit(_load, generated)
