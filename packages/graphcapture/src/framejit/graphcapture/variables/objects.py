"""Torch functions, Python modules, nn.Modules, user objects and classes, grad-mode contexts."""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from typing import Any

import torch

from ..exc import Unsupported
from ..sources import AttrSource, ItemSource, SubclassesSource
from . import torch_calls
from .base import (
    ConcreteValueVariable,
    ConstantVariable,
    VariableTracker,
    fold,
    is_constant_value,
)
from .builtin_bases import container_base, contents, slot_method
from .classmethods import bind_classmethod
from .containers import IteratorVariable, TupleVariable
from .exceptions import ObservedException, observed
from .functions import UserFunctionVariable, UserMethodVariable
from .weakrefs import dunder_weakref


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
        if self.source is not None and (name == "__dict__" or (self.value, name) == _MODULES):
            from .class_dicts import ClassDictVariable

            return ClassDictVariable(self, name)  # read key by key (not all keys guarded)
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(tx, value, source)


_MODULES = (sys, "modules")


class GetAttrMixin:
    """Attribute lookup on a real object, with mutations done during the trace seen first."""

    value: Any
    source: Any

    def _lookup(self, tx, name: str) -> VariableTracker:
        pending = tx.output.side_effects.pending_attr(self, name)
        cls = type(self.value)
        class_attr = _class_lookup(cls, name)
        if pending is not None and not (
            _is_data_descriptor(class_attr) and hasattr(type(class_attr), "__get__")
        ):
            return pending  # (a data descriptor's __get__ wins over the instance __dict__)
        if name == "__class__":
            # the type is fixed by this object's TYPE_MATCH/ID_MATCH guard
            return UserDefinedClassVariable(cls)
        getattribute = _class_lookup(cls, "__getattribute__")
        if getattribute is not _OBJECT_GETATTRIBUTE and not _generic_getattribute(getattribute):
            if not isinstance(getattribute, types.FunctionType):
                raise Unsupported(f"{cls.__name__}.__getattribute__ is not a Python function")
            # e.g. transformers' PretrainedConfig (attribute_map aliases): traced, and its
            # super().__getattribute__ comes back to generic_lookup
            try:
                return UserMethodVariable(getattribute, self).call_function(
                    tx, [ConstantVariable(name)], {}
                )
            except ObservedException as e:  # AttributeError: Python asks __getattr__
                getattr_fn = _class_lookup(cls, "__getattr__")
                if not issubclass(e.exc_type, AttributeError) or not isinstance(
                    getattr_fn, types.FunctionType
                ):
                    raise
            return UserMethodVariable(getattr_fn, self).call_function(
                tx, [ConstantVariable(name)], {}
            )
        return self.generic_lookup(tx, name)

    def generic_lookup(self, tx, name: str) -> VariableTracker:
        """object.__getattribute__, then a Python __getattr__ (nn.Module's excepted: the
        module tables are read directly)."""
        from .builder import wrap

        obj = self.value
        source = AttrSource(self.source, name) if self.source is not None else None
        instance_dict = getattr(obj, "__dict__", None)  # (None: __slots__ only)
        if name == "__dict__" and isinstance(instance_dict, dict):
            return InstanceDictVariable(self)
        cls = type(obj)
        class_attr = _class_lookup(cls, name)
        if isinstance(class_attr, property) and class_attr.fget is not None:
            fget = class_attr.fget
            if isinstance(fget, types.FunctionType):
                # read where it lives, so a getter's closure (torch's parametrizations:
                # `get_parametrized` closes over the tensor's name) is guarded through it
                where = _class_dict_source(self, name)
                fget_source = AttrSource(where, "fget") if where is not None else None
                if fget_source is not None:
                    from framejit.guards import GuardKind

                    tx.output.add_guard(fget_source, GuardKind.ID_MATCH, fget, origin=tx.origin())
                return UserFunctionVariable(fget, fget_source).call_function(tx, [self], {})
            raise Unsupported(f"property {name!r} with a non-Python getter")
        get = _python_descriptor_method(class_attr, "__get__")
        if get is not None and _is_data_descriptor(class_attr):
            return _call_descriptor(tx, self, name, get, [self, _owner(self, cls)])
        if instance_dict is not None and name in instance_dict:
            return wrap(tx, instance_dict[name], source)
        if get is not None:  # a non-data descriptor: the instance __dict__ wins over it
            return _call_descriptor(tx, self, name, get, [self, _owner(self, cls)])
        if class_attr is _MISSING:
            getattr_fn = _class_lookup(cls, "__getattr__")
            if getattr_fn is not _MISSING and (
                not isinstance(obj, torch.nn.Module) or getattr_fn is not _MODULE_GETATTR
            ):  # (a module class's own __getattr__, e.g. forwarding to a wrapped model)
                if isinstance(getattr_fn, types.FunctionType):
                    return UserMethodVariable(getattr_fn, self).call_function(
                        tx, [ConstantVariable(name)], {}
                    )
                raise Unsupported(f"custom __getattr__ of {cls.__name__}")
            raise Unsupported(f"AttributeError: {cls.__name__!r} object has no attribute {name!r}")
        if isinstance(class_attr, staticmethod):
            return wrap(tx, class_attr.__func__, None)
        if isinstance(class_attr, classmethod):
            return bind_classmethod(tx, class_attr, UserDefinedClassVariable(cls))
        if isinstance(class_attr, types.FunctionType):
            return UserMethodVariable(class_attr, self, source)
        bound = slot_method(self, cls, class_attr, name)
        if bound is not None:  # a dict or list subclass's C method: on its contents
            return bound
        if isinstance(class_attr, types.MemberDescriptorType):
            try:  # a __slots__ member: the value in the object's slot
                value = class_attr.__get__(obj, cls)
            except AttributeError as e:
                if getattr(self, "made_in_trace", False):  # never set in the trace
                    raise observed(AttributeError, *e.args, reason="empty slot") from None
                raise Unsupported(f"AttributeError: slot {name!r} is empty") from None
            return wrap(tx, value, source)
        if hasattr(class_attr, "__get__") and not is_constant_value(class_attr):
            weak_slot = dunder_weakref(self, class_attr)
            if weak_slot is not None:
                return weak_slot
            raise Unsupported(f"descriptor {name!r} of {cls.__name__}")
        return wrap(tx, class_attr, source)


