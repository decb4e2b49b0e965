"""torch's own Dynamo tests run through framejit's public API, beside torch.compile.

    python benchmarks/dynamo_tests.py PYTORCH_TEST_DIR_OR_FILES... [-k SUBSTRING] [--json OUT]

Give test/dynamo/test_functions.py, test_misc.py, ... of a pytorch checkout (or their
directory; FRAMEJIT_TORCH_TESTS may hold it).  Nothing of pytorch is part of this repo.

Each file runs twice, each run in its own process: once as it is (torch.compile, the
reference), once with torch.compile, torch._dynamo.optimize/optimize_assert/run/reset
replaced by framejit's compile/optimize/run/reset (fullgraph where the test
asks for it: fullgraph=True, nopython=True, optimize_assert).  String backends become
framejit's "eager" backend; callable backends (CompileCounter, EagerAndRecordGraphs, ...)
are passed as they are, so the tests' frame and op counts count framejit's graphs.
torch._dynamo.mark_dynamic/mark_static and torch.compiler.config.dynamic_sources reach
framejit's equivalents (fj.mark_dynamic/mark_static, fj.config.dynamic_sources).
The figure printed is how many of the tests torch passes also pass under framejit; the
failures are listed with the first line of their error, most frequent first.

Both runs get the same stand-ins for test helpers this torch lacks (_MISSING_TEST_HELPERS:
older files import some that were removed), so one missing name does not drop a file.  A
failed `self.subTest` fails its test.  The tests need expecttest (torch's test_case imports
it).  A test is "torch-internal" when its source (decorators included) reads Dynamo's own
machinery: torch._dynamo.utils/config/exc/guards..., its counters, guard_fail_fn, cache
entries, printed-graph expectations (assertExpectedInline, normalize_gm) or inductor
(_INTERNAL); the total is also given without those tests.  `--ref-cache DIR` keeps torch's
outcomes between runs (they do not change while framejit does).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import inspect
import json
import os
import re
import signal
import subprocess
import sys
import unittest
from pathlib import Path

PER_TEST_TIMEOUT_S = 60
_INTERNAL = re.compile(
    r"torch\._dynamo\.(utils|config|exc|guards|eval_frame|convert_frame|symbolic_convert"
    r"|variables|source|side_effects|output_graph|export|bytecode_transformation)"
    r"|\bcounters\b|guard_fail_fn|_debug_get_cache_entry_list|assertExpectedInline"
    r"|normalize_gm|torch\._inductor|get_compilation_metrics|InductorAndRecordGraphs"
    r"|torch\._C\._dynamo|error_on_recompile"
)
_STRING_BACKENDS_TO_FRAMEJIT = "eager"


# ------------------------------------------------------------------ the framejit patch
class _NullDecorator:
    """torch._dynamo.optimize(..., disable=True): a decorator and context that do nothing."""

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def _patch_framejit() -> None:
    import torch
    import torch._dynamo
    import torch._dynamo.testing

    from framejit import graphcapture as fj

    def backend_of(backend):
        return _STRING_BACKENDS_TO_FRAMEJIT if isinstance(backend, str) else backend

    def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", **_ignored):
        if model is None:
            return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend)
        return fj.compile(model, backend=backend_of(backend), fullgraph=fullgraph, dynamic=dynamic)

    def optimize(backend="inductor", *, nopython=False, disable=False, dynamic=None, **_ignored):
        if disable or os.environ.get("TORCHDYNAMO_DISABLE") == "1":
            return _NullDecorator()  # torch's optimize then changes nothing
        if backend is None or backend is False:
            return fj.run()
        return fj.optimize(backend_of(backend), fullgraph=nopython, dynamic=dynamic)

    def optimize_assert(backend, **_ignored):
        return fj.optimize(backend_of(backend), fullgraph=True)

    real_reset = torch._dynamo.reset

    def reset():
        real_reset()
        fj.reset()

    replacements = {
        "optimize": optimize,
        "optimize_assert": optimize_assert,
        "reset": reset,
        "run": fj.run,
    }
    torch.compile = compile
    modules = [torch._dynamo, torch._dynamo.testing, torch._dynamo.eval_frame]
    try:
        import torch._dynamo.test_case

        modules.append(torch._dynamo.test_case)
    except ImportError:
        pass
    for module in modules:
        for name, replacement in replacements.items():
            if hasattr(module, name):
                setattr(module, name, replacement)
    torch.compiler.reset = reset
    _mark_for_framejit(torch._dynamo, fj)
    _mirror_torch_config(fj)
    _expect_framejit_breaks(torch._dynamo.exc.Unsupported, fj.GraphBreakInFullgraph)
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    _expect_framejit_breaks(ConstraintViolationError, fj.ConstraintViolationError)


def _mark_for_framejit(dynamo, fj) -> None:
    """torch._dynamo.mark_dynamic/mark_static also mark the tensor for framejit (its
    fj.mark_dynamic/mark_static), so a test's marks reach both compilers' traces."""
    import torch

    def both(torch_mark, fj_mark, *fj_keys):
        def mark(t, *args, **kwargs):
            result = torch_mark(t, *args, **kwargs)
            if isinstance(t, torch.Tensor):
                fj_mark(t, *args[:1], **{k: v for k, v in kwargs.items() if k in fj_keys})
            return result

        return mark

    dynamo.mark_dynamic = both(dynamo.mark_dynamic, fj.mark_dynamic, "min", "max")
    dynamo.mark_static = both(dynamo.mark_static, fj.mark_static)


# framejit config knob -> torch.compiler.config option of the same meaning and syntax
_MIRRORED_CONFIG = {"dynamic_sources": "dynamic_sources"}


def _mirror_torch_config(fj) -> None:
    """framejit's knobs that mean what a torch.compiler.config option means read that option,
    so a test's `torch.compiler.config.patch(dynamic_sources=...)` reaches framejit's trace."""
    import torch.compiler.config as torch_config

    for ours, theirs in _MIRRORED_CONFIG.items():
        setattr(
            type(fj.config),
            ours,
            property(
                lambda self, theirs=theirs: getattr(torch_config, theirs),
                lambda self, value, theirs=theirs: setattr(torch_config, theirs, value),
            ),
        )


def _expect_framejit_breaks(torch_break: type, framejit_break: type) -> None:
    """`assertRaises(torch._dynamo.exc.Unsupported)` (a graph break under fullgraph) also
    accepts framejit's GraphBreakInFullgraph: the tests' way of saying "this must break".
    Patched where unittest builds every assertRaises/assertRaisesRegex context."""
    base = unittest.case._AssertRaisesBaseContext
    original_init = base.__init__

    def widen(expected):
        if expected is torch_break:
            return (torch_break, framejit_break)
        if isinstance(expected, tuple) and torch_break in expected:
            return (*expected, framejit_break)
        return expected

    def __init__(self, expected, *args, **kwargs):
        original_init(self, widen(expected), *args, **kwargs)

    base.__init__ = __init__


def _alias_old_torchdynamo() -> None:
    """Test files from before the move into torch import `torchdynamo`."""
    import torch._dynamo

    sys.modules.setdefault("torchdynamo", torch._dynamo)
    subs = ("testing", "test_case", "utils", "config", "eval_frame", "convert_frame",
            "bytecode_transformation", "mutation_guard", "debug_utils")  # fmt: skip
    for sub in subs:
        try:
            module = importlib.import_module(f"torch._dynamo.{sub}")
        except ImportError:
            continue
        sys.modules.setdefault(f"torchdynamo.{sub}", module)
    testing = sys.modules["torchdynamo.testing"]
    for name in ("requires_static_shapes", "skipIfNotPy311", "skipIfPy311"):
        if not hasattr(testing, name):
            setattr(testing, name, lambda fn: fn)


def _identity(fn):
    return fn


# Test helpers that newer or older test files import but this torch lacks: both runs (torch's
# and framejit's) get the same stand-in, so the file loads and its other tests count.
_MISSING_TEST_HELPERS = {
    "torch.testing._internal.common_utils": {
        "disable_translation_validation_if_dynamic_shapes": _identity,
    },
}


def _shim_test_helpers() -> None:
    for module_name, names in _MISSING_TEST_HELPERS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name, value in names.items():
            if not hasattr(module, name):
                setattr(module, name, value)


# ------------------------------------------------------------------ one worker process
class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout(f"test ran longer than {PER_TEST_TIMEOUT_S}s")


class _Recorder(unittest.TestResult):
    """Outcome per test; a failed count under framejit is explained by the first graph break
    or eager frame that framejit recorded during the test."""

    def __init__(self, mode: str):
        super().__init__()
        self.outcomes: dict[str, tuple[str, str]] = {}
        self.breaks: list[str] = []
        if mode == "framejit":
            from framejit import graphcapture as fj

            fj.events.subscribe(self._record)

    def _record(self, record) -> None:
        for b in record.graph_breaks:
            self.breaks.append(f"[break] {b.reason}")
        if record.skipped_reason:
            self.breaks.append(f"[eager frame] {record.skipped_reason}")

    def _why(self, err) -> str:
        exc_type, exc, _ = err
        text = f"{exc_type.__name__}: {exc}".strip().splitlines()
        why = text[0][:200] if text else exc_type.__name__
        if self.breaks and "not equal" in why:
            why = f"{why} {self.breaks[0][:160]}"
        return why

    def startTest(self, test):
        super().startTest(test)
        self.breaks = []
        signal.alarm(PER_TEST_TIMEOUT_S)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)

    def addSuccess(self, test):
        self.outcomes[test.id()] = ("pass", "")

    def addFailure(self, test, err):
        self.outcomes[test.id()] = ("fail", self._why(err))

    def addError(self, test, err):
        self.outcomes[test.id()] = ("fail", self._why(err))

    def addSubTest(self, test, subtest, err):
        # a failed subTest fails its test (unittest then calls neither addFailure nor addSuccess)
        if err is not None:
            self.outcomes[test.id()] = ("fail", self._why(err))

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = ("skip", str(reason)[:200])

    def addExpectedFailure(self, test, err):
        self.outcomes[test.id()] = ("xfail", "")

    def addUnexpectedSuccess(self, test):
        self.outcomes[test.id()] = ("pass", "unexpected success")


def _worker(path: str, mode: str, keyword: str | None) -> dict:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(Path(path).parent))
    _alias_old_torchdynamo()
    _shim_test_helpers()
    if mode == "framejit":
        _patch_framejit()
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    tests = []

    def flatten(s):
        for t in s:
            if isinstance(t, unittest.TestSuite):
                flatten(t)
            elif keyword is None or keyword in t.id():
                tests.append(t)

    flatten(suite)
    signal.signal(signal.SIGALRM, _on_alarm)
    result = _Recorder(mode)
    unittest.TestSuite(tests).run(result)
    return {
        t: (status, why, _reads_dynamo_internals(tests_by_id[t]))
        for tests_by_id in [{t.id(): t for t in tests}]
        for t, (status, why) in result.outcomes.items()
    }


def _reads_dynamo_internals(test) -> bool:
    method = getattr(test, getattr(test, "_testMethodName", ""), None)
    try:
        source = inspect.getsource(method)
    except (TypeError, OSError):
        return False
    return _INTERNAL.search(source) is not None


def _run_worker(path: str, mode: str, keyword: str | None) -> dict:
    cmd = [sys.executable, __file__, "--worker", mode, path]
    if keyword:
        cmd += ["-k", keyword]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        sys.stderr.write(proc.stderr[-3000:])
        return {}


def _reference(path: str, keyword: str | None, cache: str | None) -> dict:
    """torch's outcomes (they do not change while framejit does: cached when asked)."""
    if cache is None:
        return _run_worker(path, "torch", keyword)
    cached = Path(cache) / f"{Path(path).stem}.{keyword or 'all'}.torch.json"
    if cached.exists():
        return json.loads(cached.read_text())
    ref = _run_worker(path, "torch", keyword)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(ref))
    return ref


