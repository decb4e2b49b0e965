"""The callback protocol: settings, modes, cache entries, SKIP_CODE, limits, hook install."""

from __future__ import annotations

import threading

import pytest

from framejit import frameeval as fe


def add(a, b):
    return a + b


def add_replaced(a, b):
    return ("replaced", a, b)


def checks_by_a(count: int) -> dict:
    """One check per value ``n`` of the argument ``a``: ``L['a'] == n``."""

    def check_for(n):
        return lambda L: L["a"] == n

    return {n: check_for(n) for n in range(count)}


def test_set_callback_returns_previous_and_installs_only_while_set():
    assert fe.hook_state()["current"] == "default"
    cb = lambda frame, cache: None  # noqa: E731
    assert fe.set_callback(cb) is None
    assert fe.hook_state()["current"] == "framejit"
    assert fe.set_callback(None) is cb
    assert fe.hook_state() == {
        "installed": False,
        "current": "default",
        "chained": False,
        "active_threads": 0,
    }


def test_context_manager_restores_previous_setting():
    outer = lambda frame, cache: None  # noqa: E731
    with fe.callback(outer):
        with fe.callback(fe.SKIP):
            assert fe.get_callback() is fe.SKIP
        assert fe.get_callback() is outer
    assert fe.get_callback() is None


def test_set_callback_rejects_non_callables():
    with pytest.raises(TypeError, match="expected a callable"):
        fe.set_callback(42)
    assert fe.get_callback() is None


def test_callback_sees_frame_and_hit_skips_callback(recorder):
    rec = recorder(add, add_replaced, check_fn=lambda L: L["a"] == 1, payload="p")
    with fe.callback(rec):
        assert add(1, 2) == ("replaced", 1, 2)
        assert add(1, 5) == ("replaced", 1, 5)  # hit: no callback
        assert add(7, 5) == ("replaced", 7, 5)  # miss: a second entry
    assert len(rec.misses) == 2
    frame = rec.misses[0]
    assert frame.f_code is add.__code__
    assert frame.f_globals is globals()
    assert frame.f_builtins["len"] is len
    assert frame.f_locals == {"a": 1, "b": 2}
    assert frame.function is add
    assert frame.closure is None
    entries = fe.cache_entries(add)
    assert [e.code for e in entries] == [add_replaced.__code__] * 2
    assert all(e.payload == "p" for e in entries)
    assert add(1, 2) == 3  # no callback: the hook is gone, the original runs


def test_entries_are_most_recently_used_first():
    checks = checks_by_a(3)

    def cb(frame, cache):
        if frame.f_code is add.__code__:
            return fe.GuardedCode(
                checks[frame.f_locals["a"]], add_replaced.__code__, frame.f_locals["a"]
            )
        return None

    with fe.callback(cb):
        for n in range(3):
            add(n, 0)
        assert [e.payload for e in fe.cache_entries(add)] == [2, 1, 0]
        add(0, 0)  # hit on the oldest entry moves it to the front
        assert [e.payload for e in fe.cache_entries(add)] == [0, 2, 1]


def test_none_runs_original_and_asks_again():
    seen = []

    def cb(frame, cache):
        if frame.f_code is add.__code__:
            seen.append(frame.f_locals["a"])
        return None

    with fe.callback(cb):
        assert [add(i, 1) for i in range(3)] == [1, 2, 3]
    assert seen == [0, 1, 2]
    assert fe.cache_entries(add) == []


def test_skip_code_marks_code_and_never_asks_again():
    seen = []

    def cb(frame, cache):
        if frame.f_code is add.__code__:
            seen.append(1)
            return fe.SKIP_CODE
        return None

    with fe.callback(cb):
        assert add(1, 1) == 2
        assert add(1, 1) == 2
    assert seen == [1]
    assert fe.is_skipped(add)
    fe.clear(add)
    assert not fe.is_skipped(add)


def test_skip_function_and_reset(recorder):
    fe.skip(add)
    rec = recorder(add, add_replaced)
    with fe.callback(rec):
        assert add(1, 2) == 3
        fe.reset()
        assert add(1, 2) == ("replaced", 1, 2)
        fe.reset()
        assert fe.cache_entries(add) == []


def test_clear_drops_entries(recorder):
    rec = recorder(add, add_replaced)
    with fe.callback(rec):
        add(1, 2)
        fe.clear(add)
        add(1, 2)
    assert len(rec.misses) == 2


def test_discard_drops_only_the_entries_of_that_check():
    checks = checks_by_a(3)

    def cb(frame, cache):
        if frame.f_code is add.__code__:
            a = frame.f_locals["a"]
            return fe.GuardedCode(checks[a], add_replaced.__code__, a)
        return None

    with fe.callback(cb):
        for n in range(3):
            add(n, 0)
        assert fe.discard(add, checks[1]) is True
        assert [e.payload for e in fe.cache_entries(add)] == [2, 0]
        assert fe.discard(add, checks[1]) is False
        assert add(1, 0) == ("replaced", 1, 0)  # a miss again: compiled anew
    assert [e.payload for e in fe.cache_entries(add)] == [1, 2, 0]
    assert fe.discard(add_replaced, checks[0]) is False  # no cache at all


def test_discard_from_inside_a_check_is_a_miss_not_a_crash():
    calls = []

    def check(L):
        calls.append(1)
        fe.discard(add, check)  # what a weakref callback fired by a GC pass here would do
        return True

    def cb(frame, cache):
        if frame.f_code is add.__code__:
            return fe.GuardedCode(check if not calls else fe.always_true, add_replaced.__code__)
        return None

    with fe.callback(cb):
        add(1, 2)  # miss: stored and run
        assert add(1, 2) == ("replaced", 1, 2)  # the check discards itself, then hits
    assert [e.check_fn for e in fe.cache_entries(add)] == []


