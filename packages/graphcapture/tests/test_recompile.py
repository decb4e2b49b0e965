"""Guards fail -> recompile; the cache size limit; what the recompile records say."""

from __future__ import annotations

import warnings

import pytest
import torch

from framejit import frameeval as fe
from framejit import graphcapture as fj


def scaled(x):
    return x * 2 + 1


def _compiled(fn, dynamic=None):
    counter = fj.testing.CompileCounter()
    records = []
    unsubscribe = fj.events.subscribe(records.append)
    return fj.compile(fn, backend=counter, dynamic=dynamic), counter, records, unsubscribe


@pytest.mark.parametrize(
    "first, second",
    [
        (torch.randn(4), torch.randn(4, dtype=torch.float64)),  # dtype
        (torch.randn(4), torch.randn(5)),  # shape
        (torch.randn(4), torch.randn(4, requires_grad=True)),  # requires_grad
        (torch.randn(4, 4), torch.randn(4, 4).t()),  # strides
    ],
    ids=["dtype", "shape", "requires_grad", "stride"],
)
def test_tensor_property_change_recompiles(first, second):
    compiled, counter, records, unsubscribe = _compiled(scaled)
    try:
        torch.testing.assert_close(compiled(first), scaled(first))
        torch.testing.assert_close(compiled(second), scaled(second))
        torch.testing.assert_close(compiled(first), scaled(first))
    finally:
        unsubscribe()
    assert counter.frame_count == 2
    assert records[1].is_recompile and records[1].recompile_reasons
    assert len(fe.cache_entries(scaled)) == 2


SCALE = 2.0


def uses_global(x):
    return x * SCALE


def test_global_rebinding_recompiles():
    global SCALE
    compiled, counter, _, unsubscribe = _compiled(uses_global)
    x = torch.randn(3)
    try:
        torch.testing.assert_close(compiled(x), x * 2.0)
        SCALE = 5.0
        torch.testing.assert_close(compiled(x), x * 5.0)
    finally:
        SCALE = 2.0
        unsubscribe()
    assert counter.frame_count == 2


def _activation(x):
    return x.relu()


def uses_global_function(x):
    return _activation(x) + 1


def test_global_function_rebinding_recompiles():
    global _activation
    original = _activation
    compiled, counter, _, unsubscribe = _compiled(uses_global_function)
    x = torch.randn(5)
    try:
        torch.testing.assert_close(compiled(x), x.relu() + 1)
        _activation = torch.sigmoid
        torch.testing.assert_close(compiled(x), x.sigmoid() + 1)
    finally:
        _activation = original
        unsubscribe()
    assert counter.frame_count == 2


def with_python_number(x, n):
    return x * n


def test_python_scalar_argument_is_specialized():
    compiled, counter, _, unsubscribe = _compiled(with_python_number)
    x = torch.randn(3)
    try:
        for n in (1, 2, 2, 1):
            torch.testing.assert_close(compiled(x, n), x * n)
    finally:
        unsubscribe()
    assert counter.frame_count == 2


def test_grad_mode_is_guarded():
    compiled, counter, _, unsubscribe = _compiled(scaled)
    x = torch.randn(3, requires_grad=True)
    try:
        assert compiled(x).requires_grad
        with torch.no_grad():
            assert not compiled(x).requires_grad
    finally:
        unsubscribe()
    assert counter.frame_count == 2


def test_cache_size_limit_warns_once_and_runs_eagerly(monkeypatch):
    monkeypatch.setattr(fj.config, "cache_size_limit", 3)
    compiled, counter, _, unsubscribe = _compiled(scaled, dynamic=False)  # one entry per size
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for n in range(1, 8):
                x = torch.randn(n)
                torch.testing.assert_close(compiled(x), scaled(x))
    finally:
        unsubscribe()
    assert counter.frame_count == 3
    limit_warnings = [w for w in caught if "cache size limit" in str(w.message)]
    assert len(limit_warnings) == 1
    message = str(limit_warnings[0].message)
    assert "scaled" in message and "L['x']" in message


def test_recompile_reasons_name_the_failing_guard():
    compiled, _, records, unsubscribe = _compiled(scaled)
    try:
        compiled(torch.randn(2))
        compiled(torch.randn(3))
    finally:
        unsubscribe()
    assert any("L['x']" in reason for reason in records[1].recompile_reasons)


def test_mark_dynamic_leaves_the_dim_out_of_the_guard():
    compiled, counter, _, unsubscribe = _compiled(scaled)
    try:
        x = torch.randn(4, 3)
        fj.mark_dynamic(x, 0)
        assert x._framejit_dynamic_dims == {0}
        torch.testing.assert_close(compiled(x), scaled(x))
        y = torch.randn(7, 3)
        fj.mark_dynamic(y, 0)
        torch.testing.assert_close(compiled(y), scaled(y))
    finally:
        unsubscribe()
    assert counter.frame_count == 1


