"""Loading and launching generated Triton kernels.

The kernel module goes to the same owner-only disk cache as the C++ objects (written to a
temporary name and renamed, keyed by content) and is imported from there, so Triton's JIT
can read the source.  Kernels for CPU tensors are defined under TRITON_INTERPRET=1: Triton
reads that switch when a `@triton.jit` function is *defined*, so framejit sets it only
while importing its own kernel modules (whatever imported triton before is unaffected).

Each kernel gets a `Launcher`: the wrapper passes the tensors and a grid function of
XBLOCK; the launcher picks the launch config (a heuristic per kernel shape, or, with
`FRAMEJIT_TRITON_AUTOTUNE=1`, the fastest of a few configs on the first call, cached on disk
per shape signature) and returns nonzero when a kernel saw an out-of-range index.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from ..config import config
from .common import GeneratedKernels, KernelSpec

log = logging.getLogger("framejit.inductor_lite")
_lock = threading.Lock()
_modules: dict[str, Any] = {}


@dataclass(frozen=True)
class LaunchConfig:
    XBLOCK: int
    RBLOCK: int | None = None
    num_warps: int = 4


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _xnumel(meta: dict[str, Any]) -> int:
    """Rows of the launch at the example sizes (symbolic sizes: the config is a heuristic)."""
    return meta.get("hint_xnumel", meta["xnumel"])


def heuristic(meta: dict[str, Any], interpret: bool) -> LaunchConfig:
    """One config from the kernel's shape.  Interpreted, blocks are as large as allowed:
    the interpreter runs programs one after another, so fewer is faster."""
    xnumel, rnumel = max(_xnumel(meta), 1), meta["rnumel"]
    tile = 16384 if interpret else 4096
    if not meta["two_d"]:
        xblock = min(_pow2(xnumel), tile if interpret else 1024)
        return LaunchConfig(xblock, None, 4 if xblock >= 512 else max(1, xblock // 128))
    if meta["persistent"]:
        rblock = _pow2(max(rnumel, 1))
    else:
        rblock = min(_pow2(rnumel), 1024 if interpret else 2048)
    xblock = max(1, min(_pow2(xnumel), tile // rblock, 64))
    warps = max(1, min(16, (xblock * rblock) // 256))
    return LaunchConfig(xblock, rblock, _pow2(warps))


def candidates(meta: dict[str, Any], interpret: bool) -> list[LaunchConfig]:
    """A few configs around the heuristic one, for autotuning."""
    base = heuristic(meta, interpret)
    found = [base]
    for factor in (2, 4):
        for xblock in (base.XBLOCK // factor, base.XBLOCK * factor):
            if 1 <= xblock <= _pow2(max(_xnumel(meta), 1)):
                found.append(LaunchConfig(xblock, base.RBLOCK, base.num_warps))
    for warps in (base.num_warps // 2, base.num_warps * 2):
        if 1 <= warps <= 16:
            found.append(LaunchConfig(base.XBLOCK, base.RBLOCK, warps))
    if base.RBLOCK and not meta["persistent"]:
        found.append(LaunchConfig(base.XBLOCK, max(base.RBLOCK // 2, 1), base.num_warps))
    return list(dict.fromkeys(found))


def _signature(tensors: tuple[Any, ...]) -> str:
    return ";".join(
        f"{tuple(t.shape)}:{t.stride()}:{t.dtype}:{t.device.type}"
        if isinstance(t, torch.Tensor)
        else repr(t)  # a size argument
        for t in tensors
    )


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f"{path.name}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class Launcher:
    def __init__(self, fn: Any, spec: KernelSpec, key: str, interpret: bool) -> None:
        self.fn = fn
        self.spec = spec
        self.key = key
        self.interpret = interpret
        self.config: LaunchConfig | None = None
        self.tuned: dict[str, float] = {}  # config -> seconds, when autotuned
        self.broken = False
        self.failure = ""

    def _launch(self, chosen: LaunchConfig, tensors: tuple[Any, ...], grid: Callable) -> int:
        size = grid(chosen.XBLOCK)
        if size[0] == 0:
            return 0
        args = list(tensors)
        err = None
        if self.spec.checks_bounds:
            device = tensors[0].device if tensors else "cpu"
            err = torch.zeros(1, dtype=torch.int32, device=device)
            args.append(err)
        kwargs: dict[str, Any] = {"XBLOCK": chosen.XBLOCK}
        if chosen.RBLOCK is not None:
            kwargs["RBLOCK"] = chosen.RBLOCK
        if self.interpret:
            import numpy as np

            with np.errstate(all="ignore"):  # masked-off lanes compute on zeros
                self.fn[size](*args, **kwargs)
        else:
            self.fn[size](*args, num_warps=chosen.num_warps, **kwargs)
        return int(err.item()) if err is not None else 0

    def __call__(self, *tensors: Any, grid: Callable[[int], tuple[int, ...]]) -> int:
        """0 when the kernel ran; nonzero (reason in `failure`) when the graph must run
        eagerly instead: an out-of-range index, or a kernel Triton could not compile/run."""
        if self.broken:
            return 1
        try:
            chosen = self.config
            if chosen is None:
                chosen = self.config = self._choose(tensors, grid)
            flagged = self._launch(chosen, tensors, grid)
        except Exception as error:
            if config.strict:
                raise
            self.broken = True
            self.failure = f"Triton kernel {self.spec.name} failed: {type(error).__name__}: {error}"
            log.warning("inductor-lite: %s; the graph runs eagerly from now on", self.failure)
            return 1
        self.failure = "an index was out of range"
        return flagged

    def _choose(self, tensors: tuple[Any, ...], grid: Callable) -> LaunchConfig:
        meta = self.spec.launch
        options = candidates(meta, self.interpret)
        if not config.triton_autotune or len(options) == 1:
            return options[0]
        from ..cpp_builder import cache_dir

        signature = hashlib.sha256(f"{self.key}|{_signature(tensors)}".encode()).hexdigest()
        path = cache_dir() / f"{signature}.tune.json"
        if path.exists():
            with contextlib.suppress(OSError, ValueError, TypeError):
                return LaunchConfig(**json.loads(path.read_text()))
        timings = {option: self._time(option, tensors, grid) for option in options}
        best = min(timings, key=timings.__getitem__)
        self.tuned = {str(asdict(c)): t for c, t in timings.items()}
        _atomic_write(path, json.dumps(asdict(best)))
        log.debug("inductor-lite: autotuned %s: %s", self.spec.name, self.tuned)
        return best

    def _time(self, option: LaunchConfig, tensors: tuple[Any, ...], grid: Callable) -> float:
        cuda = bool(tensors) and tensors[0].device.type == "cuda"
        self._launch(option, tensors, grid)  # compile, warm up
        best = float("inf")
        for _ in range(3):
            if cuda:
                torch.cuda.synchronize()
            start = time.perf_counter()
            self._launch(option, tensors, grid)
            if cuda:
                torch.cuda.synchronize()
            best = min(best, time.perf_counter() - start)
        return best


@contextlib.contextmanager
def _interpreting(on: bool) -> Iterator[None]:
    if not on:
        yield
        return
    previous = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = previous


def load_module(source: str, interpret: bool) -> Any:
    import triton

    from ..cpp_builder import cache_dir

    key = hashlib.sha256(f"{source}\0{triton.__version__}\0{interpret}".encode()).hexdigest()
    with _lock:
        module = _modules.get(key)
        if module is not None:
            return key, module
        path = cache_dir() / f"{key}.triton.py"
        if not path.exists():
            _atomic_write(path, source)
        spec = importlib.util.spec_from_file_location(f"framejit_triton_{key[:20]}", path)
        module = importlib.util.module_from_spec(spec)
        with _interpreting(interpret):
            spec.loader.exec_module(module)
        _modules[key] = module
    return key, module


def _load(generated: GeneratedKernels, interpret: bool) -> dict[str, Any]:
    key, module = load_module(generated.source, interpret)
    kernels: dict[str, Any] = {}
    for name, spec in generated.kernels.items():
        fn = getattr(module, name)
        is_interpreted = type(fn).__name__ == "InterpretedFunction"
        if is_interpreted != interpret:
            raise RuntimeError(
                "Triton kernels were defined "
                + ("interpreted" if is_interpreted else "compiled")
                + " but the tensors need the other (is triton.knobs.runtime.interpret set?)"
            )
        kernels[name] = Launcher(fn, spec, f"{key}:{name}", interpret)
    return kernels


def load_async(generated: GeneratedKernels, device: str = "cpu") -> Future[dict[str, Any]]:
    """Loads now (importing is quick; Triton compiles each kernel on its first launch) and
    hands back a finished future, the interface the C++ loader has."""
    future: Future[dict[str, Any]] = Future()
    try:
        future.set_result(_load(generated, interpret=device != "cuda"))
    except Exception as error:  # reported where the future is read
        future.set_exception(error)
    return future
