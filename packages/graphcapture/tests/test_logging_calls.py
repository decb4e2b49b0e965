"""Logging calls in traced code (variables/logging_models.py): with constant arguments
they are made after the graph, once, in program order with the other side effects;
the computation around them stays one graph."""

from __future__ import annotations

import logging

import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events

log = logging.getLogger("framejit.tests.logging_calls")


class Collect(logging.Handler):
    def __init__(self, sink):
        super().__init__()
        self.sink = sink

    def emit(self, record):
        self.sink.append(record.getMessage())


def _with_handler(fn):
    sink = []
    handler = Collect(sink)
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        fn()
    finally:
        log.removeHandler(handler)
    return sink


def layer(x, trail):
    y = x.sin()
    trail.append("before")
    log.warning("layer %s does not support %s", 1, "this")
    trail.append("after")
    log.info("done")
    return y * 2


def test_constant_logging_calls_are_made_once_in_order_in_one_graph():
    x = torch.randn(4)
    graphs = []
    unsubscribe = events.subscribe(lambda r: graphs.extend(r.graphs))
    compiled = fj.compile(layer, fullgraph=True)
    expected_trail, got_trail, outputs = [], [], []
    try:
        expected = _with_handler(lambda: [layer(x, expected_trail) for _ in range(2)])
        got = _with_handler(lambda: outputs.extend(compiled(x, [1]) for _ in range(2)))
        got += _with_handler(lambda: [compiled(x, got_trail) for _ in range(2)])
    finally:
        unsubscribe()
    assert got == expected * 2 and expected == ["layer 1 does not support this", "done"] * 2
    assert got_trail == expected_trail
    for out in outputs:
        torch.testing.assert_close(out, layer(x, []))
    assert len(graphs) == 3  # fullgraph: no break; lists of length 1, 0 and 2


def test_logging_of_a_tensor_or_an_exception_runs_eagerly():
    def f(x):
        log.warning("value %s", x.sum())
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("caught")
        return x + 1

    x = torch.ones(3)
    expected = _with_handler(lambda: f(x))
    got = _with_handler(lambda: torch.testing.assert_close(fj.compile(f)(x), f(x)))
    assert got == expected * 2  # the compiled call, then the eager one inside assert_close
