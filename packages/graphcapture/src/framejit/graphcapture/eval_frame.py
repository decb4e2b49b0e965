"""The frameeval callback: which frames to capture, recompiles, the cache limit, fallbacks."""

from __future__ import annotations

import logging
import sys
import types
import warnings
import weakref

import torch

from framejit import frameeval as fe

from . import dispatch_modes, stack, trace_rules
from .code_keyed import CodeKeyed
from .config import config
from .convert_frame import convert_frame, publish_eager_frame
from .exc import BackendCompilerFailed, ConstraintViolationError, GraphBreakInFullgraph
from .logs import logger
from .recompiles import cache_limit_hit, entry_failures, format_recompile

log = logger("dynamo")


def is_skipped_file(filename: str) -> bool:
    """Frames of code from `filename` run without capture (see trace_rules)."""
    return not trace_rules.is_captured(filename)


class FrameCallback:
    """cb(frame, cache) for frameeval: capture on a miss, with the guards as the cache key."""

    def __init__(self, backend, fullgraph: bool = False, dynamic: bool | None = None):
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self._warned_limit: CodeKeyed[bool] = CodeKeyed()

    def __repr__(self) -> str:
        name = getattr(self.backend, "__name__", type(self.backend).__name__)
        return f"FrameCallback(backend={name}, fullgraph={self.fullgraph}, dynamic={self.dynamic})"

    def __call__(self, frame, cache):
        code = frame.f_code
        if is_skipped_file(code.co_filename):
            if code.co_name != "forward" or not trace_rules.captures_hooked(code.co_filename):
                return fe.SKIP_CODE
            if not _module_has_hooks(frame.f_locals.get("self")):
                return None  # asked again each call: hooks can be added later
        if torch._C._get_tracing_state() is not None:
            # torch.jit.trace is recording this call: it must see the frame's own ops
            return None
        mode = dispatch_modes.eager_mode_active()
        if mode is not None or dispatch_modes.inside_mode_handler(frame):
            log.debug(
                "framejit: %s runs eagerly: %s",
                code.co_name,
                f"torch dispatch mode {mode.__qualname__} is active"
                if mode is not None
                else "called from a torch dispatch mode's handler",
            )
            return None
        entries = cache.entries if len(cache) else []
        if len(entries) >= config.cache_size_limit:
            self._warn_cache_limit(code, entries, frame.f_locals)
            return None
        if not stack.room_to_compile():
            log.debug(
                "framejit: %s called too deep in the stack to compile; eager this call",
                code.co_name,
            )
            return None
        failures = entry_failures(entries, frame.f_locals, self) if entries else []
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
                dynamic=self.dynamic,
            )
        except (GraphBreakInFullgraph, BackendCompilerFailed, ConstraintViolationError):
            raise
        except RecursionError:
            # capture itself ran out of stack (the user's code did not): eager this call,
            # compiled again when called from higher up
            return None
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
            publish_eager_frame(code, f"internal error: {type(e).__name__}: {e}")
            return fe.SKIP_CODE
        if fe.get_cache_limit() <= config.cache_size_limit:
            fe.set_cache_limit(config.cache_size_limit + 1)
        _discard_when_invalidated(code, result.check_fn)
        return fe.GuardedCode(result.check_fn, result.code, result.record, owner=self)

    def _warn_cache_limit(self, code, entries, f_locals) -> None:
        if code in self._warned_limit:
            return
        self._warned_limit[code] = True
        hit = cache_limit_hit(
            code, config.cache_size_limit, entry_failures(entries, f_locals, self)
        )
        logger("recompiles").warning("%s", hit.message, extra={"cache_limit": hit})
        warnings.warn(hit.message, RuntimeWarning, stacklevel=2)


_FORWARD_HOOKS = (
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
)


def _module_has_hooks(module) -> bool:
    if not isinstance(module, torch.nn.Module):
        return False
    return any(getattr(module, name, None) for name in _FORWARD_HOOKS)


def _discard_when_invalidated(code: types.CodeType, check_fn) -> None:
    """The cache entry dies with the objects its guards watch (a dropped model, a freed
    global): frameeval forgets it, so its graphs and their parameters are freed."""
    code_ref = weakref.ref(code)

    # Bound now: the weakref callbacks that call this also fire at interpreter shutdown, after
    # module globals (fe among them) have been cleared.
    def discard(fn, _discard=fe.discard, _finalizing=sys.is_finalizing) -> None:
        target = code_ref()
        if target is not None and not _finalizing():
            _discard(target, fn)

    on_invalidate = getattr(check_fn, "on_invalidate", None)
    if on_invalidate is not None:
        on_invalidate.append(discard)
