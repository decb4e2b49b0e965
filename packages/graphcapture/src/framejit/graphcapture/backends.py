"""Backend registry: built-in "eager", user registrations, and the `framejit.backends` entry points."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points

import torch

from .exc import UnknownBackendError

Backend = Callable[[torch.fx.GraphModule, list], Callable]

ENTRY_POINT_GROUP = "framejit.backends"
_registry: dict[str, Backend] = {}
# Backends that live in other distributions, for a helpful error when they are missing.
_KNOWN_EXTERNAL = {"inductor-lite": "framejit-inductor-lite"}


def eager(gm: torch.fx.GraphModule, example_inputs: list) -> Callable:
    """Run the captured graph as its Python code (autograd flows through it)."""
    return gm.forward


def register_backend(name: str, fn: Backend) -> Backend:
    if not callable(fn):
        raise TypeError(f"register_backend({name!r}, ...): the backend must be callable")
    _registry[name] = fn
    return fn


def _entry_point_backends() -> dict[str, object]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def list_backends() -> list[str]:
    return sorted(set(_registry) | set(_entry_point_backends()))


def lookup_backend(backend: str | Backend) -> Backend:
    """A backend callable from a name (registry, then entry points) or a callable."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a name or a callable, got {type(backend).__name__}")
    if backend in _registry:
        return _registry[backend]
    found = _entry_point_backends().get(backend)
    if found is not None:
        fn = found.load()
        _registry[backend] = fn
        return fn
    message = f"unknown framejit backend {backend!r}; available: {', '.join(list_backends())}"
    if backend in _KNOWN_EXTERNAL:
        message += f". Install {_KNOWN_EXTERNAL[backend]} (pip install {_KNOWN_EXTERNAL[backend]}) to get it"
    raise UnknownBackendError(message)


def backend_name(backend: str | Backend) -> str:
    if isinstance(backend, str):
        return backend
    return getattr(backend, "__name__", type(backend).__name__)


register_backend("eager", eager)
