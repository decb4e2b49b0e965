"""framejit.inductor_lite — a backend that lowers FX graphs to a loop-level IR, fuses, and
generates C++ (CPU) kernels; see the package README and DESIGN.md."""

from .compile_fx import compile_fx

__all__ = ["compile_fx"]