_MISSING = object()


def _owner(obj: VariableTracker, cls: type) -> VariableTracker:
    """The class a descriptor's `__get__(obj, owner)` is given: read as `type(obj)` where
    obj has a source, so what the descriptor reads off it is guarded."""
    from framejit.guards import TypeSource

    source = TypeSource(obj.source) if obj.source is not None else None
    return UserDefinedClassVariable(cls, source)


def _is_data_descriptor(attr) -> bool:
    """A class attribute that wins over the instance __dict__ (property, a __set__ or
    __delete__ descriptor); a __slots__ member's value lives in its slot, not __dict__."""
    kind = type(attr)
    return (
        attr is not _MISSING
        and not isinstance(attr, types.MemberDescriptorType)
        and (hasattr(kind, "__set__") or hasattr(kind, "__delete__"))
    )


def _python_descriptor_method(attr, name: str):
    """`type(attr).<name>` when it is a Python function (a user descriptor class's)."""
    if attr is _MISSING or isinstance(attr, (types.FunctionType, property)):
        return None
    method = getattr(type(attr), name, None)
    return method if isinstance(method, types.FunctionType) else None


def _class_dict_source(obj: VariableTracker, name: str):
    """`type(obj).__mro__[at].__dict__[name]`: where the class attribute `name` lives."""
    if obj.source is None:
        return None
    from framejit.guards import TypeSource

    for at, klass in enumerate(type(obj.value).__mro__):
        if name in klass.__dict__:
            owner = ItemSource(AttrSource(TypeSource(obj.source), "__mro__"), at)
            return ItemSource(AttrSource(owner, "__dict__"), name)
    return None


def _call_descriptor(tx, obj, name: str, method, args: list) -> VariableTracker:
    """A user descriptor's Python __get__/__set__ for `obj.name`, traced; the descriptor is
    read where it lives on the class, guarded by identity."""
    from framejit.guards import GuardKind

    from .builder import wrap

    descriptor = _class_lookup(type(obj.value), name)
    source = _class_dict_source(obj, name)
    if source is not None:
        tx.output.add_guard(source, GuardKind.ID_MATCH, descriptor, origin=tx.origin())
    return UserFunctionVariable(method).call_function(tx, [wrap(tx, descriptor, source), *args], {})


def slot_member(cls: type, name: str):
    """The member descriptor of `cls`'s __slots__ entry `name` (None: not a slot)."""
    attr = _class_lookup(cls, name)
    return attr if isinstance(attr, types.MemberDescriptorType) else None


def has_instance_dict(cls: type) -> bool:
    """Instances of `cls` store attributes in a __dict__ (a threading.local in the calling
    thread's one)."""
    return (
        bool(cls.__dictoffset__)
        or container_base(cls) is not None
        or issubclass(cls, threading.local)
    )


