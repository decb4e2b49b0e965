"""Code generators over the loop-level IR.  Each one turns scheduled steps into kernel source
plus a loader; the wrapper only sees `GeneratedKernels`, so C++ and Triton are interchangeable."""

from __future__ import annotations

from .common import GeneratedKernels, KernelCodegen, KernelSpec, get_codegen

__all__ = ["GeneratedKernels", "KernelCodegen", "KernelSpec", "get_codegen"]
