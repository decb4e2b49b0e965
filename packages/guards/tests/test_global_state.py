"""GLOBAL_STATE: passes in the traced state, fails when any captured piece of state changes."""

from __future__ import annotations

import contextlib

import pytest
import torch
from guard_helpers import fails, passes

from framejit.guards import GlobalStateSnapshot, compile_guards, global_state_guard
from framejit.guards.global_state import make_check_global_state


@contextlib.contextmanager
def default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@contextlib.contextmanager
def default_device(device):
    torch.set_default_device(device)
    try:
        yield
    finally:
        torch.set_default_device(None)


@contextlib.contextmanager
def deterministic(on, warn_only=False):
    old, old_warn = (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
    )
    torch.use_deterministic_algorithms(on, warn_only=warn_only)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old, warn_only=old_warn)


@contextlib.contextmanager
def num_threads(n):
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


class NoopFunctionMode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class NoopDispatchMode(torch.utils._python_dispatch.TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


CHANGES = {
    "no_grad": (torch.no_grad, "grad_enabled: expected True, actual False"),
    "default_dtype": (
        lambda: default_dtype(torch.float64),
        "default_dtype: expected torch.float32, actual torch.float64",
    ),
    "default_device": (
        lambda: default_device("meta"),
        "default_device: expected None, actual meta",
    ),
    "device_context": (
        lambda: torch.device("meta"),
        "function_mode_stack_len: expected 0, actual 1",
    ),
    "deterministic": (
        lambda: deterministic(True),
        "deterministic_algorithms: expected False, actual True",
    ),
    "deterministic_warn_only": (
        lambda: deterministic(True, warn_only=True),
        "deterministic_warn_only",
    ),
    "torch_function_subclasses_disabled": (
        torch._C.DisableTorchFunctionSubclass,
        "torch_function_enabled: expected True, actual False",
    ),
    "torch_function_all_disabled": (
        torch._C.DisableTorchFunction,
        "torch_function_state: expected 0, actual 2",
    ),
    "autocast_cpu": (
        lambda: torch.autocast("cpu"),
        "autocast: expected off, actual enabled on cpu:torch.bfloat16",
    ),
    "autocast_cpu_fp16": (lambda: torch.autocast("cpu", dtype=torch.float16), "autocast"),
    "num_threads": (lambda: num_threads(max(1, torch.get_num_threads() + 1)), "num_threads"),
    "function_mode": (NoopFunctionMode, "function_mode_stack_len: expected 0, actual 1"),
    "dispatch_mode": (NoopDispatchMode, "dispatch_mode_stack_len: expected 0, actual 1"),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_fails(tensor_backend, change):
    make_ctx, detail = CHANGES[change]
    guards = [global_state_guard()]
    passes(guards, {})
    with make_ctx():
        reason = fails(guards, {})
        assert detail in reason
        inside = [global_state_guard()]
        passes(inside, {})
    fails(inside, {})
    passes(guards, {})


def test_autocast_dtype_change_while_enabled(tensor_backend):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        guards = [global_state_guard()]
        passes(guards, {})
    with torch.autocast("cpu", dtype=torch.float16):
        fails(guards, {})


def test_global_state_code_parts_and_closure_names():
    fn = compile_guards([global_state_guard()], {})
    assert fn.code_parts == [
        "___check_global_state()",
        "___is_grad_enabled()",
        "not ___are_deterministic_algorithms_enabled()",
        "___is_torch_function_enabled()",
        "utils_device.CURRENT_DEVICE == None",
    ]
    with torch.no_grad(), default_device("meta"):
        fn2 = compile_guards([global_state_guard()], {})
    assert "not ___is_grad_enabled()" in fn2.code_parts
    assert "utils_device.CURRENT_DEVICE == device(type='meta')" in fn2.code_parts
    with torch.no_grad(), default_device("meta"):
        assert fn2({})
    assert not fn2({})
    assert set(fn.__code__.co_freevars) == {
        "___check_global_state",
        "___is_grad_enabled",
        "___are_deterministic_algorithms_enabled",
        "___is_torch_function_enabled",
        "utils_device",
    }


def test_native_and_python_check_global_state_agree(monkeypatch):
    from framejit.guards import native

    snap = GlobalStateSnapshot.capture()
    native_check = make_check_global_state(snap)
    monkeypatch.setattr(native, "load", lambda: None)
    python_check = make_check_global_state(snap)
    assert native_check is not python_check and type(native_check) is not type(python_check)
    for make_ctx, _ in CHANGES.values():
        assert native_check() and python_check()
        with make_ctx():
            assert native_check() == python_check()
