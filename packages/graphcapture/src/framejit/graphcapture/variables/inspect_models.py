"""inspect.signature on traced callables: folded at trace time.

A signature is fixed by the function (its code, defaults and annotations), which the
function's own guard pins; library code asks it to route arguments
(`len(inspect.signature(fn).parameters)`, `"x" in sig.parameters`).
"""

from __future__ import annotations

import inspect
import types

from .base import ConstantVariable, VariableTracker


class SignatureVariable(VariableTracker):
    def __init__(self, signature: inspect.Signature):
        self.signature = signature

    def python_type(self) -> type:
        return inspect.Signature

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from ..exc import Unsupported
        from .containers import DictVariable

        if name == "parameters":
            return DictVariable(
                {k: ConstantVariable(p) for k, p in self.signature.parameters.items()}
            )
        raise Unsupported(f"Signature.{name}")


def _callable_of(vt):
    """The real function behind a tracker, and whether it is bound (drop `self`)."""
    from .functions import UserFunctionVariable, UserMethodVariable
    from .objects import NNModuleVariable

    if isinstance(vt, UserFunctionVariable):
        return vt.value, False
    if isinstance(vt, UserMethodVariable):
        return vt.value, True
    if isinstance(vt, NNModuleVariable) and isinstance(type(vt.value).forward, types.FunctionType):
        return type(vt.value).forward, True
    return None, False


def _signature(tx, fn, **kwargs):
    if kwargs:
        return None
    real, bound = _callable_of(fn)
    if real is None:
        return None
    signature = inspect.signature(real)
    if bound:
        params = list(signature.parameters.values())[1:]
        signature = signature.replace(parameters=params)
    return SignatureVariable(signature)


INSPECT_MODELS = {inspect.signature: _signature}
