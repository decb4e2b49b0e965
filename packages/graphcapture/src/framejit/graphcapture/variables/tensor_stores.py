"""Attribute stores on tensors: `t.flag = v`, `t.grad = g` / `t._grad = g`, `t.data = y`.

- An attribute the Tensor class does not define lands in the tensor's __dict__: recorded
  as a side effect (replayed once on the input, or on the graph output the tensor is) and
  read back by the trace.
- `grad` and `_grad` are one slot (the same C setter): a store eager accepts (None, or a
  tensor of the same sizes, dtype, device and layout, not the tensor itself) is replayed
  the same way; reads of either name see it.
- `t.data = y` on a frame input is traced as torch.compile traces it: `t.set_(y)` under
  no_grad, then the version counter put back (`.data =` does not bump it, set_ does).
  Later ops in the graph see t with y's storage and metadata, as eager does.
Anything else (requires_grad, a dtype-changing `.data =`, a tensor made in the frame) is
a graph break: eager runs the store.
"""

from __future__ import annotations

import torch

from ..exc import Unsupported
from ..sources import source_name
from .base import VariableTracker

GRAD_ALIASES = {"_grad": "grad"}


def is_instance_attr_of_tensor(name: str) -> bool:
    """`t.<name> = v` stores into the tensor's __dict__ (no Tensor property or method)."""
    return not name.startswith("__") and not hasattr(torch.Tensor, name)


def store_tensor_attr(tx, obj, name: str, value: VariableTracker) -> None:
    name = GRAD_ALIASES.get(name, name)
    if is_instance_attr_of_tensor(name):
        tx.output.side_effects.store_attr(obj, name, value)
    elif name == "grad":
        _store_grad(tx, obj, value)
    elif name == "data":
        _store_data(tx, obj, value)
    else:
        raise Unsupported(f"store to Tensor.{name}")


def _store_grad(tx, obj, value: VariableTracker) -> None:
    from .tensor import TensorVariable

    if obj.source is None and obj.example.requires_grad:
        # (a non-leaf's .grad: eager warns on later reads; not modelled)
        raise Unsupported("Tensor.grad store on a tensor the graph made that requires grad")
    if value.is_python_constant():
        if value.as_python_constant() is not None:
            raise Unsupported("TypeError: assigned grad expected to be a Tensor or None")
    elif not isinstance(value, TensorVariable):
        raise Unsupported(f"Tensor.grad store of {value}")
    elif value.identity() is obj.identity():
        raise Unsupported("RuntimeError: can't assign Variable as its own grad")
    elif not _same_meta(obj.example, value.example):
        raise Unsupported("RuntimeError: assigned grad does not match the tensor")
    tx.output.side_effects.store_attr(obj, "grad", value)


def _same_meta(a: torch.Tensor, b: torch.Tensor) -> bool:
    """What eager's grad setter checks, on static sizes only (a symbolic size is a break)."""
    sizes = (*a.shape, *b.shape)
    return (
        all(type(s) is int for s in sizes)
        and a.shape == b.shape
        and (a.dtype, a.device, a.layout) == (b.dtype, b.device, b.layout)
    )


def _store_data(tx, obj, value: VariableTracker) -> None:
    from .objects import set_grad_mode
    from .tensor import TensorVariable

    if obj.source is None:
        raise Unsupported("Tensor.data store on a tensor made in the frame")
    if not isinstance(value, TensorVariable):
        raise Unsupported(f"Tensor.data store of {value}")
    if value.example.dtype != obj.example.dtype:
        raise Unsupported("Tensor.data store of a tensor of another dtype")
    if tx.output.side_effects.pending_attr(obj, "grad") is not None:
        raise Unsupported("Tensor.data store after a .grad store in the frame")
    _order_inputs_for_set(tx, obj, value)
    before = torch.is_grad_enabled()
    set_grad_mode(tx, False)
    out = tx.output.call_op("call_function", torch.Tensor.set_, [obj, value], {})
    set_grad_mode(tx, before)
    tx.output.create_node(
        "call_function", restore_version_after_set, (out.as_proxy(),), {}, out.as_example()
    )
    restore_version_after_set(obj.example)
    # later uses read the input itself (set_ swapped its storage in place), as in
    # torch.compile's graph


def _order_inputs_for_set(tx, obj, value) -> None:
    """AOTAutograd-based backends apply the inputs' set_ mutations in placeholder order, so
    in a chain of swaps (x.data = y; y.data = z) x's placeholder must come before y's, or x
    gets z's storage.  The placeholder of a store's target is moved before its value's;
    any other chain (a target swapped twice, a cycle, symbolic sizes) stays a break."""
    output = tx.output
    stores = output.data_stores  # (target placeholder, value placeholder or None) per store
    target = _placeholder_of(output, obj)
    source = _placeholder_of(output, value)
    targets = {t for t, _ in stores}
    involved = targets | {v for _, v in stores}
    if stores and (
        target in targets
        or (source is not None and source in involved)
        or output.sym_inputs
        or target is None
    ):
        raise Unsupported("a second Tensor.data store on a tensor one already swapped")
    stores.append((target, source))
    if target is None or source is None:
        return
    order = [n for n in output.graph.nodes if n.op == "placeholder"]
    if order.index(target) > order.index(source):
        source.prepend(target)  # fx moves the node
        if output._last_placeholder is target:
            output._last_placeholder = order[order.index(target) - 1]


def _placeholder_of(output, tracker):
    found = output.inputs.get(source_name(tracker.source)) if tracker.source else None
    return found.node if found is not None else None


def restore_version_after_set(t: torch.Tensor) -> torch.Tensor:
    """Undo the version bump of the set_ that stands for `.data =` (which makes none)."""
    version = t._version
    torch._C._autograd._unsafe_set_version_counter((t,), (max(version - 1, 0),))
    return t
