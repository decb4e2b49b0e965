"""The callable a backend returns is opaque: framejit must never capture frames inside it."""

from __future__ import annotations

import warnings

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


def test_variants_traced_on_a_call_capture_nothing_of_aotautograd():
    """A graph first run in a new grad setting (here: an input that requires grad or not,
    around a break under no_grad) is traced by inductor-lite on that call, inside the user's
    compiled frame: AOTAutograd's Python (generated dataclass __init__s, networkx) must run
    uncaptured, with no internal errors or cache-limit warnings."""
    linear = torch.nn.Linear(4, 4)

    def fn(x):
        x = linear(x) + 1
        with torch.no_grad():
            x = x * 2
            v = x.sum().item()
        return x + v

    records = []
    unsubscribe = fj.events.subscribe(records.append)
    compiled = fj.compile(fn, backend="inductor-lite")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for requires_grad in (True, True, False, True):
                x = torch.randn(3, 4, requires_grad=requires_grad)
                torch.testing.assert_close(compiled(x), fn(x))
    finally:
        unsubscribe()
    assert {r.filename for r in records} == {__file__}, sorted(
        (r.function_name, r.filename) for r in records
    )
    assert not [w for w in caught if "framejit" in str(w.message)], [str(w.message) for w in caught]