# ------------------------------------------------------------------ the report
def _files(args: list[str]) -> list[str]:
    out = []
    for a in args:
        p = Path(a)
        out.extend(sorted(str(f) for f in p.glob("test_*.py")) if p.is_dir() else [str(p)])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("-k", dest="keyword")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--worker", choices=("torch", "framejit"))
    parser.add_argument("--failures", type=int, default=40, help="failure reasons to list")
    parser.add_argument("--ref-cache", help="folder keeping torch's outcomes between runs")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(_worker(args.paths[0], args.worker, args.keyword)))
        return
    paths = args.paths or (
        [os.environ["FRAMEJIT_TORCH_TESTS"]] if "FRAMEJIT_TORCH_TESTS" in os.environ else []
    )
    if not paths:
        print(
            "dynamo_tests: give pytorch's test/dynamo files (or set FRAMEJIT_TORCH_TESTS); skipped"
        )
        return
    rows, report, reasons = [], {}, collections.Counter()
    total_ref = total_fj = total_internal = total_fj_internal = 0
    for path in _files(paths):
        ref = _reference(path, args.keyword, args.ref_cache)
        fj = _run_worker(path, "framejit", args.keyword)
        passed = [t for t, (status, *_) in ref.items() if status == "pass"]
        fj_passed = [t for t in passed if fj.get(t, ("missing",))[0] == "pass"]
        failed = {
            t: fj.get(t, ("missing", "worker crashed"))[1] for t in passed if t not in fj_passed
        }
        internal = {t for t in passed if any(len(o) > 2 and o[2] for o in (ref[t], fj.get(t, ())))}
        total_internal += len(internal)
        total_fj_internal += len(internal & set(fj_passed))
        for why in failed.values():
            reasons[why] += 1
        total_ref += len(passed)
        total_fj += len(fj_passed)
        ratio = len(fj_passed) / len(passed) if passed else float("nan")
        rows.append((Path(path).name, len(ref), len(passed), len(fj_passed), ratio))
        report[path] = {
            "torch_passed": passed,
            "framejit_failed": failed,
            "torch_internal": sorted(internal),
        }
    print(f"{'file':32} {'tests':>6} {'torch':>6} {'framejit':>8} {'ratio':>6}")
    for name, n, p, f, r in rows:
        print(f"{name:32} {n:6d} {p:6d} {f:8d} {r:6.1%}")
    if total_ref:
        print(f"{'total':32} {'':6} {total_ref:6d} {total_fj:8d} {total_fj / total_ref:6.1%}")
        rest, rest_fj = total_ref - total_internal, total_fj - total_fj_internal
        if rest:
            label = f"without {total_internal} torch-internal"
            print(f"{label:32} {'':6} {rest:6d} {rest_fj:8d} {rest_fj / rest:6.1%}")
    print("\nframejit failures among tests torch passes, by first line of the error:")
    for why, count in reasons.most_common(args.failures):
        print(f"{count:5d}  {why}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