def store_generic(tx, obj, name: str, value: VariableTracker, how: str) -> None:
    """`obj.name = value` as object.__setattr__ does it: through a data descriptor of the
    class (a property's setter, a Python __set__), traced, else into the instance (its
    __dict__ or a __slots__ member; neither: eager's AttributeError)."""
    cls = type(obj.value)
    attr = _class_lookup(cls, name)
    if (
        how != "dict"
        and not _is_data_descriptor(attr)
        and not has_instance_dict(cls)
        and slot_member(cls, name) is None
    ):  # no storage for it: eager's AttributeError, as the (stand-in) object raises it
        if getattr(obj, "made_in_trace", False):
            fold(object.__setattr__, obj.value, name, None)
        raise Unsupported(f"store of {name!r} on a {cls.__name__} without a __dict__")
    if _is_data_descriptor(attr):
        if isinstance(attr, property):
            if not isinstance(attr.fset, types.FunctionType):
                raise Unsupported(f"property {name!r} without a Python setter")
            UserFunctionVariable(attr.fset).call_function(tx, [obj, value], {})
            return
        setter = _python_descriptor_method(attr, "__set__")
        if setter is None:
            raise Unsupported(
                f"store through the descriptor {name!r} of {type(obj.value).__name__}"
            )
        _call_descriptor(tx, obj, name, setter, [obj, value])
        return
    tx.output.side_effects.store_attr(obj, name, value, how=how)


def _generic_getattribute(fn) -> bool:
    """dict's, list's, set's, ... __getattribute__: the generic lookup, as object's.  A
    threading.local's is too, over the calling thread's `__dict__`; the guards and the
    generated code read through the same object, in the thread that calls."""
    return isinstance(fn, types.WrapperDescriptorType) and fn.__objclass__ in (
        dict,
        list,
        tuple,
        set,
        frozenset,
        threading.local,
    )


_MODULE_CALL = torch.nn.Module.__call__
_MODULE_GETATTR = torch.nn.Module.__getattr__
_OBJECT_GETATTRIBUTE = object.__getattribute__
_OBJECT_SETATTR = object.__setattr__
_OBJECT_DELATTR = object.__delattr__
_OBJECT_INIT = object.__init__
_OBJECT_NEW = object.__new__


def _class_lookup(cls: type, name: str):
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


def _guard_class_attr(tx, obj: VariableTracker, name: str, value) -> None:
    """`type(obj).name is value`: a special method is looked up on the class, which the
    program may rebind between calls (`M.__call__ = other`) while the object stays the same."""
    if obj.source is None or value is _MISSING:
        return
    from framejit.guards import GuardKind, TypeSource

    tx.output.add_guard(
        AttrSource(TypeSource(obj.source), name), GuardKind.ID_MATCH, value, origin=tx.origin()
    )


