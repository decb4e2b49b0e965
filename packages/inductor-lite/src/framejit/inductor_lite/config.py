"""Knobs of inductor-lite: typed, read from the environment once, defined only here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() not in ("", "0", "false", "no", "off")


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


@dataclass
class Config:
    cxx: str = field(default_factory=lambda: os.environ.get("CXX", "g++"))
    # Raise instead of falling back to eager when the pipeline fails (tests use this).
    strict: bool = field(default_factory=lambda: _env_flag("FRAMEJIT_INDUCTOR_STRICT", False))
    # A pointwise value read by several users is recomputed (inlined) below this op count.
    inline_max_ops: int = 24
    inline_max_reads: int = 6
    # An inlined chain is materialized once it grows past this many ops.
    max_fused_ops: int = 120
    # Loops with fewer elements than this run on one thread.
    parallel_min_work: int = field(
        default_factory=lambda: _env_int("FRAMEJIT_PARALLEL_MIN_WORK", 32768)
    )
    compile_threads: int = 4
    # how AOTAutograd splits a training graph: "min-cut" (recompute) or "default" (save)
    partitioner: str = field(
        default_factory=lambda: os.environ.get("FRAMEJIT_INDUCTOR_PARTITIONER", "min-cut")
    )
    # Triton: a reduction row up to this many elements (rounded up to a power of two) is
    # one block (persistent); longer rows loop over blocks.
    triton_persistent_max: int = field(
        default_factory=lambda: _env_int("FRAMEJIT_TRITON_PERSISTENT_MAX", 4096)
    )
    # Triton: time a few launch configs per kernel on its first call, keep the fastest
    # (cached on disk per shape signature); off: the heuristic config.
    triton_autotune: bool = field(
        default_factory=lambda: _env_flag("FRAMEJIT_TRITON_AUTOTUNE", False)
    )

    @property
    def cache_dir(self) -> Path:
        """Where compiled shared objects live (owner-only); read when used, so a process
        may point it elsewhere at any time."""
        configured = os.environ.get("FRAMEJIT_CACHE_DIR")
        return Path(configured) if configured else Path.home() / ".cache/framejit/inductor-lite"


config = Config()


def reload() -> Config:
    """Re-read the environment (tests change FRAMEJIT_CACHE_DIR between cases)."""
    global config
    config = Config()
    return config
