"""The interface every code generator implements, and the registry that picks one."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

import sympy

from ..scheduler import FusedGroup


def print_index(
    expr: Any, integer: Callable[[int], str], min_max: Callable[[str, str, str], str]
) -> str:
    """A sympy index expression in a kernel language: `integer(value)` spells a literal,
    `min_max("min" | "max", a, b)` a two-argument min or max; sums and products are infix."""

    def render(e) -> str:
        if e.is_Integer:
            return integer(int(e))
        if e.is_Symbol:
            return e.name
        if e.is_Add:
            return "(" + " + ".join(render(a) for a in e.args) + ")"
        if e.is_Mul:
            return "(" + " * ".join(render(a) for a in e.args) + ")"
        if e.is_Pow and e.exp.is_Integer and int(e.exp) > 0:  # sizes squared: ks1**2
            return "(" + " * ".join([render(e.base)] * int(e.exp)) + ")"
        if isinstance(e, (sympy.Min, sympy.Max)):
            which = "min" if isinstance(e, sympy.Min) else "max"
            args = [render(a) for a in e.args]
            result = args[0]
            for arg in args[1:]:
                result = min_max(which, result, arg)
            return result
        raise NotImplementedError(f"index expression {e}")

    return render(sympy.sympify(expr))


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
