"""Version objects: `torch.__version__` (a TorchVersion, a str subclass comparing as a
version) and packaging's `Version`, as model code compares them
(`version.parse(torch.__version__) >= version.parse("2.0")`).

Both are immutable records whose methods are pure: one read from the frame's globals is
guarded by identity (another object there recompiles) and then folded like a constant;
`packaging.version.parse(s)` / `Version(s)` of a constant string is folded to the Version
it makes (an invalid string raises InvalidVersion eagerly: a break).
"""

from __future__ import annotations

import sys

from torch.torch_version import TorchVersion

from .base import ConstantVariable, VariableTracker, fold


def _packaging_version():
    return sys.modules.get("packaging.version")


def is_version(value) -> bool:
    """A TorchVersion, or a packaging Version its __init__ has finished building (one
    still being built, `self` in Version.__init__, is no record yet)."""
    if type(value) is TorchVersion:
        return True
    module = _packaging_version()
    if module is None or type(value) is not module.Version:
        return False
    try:
        str(value)
        hash(value)
    except Exception:
        return False
    return True


class VersionVariable(ConstantVariable):
    """A TorchVersion or packaging Version: a constant whose identity was guarded (read
    from a source) or that the trace folded from a constant string."""

    def python_type(self) -> type:
        return type(self.value)

    def __repr__(self) -> str:
        return f"VersionVariable({str(self.value)!r})"


def _parse(make):
    def handler(tx, text=None, **kwargs) -> VariableTracker | None:
        if text is None or kwargs or not text.is_python_constant():
            return None
        value = text.as_python_constant()
        if not isinstance(value, str):
            return None
        return VersionVariable(fold(make, str(value)))

    return handler


def version_models() -> dict:
    """packaging.version's constructors, when packaging is installed."""
    try:
        from packaging import version
    except ImportError:
        return {}
    return {version.parse: _parse(version.parse), version.Version: _parse(version.Version)}
