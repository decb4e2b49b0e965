"""Torch functions, Python modules, nn.Modules, user objects and classes, grad-mode contexts."""

from __future__ import annotations

import types
from typing import Any

import torch

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource
from . import torch_calls
from .base import ConcreteValueVariable, ConstantVariable, VariableTracker, is_constant_value
from .containers import IteratorVariable, TupleVariable
from .functions import UserFunctionVariable, UserMethodVariable


class TorchFunctionVariable(ConcreteValueVariable):
    """A callable from torch (torch.*, torch.nn.functional.*, Tensor methods): a graph node."""

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        return torch_calls.call_torch_function(tx, self, args, kwargs)

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        try:
            value = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(f"{self.value!r} has no attribute {name!r}") from None
        return wrap(tx, value, AttrSource(self.source, name) if self.source else None)

    def __repr__(self) -> str:
        return f"TorchFunctionVariable({getattr(self.value, '__name__', self.value)!r})"


class PythonModuleVariable(ConcreteValueVariable):
    """A Python module: attribute reads wrap what the module holds, guarded by its source."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        try:
            value = getattr(self.value, name)
        except AttributeError:
            raise Unsupported(
                f"AttributeError: module {self.value.__name__} has no {name!r}"
            ) from None
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(tx, value, source)


class GetAttrMixin:
    """Attribute lookup on a real object, with mutations done during the trace seen first."""

    value: Any
    source: Any

    def _lookup(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        pending = tx.output.side_effects.pending_attr(self, name)
        if pending is not None:
            return pending
        obj = self.value
        source = AttrSource(self.source, name) if self.source is not None else None
        instance_dict = getattr(obj, "__dict__", {})
        cls = type(obj)
        class_attr = _class_lookup(cls, name)
        if isinstance(class_attr, property) and class_attr.fget is not None:
            fget = class_attr.fget
            if isinstance(fget, types.FunctionType):
                return UserFunctionVariable(fget).call_function(tx, [self], {})
            raise Unsupported(f"property {name!r} with a non-Python getter")
        if name in instance_dict:
            return wrap(tx, instance_dict[name], source)
        if class_attr is _MISSING:
            if hasattr(cls, "__getattr__") and not isinstance(obj, torch.nn.Module):
                raise Unsupported(f"custom __getattr__ of {cls.__name__}")
            raise Unsupported(f"AttributeError: {cls.__name__!r} object has no attribute {name!r}")
        if isinstance(class_attr, staticmethod):
            return wrap(tx, class_attr.__func__, None)
        if isinstance(class_attr, classmethod):
            cls_vt = UserDefinedClassVariable(cls)
            return UserMethodVariable(class_attr.__func__, cls_vt)
        if isinstance(class_attr, types.FunctionType):
            return UserMethodVariable(class_attr, self)
        if hasattr(class_attr, "__get__") and not is_constant_value(class_attr):
            raise Unsupported(f"descriptor {name!r} of {cls.__name__}")
        return wrap(tx, class_attr, source)


_MISSING = object()


def _class_lookup(cls: type, name: str):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


class NNModuleVariable(GetAttrMixin, ConcreteValueVariable):
    """An nn.Module instance: parameters/buffers reach the graph as get_attr, forward is inlined."""

    mutable = True

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap_parameter

        pending = tx.output.side_effects.pending_attr(self, name)
        if pending is not None:
            return pending
        module = self.value
        params = module.__dict__.get("_parameters", {})
        buffers = module.__dict__.get("_buffers", {})
        submodules = module.__dict__.get("_modules", {})
        if name in params:
            return wrap_parameter(tx, self, name, params[name], buffer=False)
        if name in buffers:
            return wrap_parameter(tx, self, name, buffers[name], buffer=True)
        if name in submodules:
            from .builder import wrap

            # base._modules['name']: dict reads, not nn.Module.__getattr__, in every guard
            source = (
                ItemSource(AttrSource(self.source, "_modules"), name)
                if self.source is not None
                else None
            )
            return wrap(tx, submodules[name], source)
        return self._lookup(tx, name)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        module = self.value
        hooks = (
            module._forward_hooks,
            module._forward_pre_hooks,
            module._backward_hooks,
            module._backward_pre_hooks,
            torch.nn.modules.module._global_forward_hooks,
            torch.nn.modules.module._global_forward_pre_hooks,
            torch.nn.modules.module._global_backward_hooks,
            torch.nn.modules.module._global_backward_pre_hooks,
        )
        if any(hooks):
            raise Unsupported(f"nn.Module hooks on {type(module).__name__}")
        if "forward" in module.__dict__:
            return self.var_getattr(tx, "forward").call_function(tx, args, kwargs)
        forward = type(module).forward
        if not isinstance(forward, types.FunctionType):
            raise Unsupported(f"{type(module).__name__}.forward is not a Python function")
        return UserMethodVariable(forward, self).call_function(tx, args, kwargs)

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name in ("parameters", "buffers", "children", "modules") and not args and not kwargs:
            return IteratorVariable(self._collect(tx, name))
        if name in ("named_parameters", "named_buffers", "named_children", "named_modules"):
            base = name[len("named_") :]
            pairs = [
                TupleVariable([ConstantVariable(k), v]) for k, v in self._collect_named(tx, base)
            ]
            return IteratorVariable(pairs)
        return super().call_method(tx, name, args, kwargs)

    def _collect(self, tx, what: str) -> list[VariableTracker]:
        return [v for _, v in self._collect_named(tx, what)]

    def _collect_named(self, tx, what: str) -> list[tuple[str, VariableTracker]]:
        if what == "children":
            return [(k, self.var_getattr(tx, k)) for k in self.value._modules]
        if what == "parameters" and not self.value._modules:
            return [
                (k, self.var_getattr(tx, k))
                for k, v in self.value._parameters.items()
                if v is not None
            ]
        if what == "buffers" and not self.value._modules:
            return [
                (k, self.var_getattr(tx, k))
                for k, v in self.value._buffers.items()
                if v is not None
            ]
        if what == "modules":
            out = [("", self)]
            for k in self.value._modules:
                child = self.var_getattr(tx, k)
                out.extend(
                    (f"{k}.{n}" if n else k, m) for n, m in child._collect_named(tx, "modules")
                )
            return out
        out = []
        seen: set[int] = set()
        for k, v in getattr(self.value, f"_{what}").items():
            if v is not None and id(v) not in seen:
                seen.add(id(v))
                out.append((k, self.var_getattr(tx, k)))
        for k in self.value._modules:
            child = self.var_getattr(tx, k)
            if isinstance(child, NNModuleVariable):
                for n, v in child._collect_named(tx, what):
                    if id(v) not in seen:
                        seen.add(id(v))
                        out.append((f"{k}.{n}", v))
        return out

    def unpack(self, tx) -> list[VariableTracker]:
        module = self.value
        if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
            return [self.var_getattr(tx, k) for k in module._modules]
        if isinstance(module, torch.nn.ModuleDict):
            return [ConstantVariable(k) for k in module._modules]
        raise Unsupported(f"iteration over {type(module).__name__}")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        module = self.value
        key = index.as_python_constant()
        if isinstance(module, torch.nn.ModuleDict):
            return self.var_getattr(tx, key)
        if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
            keys = list(module._modules)
            if isinstance(key, slice):
                raise Unsupported("slicing a Sequential/ModuleList")
            return self.var_getattr(tx, keys[key])
        if isinstance(module, torch.nn.ParameterList):
            return self.var_getattr(tx, str(key if key >= 0 else len(module) + key))
        raise Unsupported(f"indexing {type(module).__name__}")

    def __repr__(self) -> str:
        return f"NNModuleVariable({type(self.value).__name__})"


class UserDefinedObjectVariable(GetAttrMixin, ConcreteValueVariable):
    """An instance of a user class that exists outside the trace (guarded by its type)."""

    mutable = True

    def as_python_constant(self):
        raise Unsupported(f"a {type(self.value).__name__} object is not a constant")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        return self._lookup(tx, name)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        call = _class_lookup(type(self.value), "__call__")
        if isinstance(call, types.FunctionType):
            return UserMethodVariable(call, self).call_function(tx, args, kwargs)
        raise Unsupported(f"call to a {type(self.value).__name__} object")

    def __repr__(self) -> str:
        return f"UserDefinedObjectVariable({type(self.value).__name__})"


class UserDefinedClassVariable(ConcreteValueVariable):
    """A class (guarded by identity): attribute reads, classmethods, staticmethods."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        attr = _class_lookup(self.value, name)
        if attr is _MISSING:
            raise Unsupported(f"AttributeError: class {self.value.__name__} has no {name!r}")
        if isinstance(attr, (staticmethod, classmethod)):
            if isinstance(attr, classmethod):
                return UserMethodVariable(attr.__func__, self)
            return wrap(tx, attr.__func__, None)
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(tx, attr, source)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        raise Unsupported(f"constructing a {self.value.__qualname__} object")


