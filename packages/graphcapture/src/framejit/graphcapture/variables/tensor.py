"""Tensors in the graph (FX node + FakeTensor example) and the wrapping of op results."""

from __future__ import annotations

import math
import operator
import types

import torch

from ..exc import Unsupported
from .base import ConstantVariable, VariableTracker, is_constant_value
from .containers import ListVariable, SizeVariable, TupleVariable
from .sym_node import SYM_TYPES, SymNodeVariable, size_variable, wrap_sym

_SIZE_OPS = {
    "size": torch.ops.aten.sym_size.int,
    "stride": torch.ops.aten.sym_stride.int,
    "numel": torch.ops.aten.sym_numel.default,
}

# Methods whose result depends on tensor *data*: calling them needs a graph break.
DATA_DEPENDENT_METHODS = {
    "item",
    "tolist",
    "numpy",
    "data_ptr",
    "__bool__",
    "__int__",
    "__float__",
    "__index__",
    "nonzero_static",
    "backward",
    "register_hook",
    "storage",
    "untyped_storage",
    "__array__",
}

# Attributes answered from the (static) metadata, without a graph node.
METADATA_ATTRS = {
    "shape",
    "dtype",
    "device",
    "ndim",
    "requires_grad",
    "is_cuda",
    "is_sparse",
    "is_quantized",
    "is_meta",
    "layout",
    "is_mkldnn",
    "is_nested",
}


def _is_legacy_class(value) -> bool:
    """torch.FloatTensor, torch.cuda.HalfTensor, ... (the legacy tensor types)."""
    return isinstance(value, type) and value in torch._tensor_classes


