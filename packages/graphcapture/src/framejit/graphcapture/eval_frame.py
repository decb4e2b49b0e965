"""The frameeval callback: which frames to capture, recompiles, the cache limit, fallbacks."""

from __future__ import annotations

import logging
import os
import sysconfig
import types
import warnings

import torch

from framejit import frameeval as fe

from .config import config
from .convert_frame import convert_frame
from .exc import BackendCompilerFailed, GraphBreakInFullgraph
from .logs import logger
from .recompiles import cache_limit_message, entry_failures, format_recompile

log = logger("dynamo")


def _dir_of(module) -> str:
    return os.path.dirname(os.path.abspath(module.__file__))


def _skip_dirs() -> tuple[str, ...]:
    import framejit
    import framejit.frameeval
    import framejit.guards

    dirs = [
        _dir_of(torch),
        os.path.dirname(_dir_of(framejit.frameeval)),  # every framejit package lives beside it
        # ... when installed; in a checkout each package is its own portion of the namespace
        # (a backend's runtime helpers, e.g. inductor-lite's eager fallback, are not user code)
        *(os.path.abspath(p) for p in framejit.__path__),
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        _dir_of(framejit.guards),
        sysconfig.get_paths()["stdlib"],
    ]
    for name in ("_pytest", "pluggy", "bytecode", "numpy", "sympy", "typing_extensions"):
        try:
            dirs.append(_dir_of(__import__(name)))
        except Exception:
            pass
    return tuple(os.path.join(d, "") for d in dirs)


_SKIP_DIRS: tuple[str, ...] | None = None
# torch's own nn.Module classes are captured like user modules (their forward is the frame
# `compile(nn.Sequential(...))` runs); Module.__call__'s machinery is not.
_CAPTURED_TORCH_DIR = os.path.join(_dir_of(torch), "nn", "modules", "")
_MODULE_MACHINERY = os.path.join(_CAPTURED_TORCH_DIR, "module.py")


def is_skipped_file(filename: str) -> bool:
    global _SKIP_DIRS
    if _SKIP_DIRS is None:
        _SKIP_DIRS = _skip_dirs()
    if filename[:1] == "<":
        return filename.startswith(("<frozen", "<eval_with_key>"))
    path = os.path.abspath(filename)
    if path.startswith(_CAPTURED_TORCH_DIR) and path != _MODULE_MACHINERY:
        return False
    return path.startswith(_SKIP_DIRS)


class FrameCallback:
    """cb(frame, cache) for frameeval: capture on a miss, with the guards as the cache key."""

    def __init__(self, backend, fullgraph: bool = False):
        self.backend = backend
        self.fullgraph = fullgraph
        self._warned_limit: set[types.CodeType] = set()

    def __call__(self, frame, cache):
        code = frame.f_code
        if is_skipped_file(code.co_filename):
            return fe.SKIP_CODE
        entries = cache.entries if len(cache) else []
        if len(entries) >= config.cache_size_limit:
            self._warn_cache_limit(code, entries, frame.f_locals)
            return None
        failures = entry_failures(entries, frame.f_locals) if entries else []
        if failures:
            logger("recompiles").debug("%s", format_recompile(code, failures))
        try:
            result = convert_frame(
                code,
                frame.f_locals,
                frame.f_globals,
                frame.f_builtins,
                frame.closure,
                backend=self.backend,
                fullgraph=self.fullgraph,
                is_recompile=bool(entries),
                recompile_reasons=[f[0] for f in failures if f],
                recompile_failures=failures,
            )
        except (GraphBreakInFullgraph, BackendCompilerFailed):
            raise
        except Exception as e:
            if config.raise_internal_errors:
                raise
            log.warning(
                "framejit: internal error while capturing %s (%s:%s); running it eagerly: %s: %s",
                code.co_name,
                code.co_filename,
                code.co_firstlineno,
                type(e).__name__,
                e,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            return fe.SKIP_CODE
        if fe.get_cache_limit() <= config.cache_size_limit:
            fe.set_cache_limit(config.cache_size_limit + 1)
        return fe.GuardedCode(result.check_fn, result.code, result.record)

    def _warn_cache_limit(self, code, entries, f_locals) -> None:
        if code in self._warned_limit:
            return
        self._warned_limit.add(code)
        message = cache_limit_message(
            code, config.cache_size_limit, entry_failures(entries, f_locals)
        )
        logger("recompiles").warning("%s", message)
        warnings.warn(message, RuntimeWarning, stacklevel=2)