class SuperVariable(VariableTracker):
    """`super(cls, obj)`: attribute lookup in the MRO of obj's type after cls."""

    def __init__(self, cls: type, obj: VariableTracker):
        self.cls = cls
        self.obj = obj

    def var_getattr(self, tx, name: str) -> VariableTracker:
        obj_type = self.obj.python_type()
        mro = obj_type.__mro__
        for klass in mro[mro.index(self.cls) + 1 :]:
            if name in klass.__dict__:
                attr = klass.__dict__[name]
                if isinstance(attr, types.FunctionType):
                    return UserMethodVariable(attr, self.obj)
                raise Unsupported(f"super().{name} is not a plain method")
        raise Unsupported(f"AttributeError: super() has no {name!r}")


class GradModeVariable(VariableTracker):
    """torch.no_grad() / enable_grad() / set_grad_enabled(b): flips grad mode inside the graph."""

    def __init__(self, target: bool):
        self.target = target
        self.previous: bool | None = None

    def python_type(self) -> type:
        return torch.no_grad if not self.target else torch.enable_grad

    def enter(self, tx) -> None:
        self.previous = torch.is_grad_enabled()
        set_grad_mode(tx, self.target)

    def exit(self, tx) -> None:
        set_grad_mode(tx, bool(self.previous))

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__":
            self.enter(tx)
            return ConstantVariable(None)
        if name == "__exit__":
            self.exit(tx)
            return ConstantVariable(None)
        raise Unsupported(f"grad-mode context .{name}")


class WithExitVariable(VariableTracker):
    """The bound __exit__ that BEFORE_WITH pushes for a traced context manager."""

    def __init__(self, ctx: GradModeVariable):
        self.ctx = ctx

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        self.ctx.exit(tx)
        return ConstantVariable(None)


def set_grad_mode(tx, enabled: bool) -> None:
    torch._C._set_grad_enabled(enabled)
    tx.output.create_node("call_function", torch._C._set_grad_enabled, (enabled,), {}, None)
