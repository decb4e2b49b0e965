"""inspect.signature on traced callables: folded at trace time; bind() routed at trace time.

A signature is fixed by the function (its code, defaults and annotations), which the
function's own guard pins; library code asks it to route arguments
(`len(inspect.signature(fn).parameters)`, `"x" in sig.parameters`, `p.default is
Parameter.empty`, `sig.bind(*args, **kwargs).arguments`).  Which parameter an argument
binds to depends only on how many positional arguments there are and the keyword names,
never on their values: the real `Signature.bind` runs on placeholders, and the bound
arguments hold the traced values.  A signature that escapes is rebuilt as
`inspect.signature(fn)` (never pinned by the compiled code), bound arguments as
`inspect.BoundArguments(signature, arguments)`.
"""

from __future__ import annotations

import inspect
import types

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, is_constant_value

_P = inspect.Parameter


class SignatureVariable(VariableTracker):
    def __init__(self, signature: inspect.Signature, fn: VariableTracker):
        self.signature = signature
        self.fn = fn  # what inspect.signature was called on, to rebuild it

    def python_type(self) -> type:
        return inspect.Signature

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .containers import DictVariable

        if name == "parameters":
            return DictVariable(
                {k: ParameterVariable(p) for k, p in self.signature.parameters.items()}
            )
        if name == "return_annotation":
            return _plain_value(tx, self.signature.return_annotation, "return annotation")
        raise Unsupported(f"Signature.{name}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name in ("bind", "bind_partial"):
            return _bind(tx, self, args, kwargs, partial=name == "bind_partial")
        raise Unsupported(f"Signature.{name}")

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(inspect.signature))
        self.fn.reconstruct(cg)
        cg.call(1)


class ParameterVariable(VariableTracker):
    """An inspect.Parameter (immutable): its name, kind, default and annotation."""

    def __init__(self, parameter: inspect.Parameter):
        self.parameter = parameter

    def python_type(self) -> type:
        return inspect.Parameter

    def as_python_constant(self):
        return self.parameter  # (hashable and immutable; compared by value)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        if name in ("name", "kind"):
            return ConstantVariable(getattr(self.parameter, name))
        if name in ("default", "annotation"):
            return _plain_value(tx, getattr(self.parameter, name), f"parameter {name}")
        raise Unsupported(f"Parameter.{name}")


def _plain_value(tx, value, what: str) -> VariableTracker:
    """A default or annotation: a constant, a class (Parameter.empty) or a typing form;
    anything else (a tensor default) has no source to be read from here."""
    from .builder import wrap

    if is_constant_value(value) or isinstance(value, type) or type(value).__module__ == "typing":
        return wrap(tx, value, None)
    raise Unsupported(f"{what} of type {type(value).__name__}")


class BoundArgumentsVariable(VariableTracker):
    """inspect.BoundArguments made in the frame: `arguments` a dict the trace may change."""

    def __init__(self, signature: SignatureVariable, arguments: VariableTracker):
        self.signature = signature
        self.arguments = arguments  # a DictVariable, name -> tracker

    def python_type(self) -> type:
        return inspect.BoundArguments

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .containers import DictVariable, TupleVariable

        if name == "arguments":
            return self.arguments
        if name == "signature":
            return self.signature
        if name == "args":
            return TupleVariable(self._args_kwargs(tx)[0])
        if name == "kwargs":
            return DictVariable(self._args_kwargs(tx)[1])
        raise Unsupported(f"BoundArguments.{name}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        if name == "apply_defaults" and not args and not kwargs:
            self._apply_defaults(tx)
            return ConstantVariable(None)
        raise Unsupported(f"BoundArguments.{name}")

    def _items(self) -> dict:
        if any(not isinstance(k, str) for k in self.arguments.items):
            raise Unsupported("BoundArguments.arguments with a non-str key")
        return self.arguments.items

    def _args_kwargs(self, tx) -> tuple[list, dict]:
        """BoundArguments.args / .kwargs, as inspect computes them from `arguments`."""
        items = self._items()
        args, kwargs, keyword_only = [], {}, False
        for name, param in self.signature.signature.parameters.items():
            if not keyword_only:
                if param.kind in (_P.VAR_KEYWORD, _P.KEYWORD_ONLY) or name not in items:
                    keyword_only = True  # (a missing positional ends the positional run)
                elif param.kind == _P.VAR_POSITIONAL:
                    args.extend(items[name].unpack(tx))
                    continue
                else:
                    args.append(items[name])
                    continue
            if name not in items:
                continue
            if param.kind == _P.VAR_KEYWORD:
                kwargs.update(_constant_keyed(items[name]))
            else:
                kwargs[name] = items[name]
        return args, kwargs

    def _apply_defaults(self, tx) -> None:
        from .containers import DictVariable, TupleVariable

        items = self._items()
        filled = {}
        for name, param in self.signature.signature.parameters.items():
            if name in items:
                filled[name] = items[name]
            elif param.default is not _P.empty:
                filled[name] = _plain_value(tx, param.default, "parameter default")
            elif param.kind == _P.VAR_POSITIONAL:
                filled[name] = TupleVariable([])
            elif param.kind == _P.VAR_KEYWORD:
                filled[name] = DictVariable({})
        self.arguments = DictVariable(filled)  # (a new dict, as inspect assigns one)

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(inspect.BoundArguments))
        self.signature.reconstruct(cg)
        self.arguments.reconstruct(cg)
        cg.call(2)


def _constant_keyed(vt) -> dict:
    from .containers import DictVariable

    if not isinstance(vt, DictVariable) or any(not isinstance(k, str) for k in vt.items):
        raise Unsupported("BoundArguments **kwargs that is not a dict of str keys")
    return dict(vt.items)


class _Slot:
    """A placeholder for one argument while the real Signature.bind routes them."""

    __slots__ = ("vt",)

    def __init__(self, vt):
        self.vt = vt


def _bind(tx, sig: SignatureVariable, args: list, kwargs: dict, partial: bool):
    from .containers import DictVariable, TupleVariable
    from .exceptions import observed

    method = sig.signature.bind_partial if partial else sig.signature.bind
    try:
        bound = method(*[_Slot(a) for a in args], **{k: _Slot(v) for k, v in kwargs.items()})
    except TypeError as e:  # eager's TypeError (missing or unexpected argument), catchable
        raise observed(TypeError, *e.args, reason=f"Signature.bind: {e}") from None
    arguments = {}
    for name, value in bound.arguments.items():
        kind = sig.signature.parameters[name].kind
        if kind == _P.VAR_POSITIONAL:
            arguments[name] = TupleVariable([slot.vt for slot in value])
        elif kind == _P.VAR_KEYWORD:
            arguments[name] = DictVariable({k: slot.vt for k, slot in value.items()})
        else:
            arguments[name] = value.vt
    return BoundArgumentsVariable(sig, DictVariable(arguments))


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
    return SignatureVariable(signature, fn)


INSPECT_MODELS = {inspect.signature: _signature}
