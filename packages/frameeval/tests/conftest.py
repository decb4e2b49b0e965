"""Shared fixtures: every test starts and ends with no callback, empty caches, default limit."""

from __future__ import annotations

import pytest

from framejit import frameeval as fe


@pytest.fixture(autouse=True)
def clean_frameeval():
    fe.set_callback(None)
    fe.reset()
    limit = fe.get_cache_limit()
    yield
    fe.set_callback(None)
    fe.reset()
    fe.set_cache_limit(limit)
    assert fe.hook_state()["active_threads"] == 0


class Recorder:
    """A callback that replaces one code object with another and records every miss."""

    def __init__(self, target, replacement, check_fn=fe.always_true, payload=None):
        self.target = target.__code__
        self.replacement = replacement.__code__
        self.check_fn = check_fn
        self.payload = payload
        self.misses: list[fe.Frame] = []

    def __call__(self, frame: fe.Frame, cache: fe.CacheView):
        if frame.f_code is not self.target:
            return None
        self.misses.append(frame)
        return fe.GuardedCode(self.check_fn, self.replacement, self.payload)


@pytest.fixture
def recorder():
    return Recorder
