"""The seed document's ``toy_example`` (torchdynamo-internals.txt), which several benchmarks
compile: two graphs split by a graph break on a data-dependent branch."""

from __future__ import annotations

import torch


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b