def test_run_only_uses_cache_and_never_calls_callback(recorder):
    rec = recorder(add, add_replaced, check_fn=lambda L: L["a"] == 1)
    with fe.callback(rec):
        add(1, 0)
    with fe.callback(fe.RUN_ONLY):
        assert add(1, 0) == ("replaced", 1, 0)
        assert add(2, 0) == 2
    assert len(rec.misses) == 1


def test_skip_mode_runs_everything_untouched(recorder):
    rec = recorder(add, add_replaced)
    with fe.callback(rec):
        add(1, 0)
        with fe.callback(fe.SKIP):
            assert add(1, 0) == 1
            assert fe.hook_state()["current"] == "framejit"
        assert add(1, 0) == ("replaced", 1, 0)


def test_cache_limit_is_reported_and_evicts_least_recently_used():
    fe.set_cache_limit(2)
    reports = []

    def cb(frame, cache):
        if frame.f_code is not add.__code__:
            return None
        reports.append(
            (len(cache), cache.limit, cache.limit_reached, [e.payload for e in cache.entries])
        )
        a = frame.f_locals["a"]
        return fe.GuardedCode(lambda L, a=a: L["a"] == a, add_replaced.__code__, a)

    with fe.callback(cb):
        for a in range(4):
            add(a, 0)
    assert reports == [
        (0, 2, False, []),
        (1, 2, False, [0]),
        (2, 2, True, [1, 0]),
        (2, 2, True, [2, 1]),
    ]
    assert [e.payload for e in fe.cache_entries(add)] == [3, 2]
    with pytest.raises(ValueError, match="between 1 and 1024"):
        fe.set_cache_limit(0)


def test_callbacks_are_thread_local(recorder):
    rec = recorder(add, add_replaced)
    results = {}

    def other():
        results["other"] = add(1, 2)  # this thread has no callback, but the hook is installed

    with fe.callback(rec):
        t = threading.Thread(target=other)
        t.start()
        t.join()
        results["main"] = add(1, 2)
    assert results == {"other": 3, "main": ("replaced", 1, 2)}


def test_thread_that_dies_with_a_callback_releases_the_hook():
    def worker():
        fe.set_callback(lambda frame, cache: None)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert fe.hook_state()["active_threads"] == 0
    assert fe.hook_state()["current"] == "default"


def test_threads_hit_the_shared_cache(recorder):
    rec = recorder(add, add_replaced)
    with fe.callback(rec):
        add(0, 0)
    errors = []

    def worker(k):
        try:
            with fe.callback(fe.RUN_ONLY):
                for i in range(20000):
                    assert add(k, i) == ("replaced", k, i)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_recursion_guard_no_interception_inside_callback_or_check(recorder):
    inner_calls = []

    def helper(x):
        return x

    def check(L):
        inner_calls.append(helper(L["a"]))  # runs helper without interception
        return True

    seen = []

    def cb(frame, cache):
        seen.append(frame.f_code.co_name)
        helper(1)
        if frame.f_code is add.__code__:
            return fe.GuardedCode(check, add_replaced.__code__)
        return None

    with fe.callback(cb):
        add(5, 1)
        add(6, 1)
    assert "helper" not in seen
    assert inner_calls == [6]


def test_always_true_is_a_plain_callable():
    assert fe.always_true({}) is True


def test_cache_entries_rejects_non_code():
    with pytest.raises(TypeError, match="code object or a Python function"):
        fe.cache_entries(42)


def test_owned_entries_serve_only_their_callback():
    """An entry with an owner is passed over by a thread whose callback is another object
    (that callback compiles its own); an unowned entry serves every callback; RUN_ONLY
    uses both."""

    def make(tag, owner_is_self=True):
        calls = []

        def cb(frame, cache):
            if frame.f_code is not add.__code__:
                return None
            calls.append(tag)
            return fe.GuardedCode(
                fe.always_true if tag != "b" else (lambda L: True),
                add_replaced.__code__ if tag == "a" else add.__code__,
                payload=tag,
                owner=cb if owner_is_self else None,
            )

        cb.calls = calls
        return cb

    first, second = make("a"), make("b")
    with fe.callback(first):
        assert add(1, 2) == ("replaced", 1, 2)
        assert add(1, 2) == ("replaced", 1, 2)
    with fe.callback(second):
        assert add(1, 2) == 3  # first's entry (always_true) is not second's
        assert add(1, 2) == 3
    assert first.calls == ["a"] and second.calls == ["b"]
    entries = fe.cache_entries(add)
    assert [e.owner for e in entries] == [second, first]
    with fe.callback(first):
        assert add(1, 2) == ("replaced", 1, 2)  # its own entry, behind second's
    assert first.calls == ["a"]
    fe.clear(add)
    with fe.callback(fe.RUN_ONLY):
        assert add(1, 2) == 3
    with fe.callback(first):
        add(1, 2)
    with fe.callback(fe.RUN_ONLY):
        assert add(1, 2) == ("replaced", 1, 2)
    fe.clear(add)
    shared = make("a", owner_is_self=False)
    with fe.callback(shared):
        add(1, 2)
    with fe.callback(second):
        assert add(1, 2) == ("replaced", 1, 2)  # an unowned entry serves everyone
    assert second.calls == ["b"]
    fe.clear(add)
