"""Shared fixtures: run tensor checks through both the native and the pure-Python body."""

from __future__ import annotations

import pytest

from framejit.guards import native


@pytest.fixture(params=["native", "python"])
def tensor_backend(request, monkeypatch):
    """Compile guard sets with the native ___check_tensors, or force the Python one."""
    if request.param == "native":
        if native.load(wait=True) is None:
            pytest.fail(f"native tensor guards did not build: {native.unavailable_reason()}")
    else:
        monkeypatch.setattr(native, "load", lambda: None)
    return request.param
