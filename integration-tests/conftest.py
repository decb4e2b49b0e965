"""Shared fixtures for the cross-package tests: a clean framejit state around every test."""

from __future__ import annotations

import pytest
import torch

from framejit import graphcapture as fj


def _ensure_inductor_lite_backend() -> None:
    """Installed packages register "inductor-lite" by entry point; a bare source checkout
    (PYTHONPATH=packages/*/src) has no metadata, so register it by hand there."""
    if "inductor-lite" not in fj.list_backends():
        from framejit.inductor_lite import compile_fx

        fj.register_backend("inductor-lite", compile_fx)


_ensure_inductor_lite_backend()


@pytest.fixture(autouse=True)
def _fresh_framejit():
    fj.reset()
    torch.manual_seed(0)
    yield
    fj.reset()


class RecordingBackend:
    """A backend that keeps every graph it is given and runs it eagerly."""

    def __init__(self) -> None:
        self.graphs: list[torch.fx.GraphModule] = []

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        self.graphs.append(gm)
        return gm.forward


@pytest.fixture
def recording_backend() -> RecordingBackend:
    return RecordingBackend()