class NNModuleVariable(GetAttrMixin, ConcreteValueVariable):
    """An nn.Module instance: parameters/buffers reach the graph as get_attr, forward is
    inlined.  An unspecialised one (module_policy.py) is guarded by its class and the keys
    of its tables, its parameters/buffers graph inputs."""

    mutable = True
    specialized = True

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap_parameter

        pending = tx.output.side_effects.pending_attr(self, name)
        if pending is not None:
            return pending
        module = self.value
        if _class_lookup(type(module), name) is not _MISSING:
            # a class attribute (a base's method `linear`) wins over a submodule, parameter or
            # buffer of that name: nn.Module.__getattr__ only runs when the lookup fails
            return self._lookup(tx, name)
        if not self.specialized:  # which tables hold `name`: another instance may differ
            for table in ("_parameters", "_buffers", "_modules"):
                if table in module.__dict__:
                    self.table(tx, table)
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
        """`module(*args)`: a class's own __call__ if it overrides nn.Module's, else
        nn.Module's call (hooks and forward) traced."""
        call = type(self.value).__call__
        _guard_class_attr(tx, self, "__call__", call)
        if call is not _MODULE_CALL:
            if not isinstance(call, types.FunctionType):
                raise Unsupported(f"{type(self.value).__name__}.__call__ is not a Python function")
            return UserMethodVariable(call, self).call_function(tx, args, kwargs)
        return self.call_module(tx, args, kwargs)

    def call_module(self, tx, args: list, kwargs: dict) -> VariableTracker:
        """What nn.Module.__call__ does: forward pre-hooks, forward, forward hooks."""
        module = self.value
        mm = torch.nn.modules.module
        if (
            module._backward_hooks
            or module._backward_pre_hooks
            or mm._global_backward_hooks
            or mm._global_backward_pre_hooks
        ):
            raise Unsupported(f"backward hooks on {type(module).__name__}")
        if module._forward_hooks_with_kwargs or module._forward_pre_hooks_with_kwargs:
            raise Unsupported(f"forward hooks with kwargs on {type(module).__name__}")
        pre_hooks = self._hooks(tx, "_forward_pre_hooks")
        post_hooks = self._hooks(tx, "_forward_hooks")
        for hook in pre_hooks:
            result = hook.call_function(tx, [self, TupleVariable(list(args))], {})
            if not (result.is_python_constant() and result.as_python_constant() is None):
                args = result.unpack(tx) if isinstance(result, TupleVariable) else [result]
        output = self._call_forward(tx, args, kwargs)
        for hook in post_hooks:
            result = hook.call_function(tx, [self, TupleVariable(list(args)), output], {})
            if not (result.is_python_constant() and result.as_python_constant() is None):
                output = result
        return output

    def _hooks(self, tx, table: str) -> list[VariableTracker]:
        """The global then the module's hooks of one kind, with their dicts' keys guarded
        (a hook added or removed later must not leave the compiled code stale)."""
        from framejit.guards import GuardKind

        from .builder import wrap

        mm = torch.nn.modules.module
        found = []
        global_table = getattr(mm, "_global" + table)
        global_source = tx.root.module_alias_source(vars(mm), "_global" + table)
        own_source = AttrSource(self.source, table) if self.source is not None else None
        for hooks, source in (
            (global_table, global_source),
            (getattr(self.value, table), own_source),
        ):
            if source is not None:
                tx.output.add_guard(source, GuardKind.DICT_KEYS, hooks, origin=tx.origin())
            elif hooks:
                raise Unsupported(f"hooks on {type(self.value).__name__} that cannot be guarded")
            for key, hook in hooks.items():
                found.append(wrap(tx, hook, ItemSource(source, key) if source else None))
        return found

    def _call_forward(self, tx, args, kwargs) -> VariableTracker:
        module = self.value
        if "forward" in module.__dict__:
            return self.var_getattr(tx, "forward").call_function(tx, args, kwargs)
        forward = _class_lookup(type(module), "forward")  # no descriptor run (ScriptModule's)
        if not isinstance(forward, types.FunctionType):
            raise Unsupported(f"{type(module).__name__}.forward is not a Python function")
        # `module.forward.__func__ is forward`: neither instance nor class rebound it since
        source = AttrSource(self.source, "forward") if self.source is not None else None
        return UserMethodVariable(forward, self, source).call_function(tx, args, kwargs)

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

    def table(self, tx, name: str) -> dict:
        """`_parameters`, `_buffers` or `_modules`, for a trace that depends on its keys and
        their order (iteration, indexing by position): the keys are guarded."""
        from framejit.guards import GuardKind

        value = self.value.__dict__[name]
        if self.source is not None:
            tx.output.add_guard(
                AttrSource(self.source, name), GuardKind.DICT_KEYS, value, origin=tx.origin()
            )
        return value

    def _collect_named(self, tx, what: str) -> list[tuple[str, VariableTracker]]:
        modules = self.table(tx, "_modules")
        if what == "children":
            return [(k, self.var_getattr(tx, k)) for k, v in modules.items() if v is not None]
        if what == "modules":
            out = [("", self)]
            for k, v in modules.items():
                if v is None:
                    continue
                child = self.var_getattr(tx, k)
                out.extend(
                    (f"{k}.{n}" if n else k, m) for n, m in child._collect_named(tx, "modules")
                )
            return out
        seen: set[int] = set()  # a parameter shared by two modules is listed once, as eager
        return [
            (name, owner.var_getattr(tx, key))
            for name, owner, key, value in self._members(tx, what, "")
            if not (id(value) in seen or seen.add(id(value)))
        ]

    def _members(self, tx, what: str, prefix: str) -> list:
        """(qualified name, owning module's tracker, key, real value) of every parameter or
        buffer, this module's first, then its children's in order."""
        out = [
            (prefix + k, self, k, v) for k, v in self.table(tx, f"_{what}").items() if v is not None
        ]
        for k, child_module in self.table(tx, "_modules").items():
            if child_module is None:
                continue
            child = self.var_getattr(tx, k)
            if isinstance(child, NNModuleVariable):
                out.extend(child._members(tx, what, f"{prefix}{k}."))
        return out

    def unpack(self, tx) -> list[VariableTracker]:
        module = self.value
        if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
            return [self.var_getattr(tx, k) for k in self.table(tx, "_modules")]
        if isinstance(module, torch.nn.ModuleDict):
            return [ConstantVariable(k) for k in self.table(tx, "_modules")]
        raise Unsupported(f"iteration over {type(module).__name__}")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        module = self.value
        key = index.as_python_constant()
        if isinstance(module, torch.nn.ModuleDict):
            return self.var_getattr(tx, key)
        if isinstance(module, (torch.nn.Sequential, torch.nn.ModuleList)):
            keys = list(self.table(tx, "_modules"))
            if isinstance(key, slice):
                # `self.layers[:n]`: the children in order (the _modules keys are guarded)
                return ModuleSliceVariable(
                    [self.var_getattr(tx, k) for k in keys[key]], type(module)
                )
            return self.var_getattr(tx, keys[key])
        if isinstance(module, torch.nn.ParameterList):
            return self.var_getattr(tx, str(key if key >= 0 else len(module) + key))
        raise Unsupported(f"indexing {type(module).__name__}")

    def __repr__(self) -> str:
        return f"NNModuleVariable({type(self.value).__name__})"


