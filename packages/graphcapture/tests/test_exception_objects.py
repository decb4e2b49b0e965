"""Exception objects built by the trace (user classes with __init__, chaining, escaping) and
sys.exc_info()/sys.exception(), each against eager and torch.compile's frame count."""

from __future__ import annotations

import sys

import torch
import torch._dynamo.testing

from framejit import graphcapture as fj


class WithArgs(Exception):
    def __init__(self, a, b=None):
        self.a = a
        self.b = b


class WithSuper(Exception):
    def __init__(self, a, tag=None):
        super().__init__(a + 1)
        self.tag = tag


def _frames(fn, *args):
    """(framejit's result, its frame count, torch.compile's frame count), fullgraph."""
    counter = fj.testing.CompileCounter()
    got = fj.compile(fn, backend=counter, fullgraph=True)(*args)
    torch._dynamo.reset()
    torch_counter = torch._dynamo.testing.CompileCounter()
    torch.compile(fn, backend=torch_counter, fullgraph=True)(*args)
    return got, counter.frame_count, torch_counter.frame_count


def user_exception_with_init(t):
    z = 0
    try:
        raise WithArgs(2, b=3)
    except ValueError:
        z = 1
    except WithArgs as e:
        z = 2 + e.a + e.b + len(e.args)
    return t + z


def context_of_an_exception_raised_in_a_handler(t):
    try:
        try:
            1 / 0  # noqa: B018
        except ZeroDivisionError:
            for exc in (KeyError, IndexError):
                try:
                    raise exc
                except exc as e:
                    t = t + isinstance(e.__context__, ZeroDivisionError)
            raise
    except ZeroDivisionError as outer:
        t = t + (outer.__context__ is None)
    return t


def exc_info_inside_and_after_handlers(t):
    try:
        raise KeyError("k")
    except KeyError:
        typ, val, _ = sys.exc_info()
        t = t + (typ is KeyError) + len(val.args)
        try:
            raise ValueError
        except ValueError:
            t = t + (sys.exc_info()[0] is ValueError)
        t = t + (sys.exc_info()[1] is val)
    return t + (sys.exc_info()[0] is None)


def test_traced_exceptions_match_eager_in_one_graph():
    for fn in (
        user_exception_with_init,
        context_of_an_exception_raised_in_a_handler,
        exc_info_inside_and_after_handlers,
    ):
        x = torch.ones(2)
        got, frames, torch_frames = _frames(fn, x)
        torch.testing.assert_close(got, fn(x))
        assert frames == torch_frames == 1, fn.__name__


def test_exception_that_escapes_keeps_args_attributes_and_chaining():
    def fn(t):
        v = ValueError(1, 2, 3)
        v.__context__ = TypeError()
        try:
            raise WithSuper(4, tag="x") from v
        except WithSuper as e:
            caught = e
        return t.sin(), v, caught, sys.intern("name")

    y, v, caught, name = fj.compile(fn, backend="eager", fullgraph=True)(torch.ones(2))
    torch.testing.assert_close(y, torch.ones(2).sin())
    assert type(v) is ValueError and v.args == (1, 2, 3) and type(v.__context__) is TypeError
    assert type(caught) is WithSuper and caught.args == (5,) and caught.tag == "x"
    assert caught.__cause__ is v and caught.__suppress_context__ and caught.__context__ is None
    assert name == "name"


def test_exc_info_outside_handlers_is_guarded_on_the_callers_exception():
    # outside every traced handler sys.exc_info() is the caller's: a call from inside an
    # except block must not reuse the answer traced outside one
    compiled = fj.compile(lambda t: (t + 1, sys.exc_info()[1]), backend="eager")
    assert compiled(torch.ones(1))[1] is None
    try:
        raise ValueError("v")
    except ValueError as e:
        assert compiled(torch.ones(1))[1] is e
    assert compiled(torch.ones(1))[1] is None


def test_nested_function_metadata_is_read():
    def fn(x):
        def inner():
            "inner's doc"
            return 1

        def bare():
            return "not a doc"

        return x + 1, inner.__doc__, bare.__doc__, inner.__name__, inner.__module__

    got, frames, torch_frames = _frames(fn, torch.ones(2))
    assert got[1:] == fn(torch.ones(2))[1:] and frames == torch_frames == 1


class Shown:
    def __str__(self):
        return "shown"


class Repr:
    def __repr__(self):
        return "repr!"


def test_str_of_user_objects_and_traced_exceptions():
    def fn(x):
        out = [str(Shown()), str(Repr())]
        for exc in (KeyError("k"), ValueError(), ValueError("a"), ValueError(1, 2), WithArgs(7)):
            try:
                raise exc
            except Exception as e:
                out.append(str(e))
        return x + 1, out

    got, frames, torch_frames = _frames(fn, torch.ones(1))
    assert got[1] == fn(torch.ones(1))[1] and frames == torch_frames == 1


def test_frame_without_tensor_ops_that_calls_a_raising_function_runs_as_traced():
    # no graph, but the callee was inlined: the frame runs as traced (as torch.compile
    # installs it), so the callee is not captured again as a frame of its own, where
    # fullgraph would refuse its uncaught raise
    def raises():
        try:
            raise ValueError
        except ValueError:
            try:
                raise TypeError
            finally:
                pass

    def fn():
        try:
            raises()
        except TypeError:
            caught = "caught"
        return caught, sys.exc_info()[0]

    records = []
    unsubscribe = fj.events.subscribe(records.append)
    try:
        assert fj.compile(fn, backend="eager", fullgraph=True)() == fn() == ("caught", None)
    finally:
        unsubscribe()
    assert [r.function_name for r in records] == ["fn"] and records[0].transformed_code


def _raise_type_error():
    raise TypeError


def test_exception_class_from_exc_info_is_returned():
    def fn(x):
        try:
            _raise_type_error()
        except TypeError:
            return x + 1, sys.exc_info()[0], type(sys.exception())

    got, frames, torch_frames = _frames(fn, torch.ones(1))
    assert got[1:] == (TypeError, TypeError) and frames == torch_frames == 1


class _Forwarding(torch.nn.Module):
    """A wrapper forwarding unknown attributes to its inner model (peft's pattern)."""

    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(2, 2)
        self.register_parameter("a", torch.nn.Parameter(torch.full((2,), 2.0)))

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)  # nn.Module's tables
        except AttributeError:
            if name == "a_copy":
                return self.a
            return getattr(self.inner, name)

    def forward(self, x):
        return x * self.a * self.a_copy + self.weight.sum()


def test_module_with_its_own_getattr_that_catches_attribute_error():
    mod = _Forwarding()
    x = torch.ones(2)
    got, frames, torch_frames = _frames(mod, x)
    torch.testing.assert_close(got, mod(x))
    assert frames == torch_frames == 1
