"""The records published after every frame compile (the contract read by inspect and the logs)."""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass
class GraphRecord:
    name: str
    graph_module: torch.fx.GraphModule
    example_inputs: list
    compiled: Callable
    backend: str


@dataclass
class GraphBreakRecord:
    reason: str
    filename: str
    lineno: int
    source_line: str
    offset: int
    function_name: str


@dataclass
class CompileRecord:
    index: int
    function_name: str
    filename: str
    firstlineno: int
    code: types.CodeType
    transformed_code: types.CodeType | None
    check_fn: Callable | None
    graphs: list[GraphRecord] = field(default_factory=list)
    graph_breaks: list[GraphBreakRecord] = field(default_factory=list)
    resume_functions: dict[str, types.CodeType] = field(default_factory=dict)
    is_recompile: bool = False
    recompile_reasons: list[str] = field(default_factory=list)  # the first failing guard per entry
    # every failing guard of every cache entry (most recent entry first), with its origin
    recompile_failures: list[list[str]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    skipped_reason: str | None = None
