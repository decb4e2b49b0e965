"""The capture layer's knobs: typed, read from the environment once, changeable at runtime."""

from __future__ import annotations

import os
from dataclasses import dataclass


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def _env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value not in ("", "0", "false", "False")


@dataclass
class Config:
    # compiled entries kept per code object before the frame runs eagerly for good
    cache_size_limit: int = _env_int("FRAMEJIT_CACHE_SIZE_LIMIT", 8)
    # re-raise a backend's exception instead of falling back to eager
    raise_backend_errors: bool = _env_flag("FRAMEJIT_RAISE_BACKEND_ERRORS", False)
    # re-raise internal tracing errors instead of falling back to eager (for debugging framejit)
    raise_internal_errors: bool = _env_flag("FRAMEJIT_RAISE_INTERNAL_ERRORS", False)
    # deepest chain of inlined user calls before the call becomes a graph break
    max_inline_depth: int = _env_int("FRAMEJIT_MAX_INLINE_DEPTH", 32)
    # Python frames that must be left under the recursion limit to compile a frame (else it
    # runs eagerly this call) and to inline one more call (else a graph break): stack.py
    compile_stack_room: int = _env_int("FRAMEJIT_COMPILE_STACK_ROOM", 250)
    inline_stack_room: int = _env_int("FRAMEJIT_INLINE_STACK_ROOM", 150)
    # instructions traced per frame (unrolled loops included) before giving up
    max_traced_instructions: int = _env_int("FRAMEJIT_MAX_TRACED_INSTRUCTIONS", 200_000)
    # items one traced generator may yield before it is taken for an infinite one
    max_generator_yields: int = _env_int("FRAMEJIT_MAX_GENERATOR_YIELDS", 10_000)
    # input sources traced as symbols from the first compile, whatever `dynamic=` says:
    # comma-separated names or regexes (re.match) of sources, each with an optional `:dim`
    # (torch.compiler.config.dynamic_sources' syntax): "L['x'], L['y']:0, L\['h.*'\]"
    dynamic_sources: str = _env_str("FRAMEJIT_DYNAMIC_SOURCES", "")


config = Config()