class ModuleSliceVariable(TupleVariable):
    """A slice of a Sequential/ModuleList: iterable and indexable like the new container
    eager would build; rebuilding it after the graph is not supported."""

    def __init__(self, items, module_type: type):
        super().__init__(items)
        self.module_type = module_type

    def python_type(self) -> type:
        return self.module_type

    def as_python_constant(self):
        raise Unsupported(f"a slice of a {self.module_type.__name__} is not a constant")

    def reconstruct(self, cg) -> None:
        raise Unsupported(f"a slice of a {self.module_type.__name__} escaping the frame")


class UserDefinedObjectVariable(GetAttrMixin, ConcreteValueVariable):
    """An instance of a user class that exists outside the trace (guarded by its type)."""

    mutable = True

    def as_python_constant(self):
        raise Unsupported(f"a {type(self.value).__name__} object is not a constant")

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .logging_models import logging_method

        deferred = logging_method(tx, self, name)
        if deferred is not None:
            return deferred
        return self._lookup(tx, name)

    # the class's Python dunders, inlined (user_classes.py)
    def truth(self, tx) -> bool:
        from .user_classes import dunder_truth

        result = dunder_truth(tx, self)
        if result is None:
            storage = self._storage_fallback(tx, "__len__")
            if storage is not None:
                return storage.truth(tx)
            raise Unsupported(f"truth of a {type(self.value).__name__} object")
        return result

    def _storage_fallback(self, tx, dunder: str):
        """The contents of a dict- or list-subclass object whose class leaves `dunder` to
        its builtin base (None: not one, or the class defines `dunder` in Python)."""
        from .user_classes import _python_method

        if container_base(type(self.value)) is None or _python_method(self, dunder) is not None:
            return None
        return contents(tx, self)

    def unpack(self, tx) -> list[VariableTracker]:
        from .user_classes import dunder_iter

        items = dunder_iter(tx, self)
        if items is None:
            storage = self._storage_fallback(tx, "__iter__")
            if storage is not None:
                return storage.unpack(tx)
            raise Unsupported(f"iteration over a {type(self.value).__name__} object")
        return items

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        from .user_classes import dunder_getitem

        result = dunder_getitem(tx, self, index)
        if result is None:
            storage = self._storage_fallback(tx, "__getitem__")
            if storage is not None:
                return storage.getitem(tx, index)
            raise Unsupported(f"indexing a {type(self.value).__name__} object")
        return result

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        call = _class_lookup(type(self.value), "__call__")
        _guard_class_attr(tx, self, "__call__", call)
        if isinstance(call, types.FunctionType):
            return UserMethodVariable(call, self).call_function(tx, args, kwargs)
        from .descriptor_calls import descriptor_get_call

        result = descriptor_get_call(tx, self, args, kwargs)
        if result is not None:
            return result
        raise Unsupported(f"call to a {type(self.value).__name__} object")

    def __repr__(self) -> str:
        return f"UserDefinedObjectVariable({type(self.value).__name__})"


_TYPE_CONSTANTS = ("__name__", "__qualname__", "__module__", "__flags__")


class UserDefinedClassVariable(ConcreteValueVariable):
    """A class (guarded by identity): attribute reads, classmethods, staticmethods."""

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .builder import wrap

        if name in _TYPE_CONSTANTS:
            return ConstantVariable(getattr(self.value, name))  # fixed by the class's identity
        if name == "__type_params__" and getattr(self.value, name, None) == ():
            # type's data descriptor (3.12+): () for a class that is not generic; typing's
            # get_type_hints reads it off every base on 3.13
            return ConstantVariable(())
        if name in ("__mro__", "__bases__") and isinstance(self.value, type):
            from .builder import wrap

            # fixed by the class's identity too (Python forbids reassigning __mro__; a
            # __bases__ assignment is not followed, as torch.compile does not follow it);
            # each class keeps a source, for the guards on what is read from it
            classes = getattr(self.value, name)
            if self.source is None:
                return TupleVariable([wrap(tx, c, None) for c in classes])
            where = AttrSource(self.source, name)
            return TupleVariable([wrap(tx, c, ItemSource(where, i)) for i, c in enumerate(classes)])
        if name == "__mro__" and isinstance(self.value, type):
            return TupleVariable([UserDefinedClassVariable(k) for k in self.value.__mro__])
        if name == "__dict__" and _class_lookup(type(self.value), name) is _TYPE_DICT:
            from .class_dicts import ClassDictVariable

            return ClassDictVariable(self)  # (type's data descriptor wins over the class's own)
        attr = _class_lookup(self.value, name)
        if attr is _MISSING and _class_lookup(type(self.value), name) is _TYPE_SUBCLASSES:
            return _SubclassesMethod(self)
        if attr is _MISSING:
            from .builtins import is_static_type

            message = f"type object {self.value.__name__!r} has no attribute {name!r}"
            if is_static_type(self.value):  # nothing can add it: eager's error, catchable
                raise observed(AttributeError, message, reason=f"AttributeError: {message}")
            raise Unsupported(f"AttributeError: class {self.value.__name__} has no {name!r}")
        if attr is _OBJECT_NEW:
            from .user_classes import ObjectNewVariable

            return ObjectNewVariable()
        if name == "apply" and isinstance(attr, classmethod):
            from .autograd_function import AutogradFunctionApplyVariable, is_function_apply

            if is_function_apply(self.value, attr):
                return AutogradFunctionApplyVariable(self)
        if isinstance(attr, (staticmethod, classmethod)):
            if isinstance(attr, classmethod):
                return bind_classmethod(tx, attr, self)
            return wrap(tx, attr.__func__, None)
        if getattr(attr, "__objclass__", None) in (set, frozenset) and callable(attr):
            # CustomSet.add(s, x): set's own method, called with the object first
            from .builtins import BuiltinVariable

            return BuiltinVariable(attr.__objclass__).var_getattr(tx, name)
        source = AttrSource(self.source, name) if self.source is not None else None
        return wrap(tx, attr, source)

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from .user_classes import construct

        return construct(tx, self, args, kwargs)

    def reconstruct(self, cg) -> None:
        # a class found without a source (type(obj), sys.exc_info()[0]) is that very class,
        # fixed by the guards on where it came from: loaded as a constant
        if self.source is not None:
            cg.load_source(self.source)
        else:
            cg.load_const(self.value)


