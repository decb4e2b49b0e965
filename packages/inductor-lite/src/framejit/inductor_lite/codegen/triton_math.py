"""The `libdevice` that generated Triton kernels call for math `tl` lacks (tanh, erfc, ...).

On a GPU it is Triton's own `triton.language.extra.libdevice`.  Triton's interpreter
(TRITON_INTERPRET=1, kernels on CPU tensors) has no libdevice, so there the same names are
numpy functions over the interpreter's tensors; the kernel source is the same either way.
"""

from __future__ import annotations

import types
from typing import Any

# name in libdevice -> numpy function (numpy is only needed by the interpreter)
NUMPY_EQUIVALENTS = {
    "tanh": "tanh",
    "tan": "tan",
    "sinh": "sinh",
    "cosh": "cosh",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "expm1": "expm1",
    "log1p": "log1p",
    "log10": "log10",
    "nearbyint": "rint",
    "trunc": "trunc",
    "atan2": "arctan2",
    "fmod": "fmod",
    "pow": "power",
}


def _erfc(x: Any) -> Any:
    import numpy as np
    import torch

    return torch.special.erfc(torch.from_numpy(np.ascontiguousarray(x))).numpy()


def _interpreted(fn):
    def call(*args):
        import numpy as np
        import triton.language as tl
        from triton.runtime.interpreter import TensorHandle

        tensors = [a for a in args if isinstance(a, tl.tensor)]
        scalar = tensors[0].handle.dtype
        np_dtype = tensors[0].handle.data.dtype
        data = [
            a.handle.data if isinstance(a, tl.tensor) else np.asarray(a, np_dtype) for a in args
        ]
        with np.errstate(all="ignore"):
            result = np.asarray(fn(*data)).astype(np_dtype)
        kind = tl.block_type(scalar, list(result.shape)) if result.shape else scalar
        return tl.tensor(TensorHandle(result, scalar), kind)

    return call


def _interpreter_libdevice() -> types.ModuleType:
    import numpy as np

    module = types.ModuleType("framejit_interpreted_libdevice")
    for name, np_name in NUMPY_EQUIVALENTS.items():
        setattr(module, name, _interpreted(getattr(np, np_name)))
    module.erfc = _interpreted(_erfc)
    return module


_INTERPRETED = None


def fj_libdevice() -> types.ModuleType:
    """libdevice for the kernels being defined now (interpreted or compiled)."""
    global _INTERPRETED
    from triton import knobs

    if knobs.runtime.interpret:
        if _INTERPRETED is None:
            _INTERPRETED = _interpreter_libdevice()
        return _INTERPRETED
    from triton.language.extra import libdevice

    return libdevice
