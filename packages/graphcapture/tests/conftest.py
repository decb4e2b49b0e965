"""Shared fixtures: a fresh framejit state per test, and internal errors made loud."""

from __future__ import annotations

import pytest

from framejit import graphcapture as fj


@pytest.fixture(autouse=True)
def _fresh_framejit(monkeypatch):
    fj.reset()
    monkeypatch.setattr(fj.config, "raise_internal_errors", True)
    yield
    fj.reset()
