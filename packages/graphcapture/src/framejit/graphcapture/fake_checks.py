"""Errors eager raises that fake propagation lets through: checked before an op is traced.

Some meta kernels skip eager's dtype checks (`mm`, `matmul`, `addmm`, `linear`,
`layer_norm` of a float64 input and float32 weights: fake gives float64, eager raises
RuntimeError).  A traced op that raises only when the graph runs loses the side effects
the trace replays after the graph (a list append before it never happens), so such an op
breaks the graph instead and runs eagerly, raising where eager does.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

# operands (tensors among the positional and keyword arguments) must share one dtype
SAME_DTYPE_FUNCTIONS = {
    torch.mm,
    torch.matmul,
    torch.addmm,
    torch.mv,
    torch.addmv,
    torch.addbmm,
    torch.bmm,
    torch.baddbmm,
    torch.layer_norm,
    torch._C._nn.linear,
    F.linear,
    F.layer_norm,
    F.group_norm,
    operator.matmul,
}
SAME_DTYPE_METHODS = {"mm", "matmul", "addmm", "mv", "addmv", "bmm", "baddbmm", "__matmul__"}


def _autocast_on() -> bool:
    return any(torch.is_autocast_enabled(device) for device in ("cpu", "cuda"))


def check(kind: str, target, args: tuple, kwargs: dict) -> str | None:
    """Why eager would raise on this call (None: fake propagation can be trusted)."""
    try:
        table = SAME_DTYPE_METHODS if kind == "call_method" else SAME_DTYPE_FUNCTIONS
        if kind not in ("call_method", "call_function") or target not in table:
            return None
    except TypeError:  # an unhashable callable: none of the table's
        return None
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1 and not _autocast_on():
        name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
        return f"{name}: operands of dtypes {sorted(map(str, dtypes))} (eager raises RuntimeError)"
    return None