_TYPE_SUBCLASSES = type.__dict__["__subclasses__"]
_TYPE_DICT = type.__dict__["__dict__"]


class _SubclassesMethod(VariableTracker):
    """`C.__subclasses__()`: the live subclasses, each identity-guarded, and their count
    (defining another subclass of C recompiles)."""

    def __init__(self, cls: UserDefinedClassVariable):
        self.cls = cls

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        from framejit.guards import GuardKind

        from .builder import wrap
        from .containers import ListVariable

        if args or kwargs:
            raise Unsupported("TypeError: __subclasses__() takes no arguments")
        if self.cls.source is None:
            raise Unsupported(
                f"{self.cls.value.__name__}.__subclasses__() of a class without a source"
            )
        source = SubclassesSource(self.cls.source)
        subclasses = type.__subclasses__(self.cls.value)
        tx.output.add_guard(source, GuardKind.LENGTH_CHECK, subclasses, origin=tx.origin())
        return ListVariable([wrap(tx, c, ItemSource(source, i)) for i, c in enumerate(subclasses)])


_OBJECT_COMPARE = {object.__eq__: "eq", object.__ne__: "ne"}


class _ObjectCompare(VariableTracker):
    """object.__eq__ / object.__ne__ reached by super() from a class's own: the same object
    is equal (else NotImplemented); != inverts what type(obj).__eq__ answers."""

    def __init__(self, obj: VariableTracker, kind: str):
        self.obj = obj
        self.kind = kind

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        import operator

        from .builtins import identity_compare

        if len(args) != 1 or kwargs:
            raise Unsupported(f"object.__{self.kind}__ with {len(args)} arguments")
        (other,) = args
        eq = _class_lookup(type(self.obj.value), "__eq__")
        if self.kind == "ne" and isinstance(eq, types.FunctionType):
            _guard_class_attr(tx, self.obj, "__eq__", eq)
            result = UserMethodVariable(eq, self.obj).call_function(tx, [other], {})
            if result.is_python_constant() and result.as_python_constant() is NotImplemented:
                return result
            return ConstantVariable(not result.truth(tx))
        if self.kind == "ne" and eq is not object.__eq__:
            raise Unsupported(f"object.__ne__ over a C __eq__ of {type(self.obj.value)}")
        same = identity_compare(tx, operator.is_, self.obj, other).as_python_constant()
        if self.kind == "eq":
            return ConstantVariable(True if same else NotImplemented)
        return ConstantVariable(False if same else NotImplemented)


class _ModuleCall(VariableTracker):
    """`super().__call__` reaching nn.Module's: hooks and forward, traced."""

    def __init__(self, module: NNModuleVariable):
        self.module = module

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        return self.module.call_module(tx, args, kwargs)


