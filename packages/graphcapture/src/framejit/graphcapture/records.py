"""The records published after every frame compile (the contract read by inspect and the logs).

A record is the payload of its cache entry and lives as long as it, so it holds nothing
the entry must not pin: example inputs are kept as metadata (``InputMeta``), the real
tensors only while being published to a listener that asked for them
(``events.subscribe(fn, example_inputs=True)``), and the original code weakly (a record
reachable from that code's own cache would otherwise keep it alive forever).
"""

from __future__ import annotations

import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class InputMeta:
    """What a graph input was when traced: shape, dtype, device, strides (no data)."""

    shape: tuple[int, ...]
    dtype: torch.dtype
    device: torch.device
    stride: tuple[int, ...] | None
    requires_grad: bool
    python_type: type

    @classmethod
    def of(cls, value: Any) -> Any:
        """The metadata of a tensor; other inputs (ints, ...) are kept as they are."""
        if not isinstance(value, torch.Tensor):
            return value
        stride = tuple(value.stride()) if value.layout == torch.strided else None
        return cls(
            tuple(value.shape), value.dtype, value.device, stride, value.requires_grad, type(value)
        )


@dataclass
class GraphRecord:
    name: str
    graph_module: torch.fx.GraphModule
    example_inputs: list  # InputMeta per tensor input
    compiled: Callable
    backend: str
    # the real example tensors, only while published to a listener that asked for them
    example_tensors: list | None = None


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
    code: types.CodeType  # weakly held: None once the function's code is gone
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
    # automatic dynamic: which input dims this compile traced as symbols for the first time, and why
    dynamic_changes: list[str] = field(default_factory=list)


def _get_code(self: CompileRecord) -> types.CodeType | None:
    return self._code_ref() if self._code_ref is not None else None


def _set_code(self: CompileRecord, code: types.CodeType | None) -> None:
    self._code_ref = weakref.ref(code) if code is not None else None


# Declared as a dataclass field above (constructor, repr); stored as a weak reference.
CompileRecord.code = property(_get_code, _set_code)  # type: ignore[assignment]
