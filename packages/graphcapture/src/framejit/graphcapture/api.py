"""The user API: compile, optimize, disable, run, reset, mark_dynamic, and the module wrapper."""

from __future__ import annotations

import copy
import functools
from typing import Any

import torch

from framejit import frameeval as fe

from . import dim_policy, module_policy, resume, top_frame
from .backends import lookup_backend
from .convert_frame import reset_counters
from .dim_policy import DYNAMIC_BOUNDS_ATTR, DYNAMIC_DIMS_ATTR, STATIC_DIMS_ATTR
from .eval_frame import FrameCallback


def _innermost(fn):
    """Through earlier optimize/run wrappers (not disable's): nesting them wraps the
    original function again, so the outermost one decides, as in torch._dynamo."""
    while getattr(fn, "_framejit_orig", None) is not None and not getattr(
        fn, "_framejit_disabled", False
    ):
        fn = fn._framejit_orig
    return fn


def _wrap_with_callback(fn, callback, frame_around: bool = True):
    """`fn` run with `callback` set; `frame_around`: a callable that starts no captured
    frame of its own is called from one (top_frame.py; False for framejit's own
    wrappers, whose callees' frames are the ones captured)."""
    if callback is not fe.SKIP:
        fn = _innermost(fn)
    if isinstance(fn, torch.nn.Module):
        return OptimizedModule(fn, callback)
    if not callable(fn):
        raise TypeError(f"framejit: expected a function or nn.Module, got {type(fn).__name__}")
    target = fn
    if frame_around and isinstance(callback, FrameCallback) and top_frame.needs_frame(fn):
        target = top_frame.frame_around(fn)

    capturing = isinstance(callback, FrameCallback)

    @functools.wraps(fn)
    def framejit_wrapper(*args, **kwargs):
        if capturing and _under_outer_tracer():
            return fn(*args, **kwargs)
        previous = fe.set_callback(callback)
        try:
            return target(*args, **kwargs)
        finally:
            fe.set_callback(previous)

    framejit_wrapper._framejit_orig = fn
    framejit_wrapper._framejit_target = target  # what it calls: fn, or a frame around it
    framejit_wrapper._framejit_callback = callback
    return framejit_wrapper


def _under_outer_tracer() -> bool:
    """torch.jit.trace or torch.fx.symbolic_trace of a compiled callable: the compiled graph
    would hide its ops from that tracer (a backend's kernels are opaque to it).  Under
    torch.jit.trace the call raises, with torch.compile's message, rather than record a
    wrong trace; under FX (True) the callable runs uncompiled, so FX records its ops."""
    if torch._C._is_tracing():
        raise RuntimeError(
            "Detected that you are using FX to torch.jit.trace a framejit-compiled function. "
            "This is not supported (trace the function itself)."
        )
    return torch.fx._symbolic_trace.is_fx_symbolic_tracing()


class _OptimizeContext:
    """Decorator and context manager that switches capture on (callback) for what it wraps."""

    def __init__(self, callback):
        self.callback = callback
        self._previous: list[Any] = []

    def __call__(self, fn):
        return _wrap_with_callback(fn, self.callback)

    def __enter__(self):
        self._previous.append(fe.set_callback(self.callback))
        return self

    def __exit__(self, *exc_info):
        fe.set_callback(self._previous.pop())
        return False


def optimize(backend="eager", *, nopython: bool = False, fullgraph: bool = False, dynamic=None):
    """`@optimize(backend)` or `with optimize(backend):` (torch._dynamo.optimize's shape)."""
    return _OptimizeContext(_callback_for(backend, fullgraph or nopython, dynamic))


# (backend identity, name, fullgraph, dynamic) -> (backend, its callback).  A cache entry
# serves only the callback that compiled it (frameeval's entry owner): an entry compiled
# for one backend or fullgraph setting is not run for another, while compiling the same
# function again with the same backend and settings reuses what is compiled, as
# torch.compile's backend-match guard does.  The backend is held so its id stays its own.
_callbacks: dict[tuple, tuple[Any, FrameCallback]] = {}