class InstanceDictVariable(VariableTracker):
    """`obj.__dict__`, read key by key: each key read is guarded on its own (its value, or
    its absence), not the whole dict (a config's holds dozens of entries)."""

    def __init__(self, obj: GetAttrMixin):
        self.obj = obj

    def python_type(self) -> type:
        return dict

    def _read(self, tx, key: str):
        """(present, tracker) for obj.__dict__[key], with its guard."""
        from framejit.guards import GuardKind

        from .builder import wrap

        if getattr(self.obj, "made_in_trace", False):
            value = self.obj.attrs.get(key)  # the whole __dict__ is the trace's
            return value is not None, value
        pending = tx.output.side_effects.pending_attr(self.obj, key)
        if pending is not None:
            if isinstance(_class_lookup(type(self.obj.value), key), types.MemberDescriptorType):
                raise Unsupported(f"__dict__[{key!r}] after a store to the slot {key!r}")
            return True, pending  # every other store lands in the instance __dict__
        source = self.obj.source
        if source is None:
            raise Unsupported("__dict__ of an object without a source")
        instance_dict = self.obj.value.__dict__
        if key in instance_dict:
            item = ItemSource(AttrSource(source, "__dict__"), key)
            return True, wrap(tx, instance_dict[key], item)
        if _class_lookup(type(self.obj.value), key) is not _MISSING:
            # hasattr would find the class attribute: the instance's keys are guarded
            dict_source = AttrSource(source, "__dict__")
            tx.output.add_guard(dict_source, GuardKind.DICT_KEYS, instance_dict, origin=tx.origin())
            return False, None
        tx.output.add_guard(AttrSource(source, key), GuardKind.HASATTR, False, origin=tx.origin())
        return False, None

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if kwargs or not args or not args[0].is_python_constant():
            raise Unsupported(f"__dict__.{name} with these arguments")
        key = args[0].as_python_constant()
        if not isinstance(key, str):
            raise Unsupported("__dict__ read with a non-str key")
        if name == "get" and len(args) <= 2:
            present, value = self._read(tx, key)
            if present:
                return value
            return args[1] if len(args) == 2 else ConstantVariable(None)
        if name == "__contains__" and len(args) == 1:
            return ConstantVariable(self._read(tx, key)[0])
        if name == "__setitem__" and len(args) == 2:
            # past the class's descriptors and __setattr__, as CPython's dict store is
            tx.output.side_effects.store_attr(self.obj, key, args[1], how="dict")
            return ConstantVariable(None)
        if name == "__getitem__" and len(args) == 1:
            present, value = self._read(tx, key)
            if not present:
                raise observed(KeyError, key, reason=f"KeyError: {key!r}")
            return value
        raise Unsupported(f"__dict__.{name}")

    def getitem(self, tx, index: VariableTracker) -> VariableTracker:
        return self.call_method(tx, "__getitem__", [index], {})


class _ObjectMethod(VariableTracker):
    """`super().__getattribute__` / `super().__setattr__` / `super().__init__` reaching
    object's: the generic lookup, an attribute store recorded as a side effect, or nothing."""

    def __init__(self, obj: GetAttrMixin, kind: str):
        self.obj = obj
        self.kind = kind

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        if self.kind == "init":
            if args or kwargs:  # eagerly a TypeError where the class overrides __init__
                raise Unsupported("object.__init__ called with arguments")
            return ConstantVariable(None)
        if kwargs or not args or not args[0].is_python_constant():
            raise Unsupported(f"object.__{self.kind}__ with unusual arguments")
        name = args[0].as_python_constant()
        if self.kind == "getattr" and len(args) == 1:
            pending = tx.output.side_effects.pending_attr(self.obj, name)
            return pending if pending is not None else self.obj.generic_lookup(tx, name)
        if self.kind == "setattr" and len(args) == 2:
            store_generic(tx, self.obj, name, args[1], "object")
            return ConstantVariable(None)
        if self.kind == "delattr" and len(args) == 1:
            from .attr_delete import object_delattr

            return object_delattr(tx, self.obj, name)
        raise Unsupported(f"object.__{self.kind}__ with {len(args)} arguments")


class GradModeVariable(VariableTracker):
    """torch.no_grad() / enable_grad() / set_grad_enabled(b): flips grad mode inside the graph."""

    def __init__(self, target: bool):
        self.target = target
        self.previous: bool | None = None
        self.switched_at_init = False  # torch.set_grad_enabled(b): the call itself switches

    @classmethod
    def switching(cls, tx, target: bool) -> GradModeVariable:
        """`torch.set_grad_enabled(b)`: switches when constructed, as in eager (a bare call
        leaves the mode switched after the frame); `with` re-enters it, `__exit__` and the
        decorator form go back to the mode before the call."""
        ctx = cls(target)
        ctx.previous = torch.is_grad_enabled()
        ctx.switched_at_init = True
        set_grad_mode(tx, target)
        return ctx

    def python_type(self) -> type:
        if self.switched_at_init:
            return torch.set_grad_enabled
        return torch.no_grad if not self.target else torch.enable_grad

    def enter(self, tx) -> None:
        if not self.switched_at_init:
            self.previous = torch.is_grad_enabled()
        set_grad_mode(tx, self.target)

    def exit(self, tx) -> None:
        set_grad_mode(tx, bool(self.previous))

    def reconstruct(self, cg) -> None:
        from .grad_mode_objects import reconstruct

        reconstruct(cg, self)

    def call_method(self, tx, name: str, args, kwargs) -> VariableTracker:
        if name == "__enter__":
            self.enter(tx)
            return ConstantVariable(None)
        if name == "__exit__":
            self.exit(tx)
            return ConstantVariable(None)
        raise Unsupported(f"grad-mode context .{name}")

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        """`torch.no_grad()(fn)`, the decorator: fn, run in this grad mode when called."""
        from .functions import BaseUserFunctionVariable, UserMethodVariable

        if len(args) != 1 or kwargs:
            raise Unsupported("a grad-mode context called with other than one function")
        if not isinstance(args[0], (BaseUserFunctionVariable, UserMethodVariable)):
            raise Unsupported(f"a grad-mode context applied to {args[0]}")
        if self.switched_at_init:  # set_grad_enabled(b)(fn) puts the mode back first
            set_grad_mode(tx, bool(self.previous))
        return GradModeFunction(self.target, args[0])


