"""Resource stability: a million hit-path calls, and the error and new-function paths, leave
RSS, refcounts and allocated blocks where they were; the suite passes under the debug
allocator in development mode."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from framejit import frameeval as fe

PACKAGE_SRC = Path(fe.__file__).resolve().parents[2]


def f(a, b):
    return a


def g(a, b):
    return b


def wide_locals_replacement():
    # 3000 locals: larger than a data-stack chunk, so it never fits in place (new function).
    namespace: dict = {}
    body = "".join(f"        v{i} = a\n" for i in range(3000))
    exec(f"def f(a, b):\n    if a is b:\n{body}    return b\n", namespace)
    return namespace["f"].__code__


def rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def snapshot(*objs):
    gc.collect()
    return [sys.getrefcount(o) for o in objs], sys.getallocatedblocks(), rss_kib()


def around(run, warmup: int, calls: int, *objs):
    """``snapshot(*objs)`` before and after ``run(calls)``, once ``run(warmup)`` has paid for
    what a path allocates only the first time."""
    run(warmup)
    before = snapshot(*objs)
    run(calls)
    return before, snapshot(*objs)


def run_calls(n, *args):
    for _ in range(n):
        f(*args)


def install(check_fn, code):
    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(check_fn, code)
        return None

    return cb


@pytest.mark.parametrize(
    ("label", "check", "code", "calls"),
    [
        ("hit, C check, in place", fe.always_true, g.__code__, 1_000_000),
        ("hit, Python check, in place", lambda L: L["a"] is not None, g.__code__, 300_000),
        ("hit, new function", fe.always_true, None, 10_000),
    ],
)
def test_hit_paths_do_not_leak(label, check, code, calls):
    code = code or wide_locals_replacement()
    arg_a, arg_b = object(), object()
    with fe.callback(install(check, code)):
        assert f(arg_a, arg_b) is arg_b
        watched = (arg_a, arg_b, f, f.__code__, code, check)
        before, after = around(lambda n: run_calls(n, arg_a, arg_b), 10_000, calls, *watched)
    assert after[0] == before[0], label
    assert abs(after[1] - before[1]) < 100, label
    assert after[2] - before[2] < 2048, label


def test_error_paths_do_not_leak():
    arg = object()

    def bad_check(L):
        raise ValueError("no")

    def cb_raises(frame, cache):
        if frame.f_code is f.__code__:
            raise KeyError("cb")
        return None

    def churn(n):
        for _ in range(n):
            try:
                f(arg, arg)
            except (ValueError, KeyError):
                pass

    with fe.callback(install(bad_check, g.__code__)):
        f(arg, 1)  # the miss caches the entry; from now on every call's check raises
        with pytest.raises(ValueError):
            f(arg, 1)
        check_raises = around(churn, 2_000, 100_000, arg, f, f.__code__)
    fe.reset()
    with fe.callback(cb_raises):
        callback_raises = around(churn, 2_000, 100_000, arg, f, f.__code__)
    for before, after in (check_raises, callback_raises):
        assert after[0] == before[0]
        assert abs(after[1] - before[1]) < 100


class Check:
    def __call__(self, L):
        return True


class Payload:
    pass


def test_a_failed_co_extra_store_frees_the_new_cache():
    """FE_CODE_SET_EXTRA failing (simulated: no memory for the extras holder): the call
    raises MemoryError, the cache allocated for it is freed, the entry's check and payload
    are not kept, and the next call stores the entry and hits."""
    from framejit.frameeval._api import _C

    check, payload = Check(), Payload()
    refs = [weakref.ref(check), weakref.ref(payload)]
    counts = [sys.getrefcount(check), sys.getrefcount(payload)]

    def cb(frame, cache):
        if frame.f_code is f.__code__:
            return fe.GuardedCode(refs[0](), g.__code__, refs[1]())
        return None

    def fail(n):
        _C._debug_fail_set_extra(n)
        for _ in range(n):
            with pytest.raises(MemoryError):
                f(1, 2)

    fe.clear(f)
    try:
        with fe.callback(cb):
            before, after = around(fail, 200, 5_000, check, payload)
            assert fe.cache_entries(f) == []
            assert [sys.getrefcount(check), sys.getrefcount(payload)] == counts
            assert abs(after[1] - before[1]) < 100  # 5,000 caches of one block each: freed
            assert f(1, 2) == 2  # stores now: the replacement runs
            (entry,) = fe.cache_entries(f)
            assert entry.check_fn is check and entry.payload is payload
    finally:
        _C._debug_fail_set_extra(0)
        fe.clear(f)
    del check, payload, entry
    gc.collect()
    assert [r() for r in refs] == [None, None]


@pytest.mark.parametrize("replacement", ["itself", "another code"])
def test_caches_of_dead_code_objects_are_freed(replacement):
    payload = object()
    other = compile("def h(a):\n    return (a,)\n", "<other>", "exec").co_consts[0]

    def make():
        namespace: dict = {}
        exec("def h(a):\n    return a\n", namespace)
        return namespace["h"]

    def cb(frame, cache):
        if frame.f_code.co_name == "h":
            code = frame.f_code if replacement == "itself" else other
            return fe.GuardedCode(fe.always_true, code, payload)
        return None

    before = sys.getrefcount(payload)
    with fe.callback(cb):
        for _ in range(2_000):
            make()(1)
    gc.collect()
    assert sys.getrefcount(payload) == before


@pytest.mark.skipif(
    os.environ.get("FRAMEJIT_FRAMEEVAL_DEVMODE") == "1", reason="already the inner run"
)
def test_suite_passes_under_debug_allocator_and_dev_mode():
    env = dict(
        os.environ,
        PYTHONMALLOC="debug",
        FRAMEJIT_FRAMEEVAL_DEVMODE="1",
        FRAMEJIT_FRAMEEVAL_NO_REBUILD="1",
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PACKAGE_SRC), env.get("PYTHONPATH")) if p)
    tests = Path(__file__).resolve().parent
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "dev",
            "-W",
            "error::ResourceWarning",
            "-m",
            "pytest",
            "-q",
            "-x",
            "-p",
            "no:cacheprovider",
            "-k",
            "not hit_paths_do_not_leak and not torch",
            # the bytecode layer is pure Python: its stdlib sweep says nothing about the C hook
            "--ignore",
            str(tests / "test_bytecode_layer.py"),
            str(tests),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tests,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert " passed" in proc.stdout


def test_frames_kept_by_a_callback_in_a_cycle_are_collected():
    class Holder:
        pass

    def method(holder):
        return holder

    def cb(frame, cache):
        if frame.f_code is method.__code__:
            frame.f_locals["holder"].frame = frame  # holder -> Frame -> f_locals -> holder
        return None

    with fe.callback(cb):
        holder = Holder()
        method(holder)
        probe = weakref.ref(holder)
        del holder
    gc.collect()
    assert probe() is None
