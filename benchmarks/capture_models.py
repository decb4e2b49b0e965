"""Capture of six tiny Hugging Face models, framejit beside torch.compile in one process.
`--heads` adds hf_tiny.HEADS (Auto*.from_config heads with labels), `--zoo` those and
twenty more architectures (hf_tiny.zoo(): RoBERTa ... Wav2Vec2); ``--models a,b`` keeps only
those rows (with ``--zoo`` for a zoo name), ``--modes eval`` or ``train`` one mode.

For each model (integration-tests/hf_tiny.py: tiny configs, random weights, no
downloads), in eval mode under no_grad and in training mode (grad on): the first call's time with a backend that compiles
nothing (so the time is capture: tracing, guards, code generation), best of 3 fresh
models, CPU time of this process, after a gc.collect() (so a collection that earlier models'
garbage triggers is timed on neither side); and the graphs and ops each produced.  The ratio is
framejit / torch.compile (the goal: <= 0.25x on every model).  The rows also go to
``benchmarks/results/capture_models.json`` (``tools/results.py``) for the bar chart.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "integration-tests"))

import hf_tiny
from tools.results import record

from framejit import graphcapture as fj


class Counting:
    def __init__(self):
        self.graphs = []

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)
        return gm.forward

    def ops(self) -> int:
        return sum(hf_tiny.live_op_count(gm) for gm in self.graphs)


def _first_call(name: str, mode: str, compile_fn, reset) -> tuple[float, int, int]:
    best = float("inf")
    graphs = ops = 0
    for _ in range(3):
        reset()
        model, inputs = hf_tiny.make(name)
        model.train(mode == "train")
        backend = Counting()
        compiled = compile_fn(model, backend)
        with torch.set_grad_enabled(mode == "train"):
            # the garbage of earlier models collected first: a full collection that they
            # triggered (hundreds of ms with transformers loaded) lands in neither side's time
            gc.collect()
            start = time.process_time()
            compiled(**inputs)
            best = min(best, time.process_time() - start)
        graphs, ops = len(backend.graphs), backend.ops()
    reset()
    return best, graphs, ops


def _torch_reset():
    import torch._dynamo

    torch._dynamo.reset()


def main() -> None:
    import warnings

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    names = list(hf_tiny.MODELS)
    if "--heads" in sys.argv or "--zoo" in sys.argv:
        names += list(hf_tiny.HEADS)
    if "--zoo" in sys.argv:
        names += list(hf_tiny.zoo())
    if "--models" in sys.argv:  # --models a,b: only these rows (names from the lists above)
        wanted = sys.argv[sys.argv.index("--models") + 1].split(",")
        names = [n for n in names if n in wanted]
    modes = ("eval", "train")
    if "--modes" in sys.argv:  # --modes train: one mode only
        modes = tuple(sys.argv[sys.argv.index("--modes") + 1].split(","))
    rows = []
    for mode in modes:
        for name in names:
            fj_time, fj_graphs, fj_ops = _first_call(
                name, mode, lambda m, b: fj.compile(m, backend=b), fj.reset
            )
            tc_time, tc_graphs, tc_ops = _first_call(
                name, mode, lambda m, b: torch.compile(m, backend=b), _torch_reset
            )
            label = "cold capture" if mode == "eval" else "cold capture (train)"
            record(name, label, fj_time * 1e3, tc_time * 1e3, "ms cpu")
            ratio = fj_time / tc_time
            rows.append(
                (f"{name} {mode}", fj_time, tc_time, ratio, fj_graphs, tc_graphs, fj_ops, tc_ops)
            )
            # as it goes too: a zoo run on a loaded machine can outlast whoever waits for it
            print(_format(rows[-1]), file=sys.stderr, flush=True)
    header = (
        "model",
        "framejit s",
        "torch s",
        "ratio",
        "fj graphs",
        "torch graphs",
        "fj ops",
        "torch ops",
    )
    print(" | ".join(header))
    for r in rows:
        print(_format(r))


def _format(r: tuple) -> str:
    return f"{r[0]} | {r[1]:.3f} | {r[2]:.3f} | {r[3]:.2f}x | {r[4]} | {r[5]} | {r[6]} | {r[7]}"


if __name__ == "__main__":
    main()
