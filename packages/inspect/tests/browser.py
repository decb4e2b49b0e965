"""Headless Debian chromium for the report tests: found, or installed with apt-get, or a skip.

Started with a fresh profile and every background service off, so a test run never reaches
the network; ``--virtual-time-budget`` lets the page's script run before the DOM is dumped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--virtual-time-budget=3000",
)
INSTALL = "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium"


def _found() -> str | None:
    return next((p for p in map(shutil.which, NAMES) if p), None)


def _install() -> str:
    """Why installing failed ('' when it worked)."""
    if shutil.which("apt-get") is None:
        return "no apt-get on this machine"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "not root, cannot apt-get install"
    try:
        done = subprocess.run(["sh", "-c", INSTALL], capture_output=True, text=True, timeout=1200)
    except subprocess.TimeoutExpired:
        return "apt-get install chromium timed out"
    return "" if done.returncode == 0 else f"apt-get failed: {done.stderr.strip()[-300:]}"


def chromium_or_skip() -> str:
    found = _found()
    if found is None:
        why = _install()
        found = _found()
        if found is None:
            pytest.skip(
                f"headless chromium is needed for the browser test and could not be installed ({why or 'not found after install'}); run: {INSTALL}"
            )
    return found


def run(browser: str, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="framejit-chromium-") as profile:
        return subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def dump_dom(browser: str, page: Path, fragment: str = "") -> str:
    done = run(browser, "--dump-dom", page.resolve().as_uri() + fragment)
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout


def screenshot(browser: str, page: Path, png: Path, size: str = "1400,2200") -> Path:
    done = run(browser, f"--screenshot={png}", f"--window-size={size}", page.resolve().as_uri())
    assert done.returncode == 0 and png.exists(), done.stderr[-2000:]
    return png
