"""The HTML report opened in a real browser (headless chromium): counts, filter box, screenshot.

Needs framejit.graphcapture (run by the integration session) and chromium, which the
``browser`` helper installs with apt-get when it is missing (or skips, saying why).
Set ``FRAMEJIT_ARTIFACT_DIR`` to keep the screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
fj = pytest.importorskip("framejit.graphcapture")

import browser  # noqa: E402
from report_reading import SUMMARY_IDS, expected_counts, read_page  # noqa: E402

import framejit.inspect as fji  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def chromium():
    return browser.chromium_or_skip()


def _keep(png: Path) -> None:
    folder = os.environ.get("FRAMEJIT_ARTIFACT_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(folder) / png.name)


def _check_in_browser(chromium, page: Path, records, png: Path) -> str:
    dom = browser.dump_dom(chromium, page)
    parsed = read_page(dom)
    assert {k: parsed.counts[k] for k in SUMMARY_IDS} == expected_counts(records)
    assert parsed.counts["shown"] == len(records)  # the script ran: every frame shown
    browser.screenshot(chromium, page, png)
    assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 10_000
    _keep(png)
    return dom


def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_toy_example_report_in_the_browser(tmp_path, chromium):
    fj.reset()
    page = tmp_path / "toy.html"
    compiled = fj.compile(toy_example, backend="eager")
    with fji.report(page) as records:
        for n in (10, 10, 11):
            a, b = torch.randn(n), torch.randn(n)
            torch.testing.assert_close(compiled(a, b), toy_example(a, b))
    assert any(r.is_recompile for r in records) and any(r.graph_breaks for r in records)
    dom = _check_in_browser(chromium, page, records, tmp_path / "report-toy.png")
    assert "# graph break: data-dependent branch" in dom
    assert "size mismatch" in dom  # the recompile's failing guards
    # the filter box: a fragment sets it on load; only frames mentioning the text stay shown
    filtered = read_page(browser.dump_dom(chromium, page, "#filter=size%20mismatch"))
    mismatched = sum(
        any("size mismatch" in f for per in r.recompile_failures for f in per) for r in records
    )
    assert filtered.counts["shown"] == mismatched == len(records) - filtered.hidden_frames
    assert 0 < mismatched < len(records)


SCRIPT = """
import json, sys, torch
from framejit import graphcapture as fj

def toy_example(a, b):
    x = a / (torch.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b

records = []
fj.events.subscribe(records.append)
f = fj.compile(toy_example, backend="inductor-lite")
for n in (4, 5):
    f(torch.randn(n), torch.randn(n))
json.dump([r.index for r in records], open(sys.argv[1], "w"))
"""


def test_command_line_report(tmp_path, chromium):
    pytest.importorskip("framejit.inductor_lite")
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    page = tmp_path / "cli.html"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "framejit.inspect",
            "report",
            str(script),
            str(tmp_path / "seen.json"),
            "-o",
            str(page),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"report written to {page}" in done.stderr
    dom = browser.dump_dom(chromium, page)
    parsed = read_page(dom)
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert parsed.counts["shown"] == len(seen) > 0
    assert parsed.counts["recompiles"] >= 1 and parsed.counts["graph-breaks"] >= 1
    assert "generated kernels" in dom  # inductor-lite's code is in the page


def test_gpt2_report_in_the_browser(tmp_path, chromium):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2,
        n_head=2,
        n_embd=32,
        vocab_size=128,
        n_positions=32,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = transformers.GPT2LMHeadModel(config).eval()
    ids = torch.randint(0, 128, (1, 8))
    fj.reset()
    compiled = fj.compile(model, backend="eager")
    page = tmp_path / "gpt2.html"
    with torch.no_grad(), fji.report(page, title="GPT-2 (tiny config)") as records:
        torch.testing.assert_close(compiled(ids).logits, model(ids).logits)
        longer = torch.randint(0, 128, (1, 12))
        torch.testing.assert_close(compiled(longer).logits, model(longer).logits)
    assert page.stat().st_size < 4_000_000  # "a few MB at most"
    expected = expected_counts(records)
    assert expected["graphs"] > 0 and expected["ops"] > 10 and expected["recompiles"] > 0
    _check_in_browser(chromium, page, records, tmp_path / "report-gpt2.png")