class TensorVariable(VariableTracker):
    """A tensor value: its FX node and its FakeTensor (sizes may be SymInts of the ShapeEnv)."""

    def __init__(
        self, node, example: torch.Tensor, source=None, python_cls=torch.Tensor, own_attrs=None
    ):
        self.node = node
        self.example = example
        self.source = source
        self.python_cls = python_cls  # the real object's class (Parameter for parameters)
        # an input's own __dict__ when it was read (`param._is_hf_initialized = True`)
        self.own_attrs: dict = own_attrs or {}

    def size_items(self, output, name: str = "size") -> list[VariableTracker]:
        values = getattr(self.example, name)()
        op = _SIZE_OPS[name]
        return [size_variable(output, self.node, v, op, d) for d, v in enumerate(values)]

    def python_type(self) -> type:
        return self.python_cls

    def identity(self):
        """What `is` compares: the FakeTensor.  An op that returns its input (`x.add_(1)`,
        `x.to(x.dtype)`) returns the input's FakeTensor, as eager returns the same tensor."""
        return self.example

    def as_proxy(self):
        return self.node

    def as_example(self):
        return self.example

    def has_tensors(self) -> bool:
        return True

    def as_python_constant(self):
        raise Unsupported("a Tensor is not a Python constant")

    def reconstruct(self, cg) -> None:
        if self.source is not None and self.node.op in ("placeholder", "get_attr"):
            cg.load_source(self.source)
        else:
            cg.load_graph_output(self)

    def truth(self, tx) -> bool:
        raise Unsupported("data-dependent branch: if on a Tensor")

    def unpack(self, tx) -> list[VariableTracker]:
        if self.example.dim() == 0:
            raise Unsupported("iteration over a 0-d tensor")
        length = self.size_items(tx.output)[0].as_python_constant()  # a symbol is guarded
        return [
            tx.output.call_op("call_function", operator.getitem, [self, ConstantVariable(i)], {})
            for i in range(length)
        ]

    def _grad(self, tx) -> VariableTracker:
        """`t.grad`: None for a tensor the graph made that needs no grad (it is a leaf,
        nothing accumulates into it in the trace); an input's `.grad` read where it is,
        as a graph input or None, guarded (backward between calls changes it)."""
        from ..sources import AttrSource
        from .builder import wrap

        if self.source is None:
            if self.example.requires_grad:  # eager warns for a non-leaf
                raise Unsupported("Tensor.grad of a tensor the graph made that requires grad")
            return ConstantVariable(None)
        try:
            real = self.source.get(tx.root.f_locals, tx.root.f_globals)
        except Exception:  # the trace cannot read it where it is
            raise Unsupported("Tensor.grad of an input not read through its source") from None
        return wrap(tx, real.grad, AttrSource(self.source, "grad"))

    def var_getattr(self, tx, name: str) -> VariableTracker:
        from .tensor_stores import GRAD_ALIASES

        name = GRAD_ALIASES.get(name, name)
        stored = tx.output.side_effects.pending_attr(self, name)
        if stored is not None:
            return stored
        if name == "shape":
            return SizeVariable(self.size_items(tx.output))
        if name in METADATA_ATTRS:
            return ConstantVariable(getattr(self.example, name))
        if name == "__class__":  # the Python class is part of TENSOR_MATCH
            from .objects import UserDefinedClassVariable

            return UserDefinedClassVariable(self.python_type())
        if name == "grad":
            return self._grad(tx)
        if name in ("grad_fn", "_base", "_version"):
            raise Unsupported(f"Tensor.{name} is not traced")
        if name in self.own_attrs:
            if self.source is None:
                raise Unsupported(f"Tensor attribute {name!r} of its own __dict__, unguardable")
            from ..sources import AttrSource
            from .builder import wrap

            return wrap(tx, self.own_attrs[name], AttrSource(self.source, name))
        if name == "is_leaf":
            if not self.example.requires_grad:
                return ConstantVariable(True)
            if self.node.op in ("call_function", "call_method"):
                return ConstantVariable(False)
            raise Unsupported("Tensor.is_leaf of an input that requires grad (not guarded)")
        try:
            attr = getattr(torch.Tensor, name)
        except AttributeError:
            raise Unsupported(f"Tensor has no attribute {name!r}") from None
        if self.source is not None and _user_python_method(attr):
            return self._user_method(tx, name, attr)
        if callable(attr) and not isinstance(attr, property):
            return TensorMethodVariable(self, name)
        with tx.output.fake_mode:
            try:
                value = getattr(self.example, name)
            except Exception as e:
                raise Unsupported(f"Tensor.{name}: {type(e).__name__}") from e
        if isinstance(value, torch.Tensor):
            node = tx.output.create_node("call_function", getattr, (self.node, name), {}, value)
            return TensorVariable(node, value)
        if is_constant_value(value):
            return ConstantVariable(value)
        raise Unsupported(f"Tensor attribute {name!r} of type {type(value).__name__}")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        from .tensor_stores import GRAD_ALIASES

        if name not in GRAD_ALIASES and (
            name in self.own_attrs or tx.output.side_effects.pending_attr(self, name) is not None
        ):
            # the instance's own attribute shadows a method of the class (`t.f = fn; t.f(t)`)
            return self.var_getattr(tx, name).call_function(tx, args, kwargs)
        attr = getattr(torch.Tensor, name, None)
        if self.source is not None and _user_python_method(attr):
            return self._user_method(tx, name, attr).call_function(tx, args, kwargs)
        return TensorMethodVariable(self, name).call_function(tx, args, kwargs)

    def _user_method(self, tx, name: str, fn: types.FunctionType) -> VariableTracker:
        """A Python function the program set on torch.Tensor (`torch.Tensor.f = f`): inlined as
        eager runs it, guarded by identity where the class holds it (it may be rebound)."""
        from framejit.guards import GuardKind, TypeSource

        from ..sources import AttrSource
        from .functions import UserMethodVariable

        fn_source = AttrSource(TypeSource(self.source), name)
        tx.output.add_guard(fn_source, GuardKind.ID_MATCH, fn, origin=tx.origin())
        return UserMethodVariable(fn, self)

    def __repr__(self) -> str:
        return f"TensorVariable({self.node.name})"


