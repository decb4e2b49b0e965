"""nox sessions for the framejit monorepo: one per package, plus integration, lint, demo, bench.

Each package session builds a venv holding only that package and what it declares
(resolved from the local checkout, never from an index), which is how the
independence claims of DESIGN.md are tested.  Every install goes through
constraints.txt, the one place where pins live (torch above all: an unpinned torch
pulls a multi-GB CUDA build).
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

ROOT = Path(__file__).parent
CONSTRAINTS = str(ROOT / "constraints.txt")
PACKAGES = ROOT / "packages"
TORCH_PYTHON = "3.11"  # the torch wheel on disk is for CPython 3.11 only
FRAMEEVAL_PYTHONS = ["3.11", "3.12", "3.13"]
# capture on every interpreter the hook supports; on 3.12/3.13 torch==2.13.0 is the CUDA build
# from the registry (runs on the CPU; pip's cache keeps later installs short)
CAPTURE_PYTHONS = ["3.11", "3.12", "3.13"]
MAX_TEST_WORKERS = 4  # pytest-xdist workers for graphcapture and integration (see _parallel)

nox.options.default_venv_backend = "venv"  # pip-backed: uv would download a CUDA torch
nox.options.error_on_missing_interpreters = True
# 3.11 first, so a failure shows before the 3.12/3.13 torch installs run
nox.options.sessions = [
    "frameeval",
    "guards",
    "graphcapture-3.11",
    "inductor_lite",
    "inspect",
    "integration-3.11",
    "lint",
    "graphcapture-3.12",
    "integration-3.12",
    "graphcapture-3.13",
    "integration-3.13",
    "inspect_decompiler-3.12",
    "inspect_decompiler-3.13",
]

# Each package and the framejit packages it depends on (install order matters for nothing:
# pip resolves the declared version ranges against these local paths).
DEPENDS = {
    "frameeval": [],
    "guards": [],
    "graphcapture": ["frameeval", "guards"],
    "inductor-lite": [],
    "inspect": ["frameeval", "guards"],
}


def _install(session: nox.Session, *requirements: str) -> None:
    session.install("-c", CONSTRAINTS, *requirements)


def _shared_torch(session: nox.Session) -> None:
    """Install torch once per interpreter into .nox/_torch-<version> and let each session's
    venv see it through a .pth file: on 3.11 the CPU wheel on disk still takes a minute or
    more to unpack per venv, and on 3.12/3.13 it is the CUDA build (about 4.7 GB with its
    NVIDIA libraries).  Every session that gets it declares torch itself."""
    version = session.python if isinstance(session.python, str) else TORCH_PYTHON
    target = ROOT / ".nox" / f"_torch-{version}"
    if not (target / "torch").is_dir():
        session.run(
            "python", "-m", "pip", "install", "--quiet", "-c", CONSTRAINTS,
            "--target", str(target), "torch==2.13.0",
        )  # fmt: skip
    site = session.run(
        "python", "-c", "import site; print(site.getsitepackages()[0])", silent=True
    ).strip()
    Path(site, "_framejit_shared_torch.pth").write_text(f"{target}\n")


def _parallel(session: nox.Session) -> list[str]:
    """pytest-xdist arguments for the long suites: one worker per core, at most
    MAX_TEST_WORKERS (each worker imports torch); none on a single core."""
    workers = min(MAX_TEST_WORKERS, len(os.sched_getaffinity(0)))
    if workers < 2:
        return []
    _install(session, "pytest-xdist")
    return ["-n", str(workers)]


def _package_session(
    session: nox.Session, name: str, extras: str = "test", parallel: bool = False
) -> None:
    local = [str(PACKAGES / dep) for dep in DEPENDS[name]]
    _install(session, *local, f"{PACKAGES / name}[{extras}]")
    env = {"FRAMEJIT_ISOLATED": name}
    workers = _parallel(session) if parallel else []
    tests = str(PACKAGES / name / "tests")
    session.run("python", "-m", "pytest", tests, *workers, *session.posargs, env=env)


@nox.session(python=FRAMEEVAL_PYTHONS)
def frameeval(session: nox.Session) -> None:
    """The C hook: no torch, tested on every supported CPython."""
    _package_session(session, "frameeval")


@nox.session(python=TORCH_PYTHON)
def guards(session: nox.Session) -> None:
    _shared_torch(session)
    _package_session(session, "guards")


TINYPKG = PACKAGES / "graphcapture" / "tests" / "fixtures" / "tinypkg"


@nox.session(python=CAPTURE_PYTHONS)
def graphcapture(session: nox.Session) -> None:
    _shared_torch(session)
    # a tiny model library installed into site-packages (not editable): third-party code
    # must be traced like user code
    _install(session, str(TINYPKG))
    _package_session(session, "graphcapture", parallel=True)


@nox.session(python=TORCH_PYTHON)
def inductor_lite(session: nox.Session) -> None:
    """With the [gpu] extra: the Triton tests run on the CPU under Triton's interpreter
    (they skip where triton is absent; the C++ path never needs it)."""
    _shared_torch(session)
    _package_session(session, "inductor-lite", extras="test,gpu")


@nox.session(python=TORCH_PYTHON)
def inspect(session: nox.Session) -> None:
    _shared_torch(session)
    _package_session(session, "inspect")


DECOMPILER_TESTS = [
    "test_decompile_stdlib.py",
    "test_decompile_roundtrip.py",
    "test_decompile_generated.py",
    # stdlib modules' own suites on decompiled functions: ~20 s on 3.12/3.13
    "test_decompile_stdlib_suites.py",
]


@nox.session(python=["3.12", "3.13"])
def inspect_decompiler(session: nox.Session) -> None:
    """The decompiler needs no torch: test it on the other interpreters against their own
    stdlib (inspect without its declared guards dependency, which would pull torch)."""
    _install(session, str(PACKAGES / "frameeval"), "pytest>=7")
    session.install("--no-deps", str(PACKAGES / "inspect"))
    tests = PACKAGES / "inspect" / "tests"
    session.run(
        "python", "-m", "pytest", *(str(tests / t) for t in DECOMPILER_TESTS), *session.posargs
    )


ALL_PACKAGES = [str(PACKAGES / name) for name in DEPENDS]


@nox.session(python=CAPTURE_PYTHONS)
def integration(session: nox.Session) -> None:
    """Every package together: the seed walkthrough, real models, differential tests."""
    _shared_torch(session)
    # transformers: tiny GPT-2/BERT/LLaMA/T5/DistilBERT/ViT built from configs, no downloads
    _install(session, *ALL_PACKAGES, "pytest>=7", "hypothesis>=6", "tabulate", "transformers")
    session.run(
        "python",
        "-m",
        "pytest",
        str(ROOT / "integration-tests"),
        *_parallel(session),
        *session.posargs,
        env={"HF_HUB_OFFLINE": "1"},
    )
    # inspect's tests that need graphcapture skip themselves in `nox -s inspect`: run them here
    # (a separate pytest run: their module names repeat integration-tests' ones)
    inspect_tests = PACKAGES / "inspect" / "tests"
    # (test_report_browser installs Debian's chromium with apt-get when it is missing)
    needs_capture = [
        "test_seed_walkthrough.py",
        "test_with_graphcapture.py",
        "test_report_browser.py",
    ]
    session.run("python", "-m", "pytest", *(str(inspect_tests / n) for n in needs_capture))


@nox.session(python=TORCH_PYTHON)
def lint(session: nox.Session) -> None:
    _install(session, "ruff")
    session.run("ruff", "check", str(ROOT))
    session.run("ruff", "format", "--check", str(ROOT))


@nox.session(python=TORCH_PYTHON)
def demo(session: nox.Session) -> None:
    """The main job: the seed walkthrough, printed step by step."""
    _shared_torch(session)
    _install(session, *ALL_PACKAGES, "tabulate")
    session.run("python", str(ROOT / "demo" / "seed_walkthrough.py"), *session.posargs)


@nox.session(python=TORCH_PYTHON)
def bench(session: nox.Session) -> None:
    """Side-by-side benchmarks against torch.compile; prints ratios, writes
    benchmarks/results/<script>.json and the bar chart benchmarks/results/bench.png."""
    _install(
        session, *ALL_PACKAGES, "tabulate", "matplotlib", "transformers"
    )  # matplotlib: the chart only
    scripts = session.posargs or sorted(str(p) for p in (ROOT / "benchmarks").glob("*.py"))
    for script in scripts:
        session.run("python", script, env={"PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0")})
    session.run("python", str(ROOT / "benchmarks" / "tools" / "chart.py"))
