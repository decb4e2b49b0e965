"""Draw every benchmark's results (``benchmarks/results/*.json``) as one PNG bar chart.

One horizontal bar per row: the ratio framejit / torch.compile (below 1: framejit is
faster or cheaper), a line at 1.0, and the latest date.  Usage::

    python benchmarks/tools/chart.py [RESULTS_DIR]   # writes RESULTS_DIR/bench.png
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on a benchmark machine
import matplotlib.pyplot as plt

DEFAULT = Path(__file__).resolve().parent.parent / "results"


def load(folder: Path) -> list[dict]:
    return [
        json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if p.name != "all.json"
    ]


def bars(results: list[dict]) -> list[tuple[str, float, str]]:
    """(label, ratio, benchmark) for every row that has a ratio."""
    out = []
    for result in results:
        for row in result["rows"]:
            if row.get("ratio"):
                out.append(
                    (
                        f"{result['benchmark']}: {row['row']} ({row['metric']})",
                        row["ratio"],
                        result["benchmark"],
                    )
                )
    return out


def draw(results: list[dict], png: Path) -> Path:
    rows = bars(results)
    if not rows:
        raise SystemExit("no benchmark results to draw")
    benchmarks = sorted({b for _, _, b in rows})
    colors = {b: plt.get_cmap("tab10")(i % 10) for i, b in enumerate(benchmarks)}
    fig, ax = plt.subplots(figsize=(12, 0.32 * len(rows) + 1.6))
    labels = [label for label, _, _ in rows][::-1]
    ratios = [ratio for _, ratio, _ in rows][::-1]
    ax.barh(labels, ratios, color=[colors[b] for _, _, b in rows][::-1])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("framejit / torch.compile (log scale; below 1 = framejit faster or cheaper)")
    for y, ratio in enumerate(ratios):
        ax.text(ratio, y, f" {ratio:.2f}", va="center", fontsize=7)
    dates = sorted(r["date"] for r in results)
    ax.set_title(
        f"framejit vs torch.compile, latest run {dates[-1][:10]} (Python {results[0]['python']}, torch {results[0]['torch']})",
        fontsize=9,
    )
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


def main(argv: list[str]) -> None:
    folder = Path(argv[0]) if argv else DEFAULT
    results = load(folder)
    (folder / "all.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"chart: {draw(results, folder / 'bench.png')}")


if __name__ == "__main__":
    main(sys.argv[1:])
