"""The callable a backend returns is opaque: framejit must never capture frames inside it."""

from __future__ import annotations

import torch

from framejit import graphcapture as fj


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_inductor_lite_wrapper_frames_are_not_captured():
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        compiled = fj.compile(toy_example, backend="inductor-lite")
        for i in range(12):
            a, b = torch.randn(64), torch.randn(64)
            if i % 2:
                b = -b.abs()
            torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    finally:
        unsubscribe()
    captured = sorted(r.function_name for r in records)
    assert all(not r.filename.startswith("<inductor-lite") for r in records), captured
    # toy_example itself and its two resume functions, each compiled once
    assert len(records) == 3, captured
