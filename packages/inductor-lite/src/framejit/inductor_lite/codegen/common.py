"""The interface every code generator implements, and the registry that picks one."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..scheduler import FusedGroup

_SIZE_SYMBOL = re.compile(r"\bks(\d+)\b")


def used_size_symbols(source: str) -> list[str]:
    """The size symbols (`ks<k>`) a kernel body names, in order: its size arguments."""
    return [f"ks{k}" for k in sorted({int(m) for m in _SIZE_SYMBOL.findall(source)})]


@dataclass
class KernelSpec:
    name: str
    buffers: list[str]  # argument order: one data pointer per buffer name
    checks_bounds: bool = False  # returns nonzero when an index was out of range
    sizes: list[str] = field(default_factory=list)  # then one int64 per size symbol it reads
    # buffers the kernel needs in memory that the schedule keeps in registers (the wrapper
    # allocates them for the call)
    scratch: list[str] = field(default_factory=list)
    launch: dict[str, Any] = field(default_factory=dict)  # what a launcher needs (Triton)


@dataclass
class GeneratedKernels:
    language: str
    source: str
    kernels: dict[str, KernelSpec] = field(default_factory=dict)
    device: str = "cpu"  # where the kernels run (Triton: "cpu" means interpreted)

    @property
    def takes_tensors(self) -> bool:
        """Kernels take the tensors themselves (Triton), not their data pointers (C++)."""
        return self.language == "triton"


class KernelCodegen(Protocol):
    name: str
    # renders column groups (FusedGroup.columns): sums over leading dims in generated code
    column_reductions: bool
    # writes a kernel's stored buffer into a dead extern result it reads (FusedGroup.in_place)
    in_place: bool

    def generate(self, groups: list[FusedGroup], buffers: dict[str, Any]) -> GeneratedKernels: ...

    def load(self, generated: GeneratedKernels) -> Future[dict[str, Callable[..., int]]]:
        """Compile (or fetch from the disk cache) in the background; the future holds one
        callable per kernel, taking integer data pointers in `KernelSpec.buffers` order."""
        ...


def get_codegen(name: str) -> KernelCodegen:
    if name == "cpp":
        from .cpp import CppCodegen

        return CppCodegen()
    if name == "triton":
        from .triton import TritonCodegen

        return TritonCodegen()
    raise ValueError(f"inductor-lite: unknown codegen {name!r}; use 'cpp' or 'triton'")