def _callback_for(backend, fullgraph: bool, dynamic) -> FrameCallback:
    backend_fn = lookup_backend(backend)
    name = backend if isinstance(backend, str) else None
    key = (id(backend_fn), name, bool(fullgraph), dynamic)
    found = _callbacks.get(key)
    if found is not None and found[0] is backend_fn:
        return found[1]
    callback = FrameCallback(
        _NamedBackend(backend_fn, backend), fullgraph=fullgraph, dynamic=dynamic
    )
    _callbacks[key] = (backend_fn, callback)
    return callback


class _NamedBackend:
    """A backend callable that remembers the name it was asked for (for records and logs)."""

    def __init__(self, fn, requested):
        self.fn = fn
        self.__name__ = (
            requested if isinstance(requested, str) else getattr(fn, "__name__", type(fn).__name__)
        )

    def __call__(self, gm, example_inputs):
        return self.fn(gm, example_inputs)


def compile(model=None, *, backend="eager", fullgraph: bool = False, dynamic=None):
    """Compile a function, method or nn.Module; usable as `@compile` or `@compile(backend=...)`."""
    if model is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph, dynamic=dynamic)
    return optimize(backend, fullgraph=fullgraph, dynamic=dynamic)(model)


compile._framejit_nested_compile = True  # traced in a compiled frame: fn inlined (nested_compile)


def disable(fn=None):
    """Run `fn` (and everything it calls) without capture; tracing a call to it is a graph break."""
    if fn is None:
        return _OptimizeContext(fe.SKIP)
    wrapper = _wrap_with_callback(fn, fe.SKIP)
    wrapper._framejit_disabled = True
    return wrapper


def run(fn=None):
    """Use already compiled code for `fn`, never compile (misses run eagerly)."""
    if fn is None:
        return _OptimizeContext(fe.RUN_ONLY)
    return _wrap_with_callback(fn, fe.RUN_ONLY)


def reset() -> None:
    """Forget every compiled frame (caches, resume functions, counters)."""
    fe.reset()
    _callbacks.clear()
    resume.clear_cache()
    dim_policy.reset()
    module_policy.reset()
    reset_counters()


def mark_dynamic(
    tensor: torch.Tensor,
    dim: int | list[int] | tuple[int, ...],
    *,
    min: int | None = None,
    max: int | None = None,
) -> None:
    """Trace `dim` of `tensor` as a symbolic size from its first compile (torch's mark_dynamic).

    The guards then hold for every size in [max(2, min), max]; code that forces the size to
    a constant raises ConstraintViolationError naming the line.
    """
    dims = _dims(tensor, dim, "mark_dynamic")
    existing = set(getattr(tensor, DYNAMIC_DIMS_ATTR, ()) or ())
    existing.update(dims)
    setattr(tensor, DYNAMIC_DIMS_ATTR, existing)
    if min is not None or max is not None:
        bounds = dict(getattr(tensor, DYNAMIC_BOUNDS_ATTR, None) or {})
        bounds.update(dict.fromkeys(dims, (min, max)))
        setattr(tensor, DYNAMIC_BOUNDS_ATTR, bounds)


def mark_static(tensor: torch.Tensor, dim: int | list[int] | tuple[int, ...] | None = None) -> None:
    """Never trace `dim` (default: every dim) of `tensor` as a symbol, whatever `dynamic=` says."""
    dims = range(tensor.dim()) if dim is None else _dims(tensor, dim, "mark_static")
    existing = set(getattr(tensor, STATIC_DIMS_ATTR, ()) or ())
    existing.update(dims)
    setattr(tensor, STATIC_DIMS_ATTR, existing)


def _dims(tensor, dim, what: str) -> list[int]:
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{what} expects a Tensor, got {type(tensor).__name__}")
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -tensor.dim() <= d < tensor.dim():
            raise IndexError(f"{what}: dim {d} out of range for a {tensor.dim()}-d tensor")
    return [d % tensor.dim() for d in dims]


