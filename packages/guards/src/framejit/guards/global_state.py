"""Global torch state a compiled graph depends on: snapshot, check, and its guard.

``global_state_guard()`` captures the current state into one ``GLOBAL_STATE`` guard.
It renders as several code parts, named as TorchDynamo names them::

    ___check_global_state()                  # default dtype, autocast (per device, and
                                             # its cache), deterministic warn-only,
                                             # torch-function disabled state, intra-op
                                             # thread count, torch function/dispatch
                                             # mode stack depths
    ___is_grad_enabled()                     # or: not ___is_grad_enabled()
    not ___are_deterministic_algorithms_enabled()
    ___is_torch_function_enabled()
    utils_device.CURRENT_DEVICE == None      # the default device (torch.set_default_device)

Grad mode, deterministic algorithms and torch-function state are separate parts
because they change most often and say the most in a failure reason.
``___check_global_state`` is the native ``GlobalState`` when the helper builds, else
the pure-Python closure below; both compare the same fields the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.utils._device as utils_device

from .source import GlobalStateSource

AUTOCAST_DEVICES = (
    "cpu",
    "cuda",
    "xpu",
    "mps",
    "hpu",
    "xla",
    "ipu",
    "mtia",
    "maia",
    "privateuseone",
)

is_grad_enabled = torch.is_grad_enabled
are_deterministic_algorithms_enabled = torch._C._get_deterministic_algorithms
is_torch_function_enabled = torch._C._is_torch_function_enabled
_get_default_dtype = torch.get_default_dtype
_warn_only = torch._C._get_deterministic_algorithms_warn_only
_all_disabled = torch._C._is_torch_function_all_disabled
_num_threads = torch.get_num_threads
_function_modes = torch._C._len_torch_function_stack
_dispatch_modes = torch._C._len_torch_dispatch_stack


def torch_function_state() -> int:
    """0 enabled, 1 subclasses disabled, 2 all disabled (ATen's TorchFunctionDisabledState)."""
    if is_torch_function_enabled():
        return 0
    return 2 if _all_disabled() else 1


def autocast_state() -> tuple[bool | None, tuple]:
    """(cache enabled or None when no autocast is on, ((device, enabled, dtype or None), ...))."""
    per_device = []
    for d in AUTOCAST_DEVICES:
        on = torch.is_autocast_enabled(d)
        per_device.append((d, on, torch.get_autocast_dtype(d) if on else None))
    any_on = any(on for _, on, _ in per_device)
    return (torch.is_autocast_cache_enabled() if any_on else None, tuple(per_device))


@dataclass(frozen=True)
class GlobalStateSnapshot:
    grad_enabled: bool
    deterministic_algorithms: bool
    torch_function_enabled: bool
    default_device: torch.device | None
    default_dtype: torch.dtype
    deterministic_warn_only: bool
    torch_function_state: int
    num_threads: int
    function_mode_stack_len: int
    dispatch_mode_stack_len: int
    autocast: tuple

    @classmethod
    def capture(cls) -> GlobalStateSnapshot:
        return cls(
            grad_enabled=is_grad_enabled(),
            deterministic_algorithms=are_deterministic_algorithms_enabled(),
            torch_function_enabled=is_torch_function_enabled(),
            default_device=utils_device.CURRENT_DEVICE,
            default_dtype=_get_default_dtype(),
            deterministic_warn_only=_warn_only(),
            torch_function_state=torch_function_state(),
            num_threads=_num_threads(),
            function_mode_stack_len=_function_modes(),
            dispatch_mode_stack_len=_dispatch_modes(),
            autocast=autocast_state(),
        )

    def native_args(self) -> tuple:
        """The tuple the native GlobalState constructor takes."""
        cache, per_device = self.autocast
        return (
            self.default_dtype,
            self.deterministic_warn_only,
            self.torch_function_state,
            self.num_threads,
            self.function_mode_stack_len,
            self.dispatch_mode_stack_len,
            cache,
            tuple((torch.device(d), on, dtype) for d, on, dtype in per_device),
        )

    def differences(self, other: GlobalStateSnapshot) -> list[str]:
        """Readable 'field: expected X, actual Y' for each field that differs."""
        out = []
        for name in self.__dataclass_fields__:
            expected, actual = getattr(self, name), getattr(other, name)
            if expected != actual:
                if name == "autocast":
                    expected, actual = _autocast_summary(expected), _autocast_summary(actual)
                out.append(f"{name}: expected {expected}, actual {actual}")
        return out


def _autocast_summary(state: tuple) -> str:
    cache, per_device = state
    on = [f"{d}:{dtype}" for d, enabled, dtype in per_device if enabled]
    return f"enabled on {', '.join(on)} (cache {cache})" if on else "off"


def make_check_global_state(expected: GlobalStateSnapshot) -> Any:
    """The ``___check_global_state`` callable for one snapshot (native when available)."""
    from . import native

    module = native.load()
    if module is not None:
        return module.GlobalState(expected.native_args())
    rest = (
        expected.default_dtype,
        expected.deterministic_warn_only,
        expected.torch_function_state,
        expected.num_threads,
        expected.function_mode_stack_len,
        expected.dispatch_mode_stack_len,
    )
    autocast = expected.autocast

    def ___check_global_state() -> bool:
        return (
            _get_default_dtype(),
            _warn_only(),
            torch_function_state(),
            _num_threads(),
            _function_modes(),
            _dispatch_modes(),
        ) == rest and autocast_state() == autocast

    return ___check_global_state


def global_state_guard(origin: str | None = None):
    """One GLOBAL_STATE guard holding the state of this thread right now."""
    from .guard import Guard, GuardKind

    return Guard(GlobalStateSource(), GuardKind.GLOBAL_STATE, GlobalStateSnapshot.capture(), origin)