def _user_python_method(attr) -> bool:
    """A plain Python function on torch.Tensor that torch did not define (monkeypatched)."""
    return isinstance(attr, types.FunctionType) and not (
        attr.__module__ == "torch" or (attr.__module__ or "").startswith("torch.")
    )


class TensorMethodVariable(VariableTracker):
    def __init__(self, tensor: TensorVariable, name: str):
        self.tensor = tensor
        self.name = name

    def call_function(self, tx, args: list, kwargs: dict) -> VariableTracker:
        name = self.name
        if name == "item" and not args and not kwargs and tx.output.fullgraph:
            return captured_item(tx, self.tensor)
        if name == "tolist" and not args and not kwargs and tx.output.fullgraph:
            return captured_list(tx, self.tensor)
        if name == "numpy":
            from .numpy_arrays import tensor_numpy

            return tensor_numpy(tx, self.tensor, args, kwargs)
        if name in DATA_DEPENDENT_METHODS:
            raise Unsupported(f"data-dependent: Tensor.{name}()")
        if name == "__iter__" and not args and not kwargs:  # x.__iter__(): its rows
            from .containers import IteratorVariable

            return IteratorVariable(self.tensor.unpack(tx))
        if name in ("size", "stride") and not kwargs:
            return _size_like(tx, self.tensor, name, args)
        if name in ("numel", "nelement") and not args and not kwargs:
            return size_variable(
                tx.output, self.tensor.node, self.tensor.example.numel(), _SIZE_OPS["numel"], None
            )
        if name in ("dim", "ndimension", "numel", "nelement", "element_size", "is_contiguous",
                    "is_floating_point", "is_complex", "get_device"):  # fmt: skip
            values = [a.as_python_constant() for a in args]
            kw = {k: v.as_python_constant() for k, v in kwargs.items()}
            return ConstantVariable(getattr(self.tensor.example, name)(*values, **kw))
        if name == "type" and not args and not kwargs:
            return ConstantVariable(self.tensor.example.type())
        if name == "type" and len(args) == 1 and _is_legacy_class(getattr(args[0], "value", None)):
            # t.type(torch.HalfTensor) is t.type("torch.HalfTensor"): a graph argument FX prints
            cls = args[0].value
            args = [ConstantVariable(f"{cls.__module__}.{cls.__name__}")]
        if name == "__setitem__":
            return setitem_tensor(tx, self.tensor, *args)
        from . import scalar_tensor_args

        rewritten = scalar_tensor_args.rewrite(tx, name, [self.tensor, *args], kwargs)
        if rewritten is not None:
            return rewritten
        return tx.output.call_op("call_method", name, [self.tensor, *args], kwargs)


def setitem_tensor(tx, tensor, index, value) -> VariableTracker:
    tx.output.call_op("call_function", operator.setitem, [tensor, index, value], {})
    return ConstantVariable(None)


def _size_like(tx, tensor: TensorVariable, name: str, args: list) -> VariableTracker:
    items = tensor.size_items(tx.output, name)
    if args:
        dim = args[0].as_python_constant()
        try:
            return items[dim]
        except (IndexError, TypeError) as e:
            raise Unsupported(f"Tensor.{name}({dim!r}): {type(e).__name__}") from e
    return SizeVariable(items) if name == "size" else TupleVariable(items)


class ItemVariable(SymNodeVariable):
    """`t.item()` in a fullgraph trace: a graph node whose value is an unbacked symbol (as
    torch.compile captures it with fullgraph=True).  It can flow to the graph's outputs;
    Python code that needs the number itself cannot be traced."""

    def as_python_constant(self):
        raise Unsupported("data-dependent: the value of Tensor.item() used as a Python value")

    def truth(self, tx) -> bool:
        raise Unsupported("data-dependent: a branch on the value of Tensor.item()")

    def call_method(self, tx, name: str, args: list, kwargs: dict) -> VariableTracker:
        raise Unsupported(f"data-dependent: Tensor.item() value .{name}()")


