"""Machine-readable benchmark results: each benchmark records its side-by-side rows here.

``record(row, metric, framejit, torch, unit)`` collects one measurement; at exit the
benchmark's rows are written to ``$FRAMEJIT_BENCH_DIR/<script>.json`` (default
``benchmarks/results/``), which ``tools/chart.py`` draws as one bar chart of the ratios
framejit / torch.compile.  Plain printing stays each benchmark's own business.
"""

from __future__ import annotations

import atexit
import datetime
import json
import os
import platform
import sys
from pathlib import Path

RESULTS = Path(
    os.environ.get("FRAMEJIT_BENCH_DIR", Path(__file__).resolve().parent.parent / "results")
)
_rows: list[dict] = []


def record(
    row: str, metric: str, framejit: float, torch: float, unit: str, lower_is_better: bool = True
) -> None:
    """One framejit-vs-torch measurement (same unit for both)."""
    _rows.append(
        {
            "row": row,
            "metric": metric,
            "framejit": framejit,
            "torch": torch,
            "unit": unit,
            "ratio": framejit / torch if torch else None,
            "lower_is_better": lower_is_better,
        }
    )


def _write() -> None:
    if not _rows:
        return
    name = Path(sys.argv[0]).stem
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    payload = {
        "benchmark": name,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch_version,
        "machine": platform.machine(),
        "rows": _rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(payload, indent=2) + "\n")


atexit.register(_write)