def _caller(mod: torch.nn.Module):
    """`mod(...)` with `type(mod).__call__` looked up at each call, as eager does (a bound
    `mod.__call__` taken once would miss `type(mod).__call__ = other` between calls)."""

    @functools.wraps(mod.__call__)
    def call(*args, **kwargs):
        return type(mod).__call__(mod, *args, **kwargs)

    return call


class OptimizedModule(torch.nn.Module):
    """Wraps an nn.Module: calls run its forward under capture; everything else is the module's."""

    _DELEGATED = {"_orig_mod", "_framejit_callback", "_framejit_call"}

    def __init__(self, mod: torch.nn.Module, callback):
        object.__setattr__(self, "_orig_mod", mod)
        object.__setattr__(self, "_framejit_callback", callback)
        # a forward that starts no captured frame (a torch.nn module's, as under
        # torch.compile) is called from one: `mod(...)` there, hooks and forward inlined
        call = _caller(mod)
        if top_frame.needs_frame(getattr(mod, "forward", None)):
            call = top_frame.frame_around(mod)
        object.__setattr__(self, "_framejit_call", _wrap_with_callback(call, callback, False))

    def __call__(self, *args, **kwargs):
        return self._framejit_call(*args, **kwargs)

    @property
    def dynamo_ctx(self) -> _OptimizeContext:
        """The capture context this module runs under, to apply to other callables
        (`model.training_step = compiled.dynamo_ctx(model.training_step)`), as
        torch.compile's OptimizedModule.dynamo_ctx."""
        return _OptimizeContext(self._framejit_callback)

    def forward(self, *args, **kwargs):
        return self._framejit_call(*args, **kwargs)

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "_orig_mod"), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._orig_mod, name)

    def __dir__(self):
        return dir(self._orig_mod)

    def __repr__(self) -> str:
        return f"OptimizedModule({self._orig_mod!r})"

    def __deepcopy__(self, memo):
        # the copy captures calls of the copied module: the generic copy would keep the
        # bound call of the original (a function is copied as itself)
        return OptimizedModule(copy.deepcopy(self._orig_mod, memo), self._framejit_callback)

    # a container module's protocol (ModuleList, Sequential): an empty one is falsy
    def __bool__(self) -> bool:
        return bool(self._orig_mod)

    def __len__(self) -> int:
        return len(self._orig_mod)

    def __iter__(self):
        return iter(self._orig_mod)

    def __getitem__(self, index):
        return self._orig_mod[index]

    # nn.Module's own methods read instance state this wrapper does not have: delegate.
    def state_dict(self, *args, **kwargs):
        return self._orig_mod.state_dict(*args, **kwargs)

    def load_state_dict(self, *args, **kwargs):
        return self._orig_mod.load_state_dict(*args, **kwargs)

    def train(self, mode: bool = True):
        self._orig_mod.train(mode)
        return self

    def eval(self):
        self._orig_mod.eval()
        return self

    def to(self, *args, **kwargs):
        self._orig_mod.to(*args, **kwargs)
        return self

    def cpu(self):
        self._orig_mod.cpu()
        return self

    def double(self):
        self._orig_mod.double()
        return self

    def float(self):
        self._orig_mod.float()
        return self

    def requires_grad_(self, requires_grad: bool = True):
        self._orig_mod.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        self._orig_mod.zero_grad(set_to_none)

    def apply(self, fn):
        self._orig_mod.apply(fn)
        return self

    @property
    def training(self) -> bool:  # type: ignore[override]
        return self._orig_mod.training


for _method in (
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
    "children",
    "named_children",
    "modules",
    "named_modules",
    "register_buffer",
    "register_parameter",
    "add_module",
    "register_forward_hook",
    "register_forward_pre_hook",
    "get_submodule",
    "get_parameter",
    "extra_repr",
    "half",
    "cuda",
    "type",
):

    def _make(name):
        def delegated(self, *args, **kwargs):
            result = getattr(self._orig_mod, name)(*args, **kwargs)
            return self if result is self._orig_mod else result

        delegated.__name__ = name
        return delegated

    setattr(OptimizedModule, _method, _make(_method))