def captured_item(tx, tensor: TensorVariable) -> VariableTracker:
    output = tx.output
    shape_env = output.shapes.shape_env
    if tensor.example.numel() != 1:
        raise Unsupported("Tensor.item() of a tensor without exactly one element")
    dtype = tensor.example.dtype
    if dtype is torch.bool:
        example = shape_env.create_unbacked_symbool()
    elif dtype.is_floating_point:
        example = shape_env.create_unbacked_symfloat()
    elif not dtype.is_complex:
        example = shape_env.create_unbacked_symint()
    else:
        raise Unsupported("data-dependent: Tensor.item() of a complex tensor")
    node = output.create_node("call_method", "item", (tensor.node,), {}, example)
    return ItemVariable(node, example, output.shapes)


CAPTURED_LIST_MAX_ELEMENTS = 1024  # a bigger tensor's tolist() is a break (node count)


def captured_list(tx, tensor: TensorVariable) -> VariableTracker:
    """`t.tolist()` in a fullgraph trace: nested lists of `t[i][j].item()` (each an unbacked
    symbol, as torch.compile captures scalar outputs); a 0-d tensor gives its item."""
    example = tensor.example
    # the list's lengths are Python's: symbolic sizes are specialised (guarded), as
    # torch.compile specialises them for tolist()
    shape = [size.as_python_constant() for size in tensor.size_items(tx.output)]
    if math.prod(shape) > CAPTURED_LIST_MAX_ELEMENTS:
        raise Unsupported(f"Tensor.tolist() of more than {CAPTURED_LIST_MAX_ELEMENTS} elements")
    if example.dim() == 0:
        return captured_item(tx, tensor)
    rows = [
        tx.output.call_op("call_function", operator.getitem, [tensor, ConstantVariable(i)], {})
        for i in range(shape[0])
    ]
    return ListVariable([captured_list(tx, row) for row in rows])


def wrap_op_result(output, node, example) -> VariableTracker:
    """Turn an op's example result into trackers; non-tensor results of pure ops fold to constants."""
    if isinstance(example, torch.Tensor):
        return TensorVariable(node, example)
    if isinstance(example, SYM_TYPES):
        return wrap_sym(output, node, example)
    if isinstance(example, torch.Size):
        if any(isinstance(s, torch.SymInt) for s in example):
            raise Unsupported("a torch.Size with symbolic sizes from an op")
        _drop_if_unused(output, node)
        return SizeVariable([ConstantVariable(int(s)) for s in example])
    if isinstance(example, (tuple, list)):
        items: list[VariableTracker] = []
        for i, item in enumerate(example):
            if isinstance(item, torch.Tensor):
                items.append(TensorVariable(output.getitem_node(node, i, item), item))
            elif isinstance(item, SYM_TYPES):
                items.append(wrap_sym(output, output.getitem_node(node, i, item), item))
            elif is_constant_value(item):
                items.append(ConstantVariable(item))
            else:
                raise Unsupported(f"op result element of type {type(item).__name__}")
        if type(example) is list:
            return ListVariable(items)
        fields = getattr(type(example), "_fields", None) or getattr(type(example), "n_fields", None)
        if fields is not None and type(example) is not tuple:
            return TupleVariable(items, namedtuple_cls=type(example))
        return TupleVariable(items)
    if example is None:
        if not node.all_input_nodes:
            # a helper on constants (F._canonical_mask(None, ...)): nothing for the graph;
            # one on graph values (setitem) is kept for its effect
            _drop_if_unused(output, node)
        return ConstantVariable(None)
    if is_constant_value(example):
        _drop_if_unused(output, node)
        return ConstantVariable(example)
    raise Unsupported(f"op result of type {type(example).__name__}")


def _drop_if_unused(output, node) -> None:
    # a call kept for its effect stays (torch._C._set_grad_enabled from a user's own
    # context manager: dropping it ran the block in the mode outside); a check of
    # constants (torch._assert(True, ...)) was made by running it, as torch.compile drops it
    if not node.users and (not node.is_impure() or node.target is torch._assert):
        output.graph.erase_node(node)