class GradModeFunction(VariableTracker):
    """A function decorated by a grad-mode context in the frame: each call is inlined
    between entering and leaving that mode (an exception leaves it too)."""

    def __init__(self, target: bool, fn: VariableTracker):
        self.target = target
        self.fn = fn

    def python_type(self) -> type:
        return types.FunctionType

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        ctx = GradModeVariable(self.target)
        ctx.enter(tx)
        try:
            result = self.fn.call_function(tx, args, kwargs)
        except ObservedException:
            ctx.exit(tx)  # (the handler that catches it runs in the mode outside)
            raise
        ctx.exit(tx)
        return result

    def reconstruct(self, cg) -> None:
        cg.add_push_null(lambda: cg.load_const(decorate_with_grad_mode))
        cg.load_const(self.target)
        self.fn.reconstruct(cg)
        cg.call(2)


def decorate_with_grad_mode(target: bool, fn):
    return (torch.enable_grad if target else torch.no_grad)()(fn)


class GradModeDecoratedVariable(VariableTracker):
    """A function under `@torch.no_grad()` / `@torch.enable_grad()`: the call is traced as
    the grad-mode switch, the inlined function, and the switch back."""

    def __init__(self, func: VariableTracker, target: bool, source=None):
        self.func = func
        self.target = target
        self.source = source

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        ctx = GradModeVariable(self.target)
        ctx.enter(tx)
        try:
            return self.func.call_function(tx, args, kwargs)
        finally:
            ctx.exit(tx)


class NullContextVariable(VariableTracker):
    """A profiler context (torch.profiler.profile(), record_function(...)), or an autocast
    that changes nothing, entered in the trace without binding it (`with profile():`): it
    does nothing to compiled code, as in torch.compile; a resume function gets a
    nullcontext's __exit__ in its place."""

    def python_type(self) -> type:
        return contextlib.nullcontext

    def enter(self, tx) -> None:
        pass

    def exit(self, tx) -> None:
        pass

    def reconstruct(self, cg) -> None:
        raise Unsupported("a profiler or autocast context object escaping the frame")


class WithExitVariable(VariableTracker):
    """The bound __exit__ that BEFORE_WITH pushes for a traced context manager."""

    def __init__(self, ctx):
        self.ctx = ctx

    def call_function(self, tx, args, kwargs) -> VariableTracker:
        self.ctx.exit(tx)
        return ConstantVariable(None)

    def reconstruct(self, cg) -> None:
        """A real `__exit__` for a resume function: back to the grad mode outside the block,
        then enter a fresh context of the same kind (BEFORE_WITH leaves its __exit__)."""
        if not isinstance(self.ctx, (NullContextVariable, GradModeVariable)):
            self.ctx.reconstruct_entered(cg)
            return
        if isinstance(self.ctx, NullContextVariable):
            cg.add_push_null(lambda: cg.load_const(contextlib.nullcontext))
            cg.call(0)
            cg.emit("BEFORE_WITH")
            cg.pop_top()
            return
        previous = bool(self.ctx.previous)
        cg.add_push_null(lambda: cg.load_const(torch._C._set_grad_enabled))
        cg.load_const(previous)
        cg.call(1)
        cg.pop_top()
        ctx_type = torch.enable_grad if self.ctx.target else torch.no_grad
        cg.add_push_null(lambda: cg.load_const(ctx_type))
        cg.call(0)
        cg.emit("BEFORE_WITH")
        cg.pop_top()


def set_grad_mode(tx, enabled: bool) -> None:
    """A grad-mode context switching to `enabled`; one switching to the mode the trace is
    in is no op, as torch.compile coalesces it (the mode at the frame's entry is guarded)."""
    if torch.is_grad_enabled() == enabled:
        return
    torch._C._set_grad_enabled(enabled)
    tx.output.create_node("call_function", torch._C._set_grad_enabled, (enabled,), {}, None)