def uses_dynamic_size(x):
    return x.reshape(x.shape[0] * x.shape[1])


def test_dynamic_dim_used_as_a_python_value_is_not_baked_in():
    compiled, _counter, _, unsubscribe = _compiled(uses_dynamic_size)
    try:
        for n in (4, 6):
            x = torch.randn(n, 3)
            fj.mark_dynamic(x, 0)
            torch.testing.assert_close(compiled(x), uses_dynamic_size(x))
    finally:
        unsubscribe()


def test_mark_dynamic_rejects_bad_dims():
    with pytest.raises(IndexError):
        fj.mark_dynamic(torch.randn(2), 3)
    with pytest.raises(TypeError):
        fj.mark_dynamic([1, 2], 0)


def add_both(x, w):
    return x * 2 + w


def test_one_tensor_passed_twice_then_two_tensors_recompiles():
    compiled, counter, _, unsubscribe = _compiled(add_both)
    t, other = torch.ones(3), torch.full((3,), 5.0)
    try:
        torch.testing.assert_close(compiled(t, t), add_both(t, t))
        torch.testing.assert_close(compiled(other, t), add_both(other, t))
        torch.testing.assert_close(compiled(t, t), add_both(t, t))
    finally:
        unsubscribe()
    assert counter.frame_count == 2


def two_inputs(x, y):
    return x * 2 + y


def test_recompile_failures_list_every_failing_guard_of_every_entry():
    compiled, _, records, unsubscribe = _compiled(two_inputs)
    try:
        compiled(torch.randn(2), torch.randn(2))
        compiled(torch.randn(2, dtype=torch.float64), torch.randn(2, dtype=torch.float64))
        compiled(torch.randn(3), torch.randn(3))
    finally:
        unsubscribe()
    second, third = records[1], records[2]
    assert len(second.recompile_failures) == 1
    (failures,) = second.recompile_failures
    # both tensors changed dtype: both guards are named, not only the first
    assert any("L['x']" in f and "dtype" in f for f in failures)
    assert any("L['y']" in f and "dtype" in f for f in failures)
    # each with the user line that made the guard
    assert all(f"{__file__}:" in f for f in failures if "dtype" in f)
    assert len(third.recompile_failures) == 2  # one list per cache entry, most recent first
    newest, oldest = third.recompile_failures
    assert any("dtype mismatch" in f for f in newest)  # the float64 entry
    assert any("size mismatch" in f for f in oldest)
    assert third.recompile_reasons == [per[0] for per in third.recompile_failures]


def test_cache_limit_names_the_guard_that_kept_failing_and_what_to_do(monkeypatch, caplog):
    monkeypatch.setattr(fj.config, "cache_size_limit", 2)
    compiled, _, _, unsubscribe = _compiled(scaled, dynamic=False)
    try:
        with (
            caplog.at_level("WARNING", "framejit.recompiles"),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            for n in range(1, 5):
                compiled(torch.randn(n))
    finally:
        unsubscribe()
    (message,) = [str(w.message) for w in caught if "cache size limit" in str(w.message)]
    assert "keeps failing: tensor 'L['x']' size mismatch at index 0" in message
    assert "fj.mark_dynamic" in message and "cache_size_limit" in message
    # the same, as fields, on the log record (what inspect's report reads)
    (hit,) = [r.cache_limit for r in caplog.records if hasattr(r, "cache_limit")]
    assert (hit.function_name, hit.limit, hit.message) == ("scaled", 2, message)
    assert hit.guard.startswith("tensor 'L['x']' size mismatch at index 0")


def test_recompile_advice_table():
    from framejit.graphcapture.recompiles import advice_for, guard_key, kept_failing

    assert "mark_dynamic" in advice_for("tensor 'L['x']' size mismatch at index 0. expected 2")
    assert "as a tensor" in advice_for("L['n'] == 3  (actual: 4)  # f.py:2 in f")
    assert guard_key("L['n'] == 3  (actual: 4)  # f.py:2 in f") == "L['n']  # f.py:2 in f"
    failures = [
        ["L['n'] == 3  (actual: 5)  # a", "L['m'] == 1  (actual: 2)  # b"],
        ["L['n'] == 4  (actual: 5)  # a"],
    ]
    assert kept_failing(failures) == "L['n'] == 3  (actual: 5)  # a"
    assert kept_failing([]) is None
