# ruff: noqa: E731, C400
"""User-code corpus for the decompiler round trip: each function with sample argument tuples.

The decompiled function must behave like the original on every sample (same
result, or the same exception type); nothing here states an expected output.
"""

from __future__ import annotations

import contextlib
import functools
import math

GLOBAL_COUNTER = 0


def arithmetic(a, b):
    return (a + b) * (a - b) / 2 - a // 3 % 5 + (-a) ** 2 + (a << 2 | b & 1 ^ 3) + ~b


def comparisons(a, b, c):
    return a < b < c, a == b != c, a is None, b is not None, a in (1, 2), c not in [3]


def short_circuit(a, b, c):
    x = (a and b) or c
    y = a or (b and c)
    z = (a or b) and c
    return x, y, z, not a


def ternary(a, b):
    return a if a > b else b, ("big" if a > 10 else "mid" if a > 5 else "small")


def if_elif_else(x):
    if x < 0:
        sign = -1
    elif x == 0:
        sign = 0
    elif x < 10 and x % 2:
        sign = 1
    else:
        sign = 2
    if not x or x > 100:
        sign *= 10
    return sign


def nested_conditions(a, b, c):
    if a and (b or c):
        return 1
    if (a or b) and not c:
        return 2
    if a is not None and b is None:
        return 3
    return 4


def while_loops(n):
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 3 == 0:
            continue
        if i > 50:
            break
        total += i
    else:
        total = -total
    while True:
        n -= 1
        if n < 0:
            break
    return total, n


def for_loops(items):
    out = []
    for i, item in enumerate(items):
        if item is None:
            continue
        if item == "stop":
            break
        out.append((i, item))
    else:
        out.append("done")
    for a, (b, c) in [(1, (2, 3))]:
        out.append(a + b + c)
    return out


def nested_loops(n):
    pairs = []
    for i in range(n):
        for j in range(i):
            if (i + j) % 2:
                continue
            pairs.append((i, j))
        while len(pairs) > 20:
            pairs.pop()
    return pairs


def try_except(x):
    try:
        y = 10 / x
    except ZeroDivisionError as exc:
        y = str(exc)
    except (TypeError, ValueError):
        y = "bad"
    else:
        y = y + 1
    finally:
        x = None
    return y, x


def try_return(x):
    try:
        return int(x)
    except ValueError:
        return -1


def try_finally_return(log, x):
    try:
        if x:
            return "early"
        log.append("body")
    finally:
        log.append("finally")
    return "late"


def bare_except(f):
    try:
        f()
    except:  # noqa: E722
        return "caught"
    return "ok"


def reraise(x):
    try:
        return 1 / x
    except ZeroDivisionError:
        raise ValueError("zero") from None


class Ctx:
    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, *exc):
        self.log.append("exit")
        return False


def with_statements(log):
    with Ctx(log) as c:
        log.append(type(c).__name__)
    with Ctx(log), Ctx(log) as d:
        log.append(d is not None)
    with contextlib.suppress(KeyError):
        {}["missing"]
    return log


def with_return(log):
    with Ctx(log):
        return len(log)


def comprehensions(xs):
    a = [x * 2 for x in xs if x % 2]
    b = {x: x**2 for x in xs}
    c = {x % 3 for x in xs}
    d = list(y + 1 for y in xs if y)
    e = [(x, y) for x in xs for y in xs if x < y]
    return a, b, c, d, e


def lambdas_and_closures(n):
    add = lambda a, b=2: a + b + n

    def inner(x, *args, **kwargs):
        return x * n + len(args) + len(kwargs)

    def counter():
        count = 0

        def bump():
            nonlocal count
            count += 1
            return count

        return bump

    bump = counter()
    bump()
    return add(1), inner(2, 3, k=4), bump(), sorted([3, 1, 2], key=lambda v: -v)


def calls(f, *args, **kwargs):
    r1 = f(*args, **kwargs)
    r2 = f(1, *args, sep="-", **kwargs)
    r3 = max(1, 2, *[3, 4], key=None)
    return r1, r2, r3, dict(a=1, **{"b": 2})


def fstrings(name, value):
    return f"{name}={value!r:>10} {value:.2f} {{literal}} {name!s}{value!a}"


def unpacking(seq):
    a, *rest = seq
    first, (second, third) = seq[0], (seq[1], seq[2])
    x = y = len(seq)
    head, *middle, tail = seq
    return a, rest, first, second, third, x, y, head, middle, tail


def augmented(obj, d):
    obj.total += 5
    d["k"] *= 3
    d["k"] -= 1
    return obj.total, d


def subscripts_and_slices(xs):
    return xs[1:], xs[:-1], xs[::2], xs[1:3], xs[-1], xs[::-1][0]


def uses_global(x):
    global GLOBAL_COUNTER
    GLOBAL_COUNTER += x
    return GLOBAL_COUNTER


def walrus(xs):
    if (n := len(xs)) > 2:
        return n
    return [y for x in xs if (y := x * 2) > 2]


def asserts(x):
    assert x > 0, "must be positive"
    assert isinstance(x, int)
    return x


def deletes(d):
    x = 1
    del x
    del d["a"]
    return d


def generator(n):
    for i in range(n):
        yield i * 2
    yield from range(3)


def imports():
    import os.path
    from collections import OrderedDict as OD
    from math import floor, sqrt

    return os.path.join("a", "b"), OD, floor(sqrt(16.0))


def class_definition(x):
    class Point:
        """A point."""

        scale = 2

        def __init__(self, v):
            self.v = v * self.scale

        @property
        def double(self):
            return self.v * 2

    return Point(x).double


def decorators(x):
    @functools.cache
    def square(v):
        return v * v

    return square(x) + square(x)


def math_calls(x):
    return math.floor(x) + math.ceil(x), abs(-x), round(x, 1)


def loop_else_break(xs, target):
    for x in xs:
        if x == target:
            found = True
            break
    else:
        found = False
    return found


def while_else(n):
    while n > 0:
        n -= 3
        if n == 5:
            break
    else:
        return "exhausted"
    return n


def try_in_loop(xs):
    out = []
    for x in xs:
        try:
            if x < 0:
                continue
            if x > 100:
                break
            out.append(10 // x)
        except ZeroDivisionError:
            out.append(None)
            continue
        finally:
            out.append("f")
    return out


def nested_break_continue(rows):
    total = 0
    for row in rows:
        for v in row:
            if v is None:
                continue
            if v < 0:
                break
            total += v
        else:
            total += 1000
    return total


def early_returns(x):
    if x is None:
        return "none"
    if isinstance(x, str):
        if not x:
            return "empty"
        return x.upper()
    try:
        return int(x) * 2
    except (TypeError, ValueError):
        return "bad"


def while_complex(a, b):
    i = 0
    while (i < a and b) or i == 0:
        i += 1
        if i > 20:
            break
    return i


def sift(heap, startpos, pos):
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if newitem < parent:
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem
    return heap


def with_in_loop(log, n):
    for i in range(n):
        with Ctx(log):
            if i == 1:
                continue
            if i == 3:
                break
            log.append(i)
    return log


def chained_attribute_assignment(o):
    o.a = o.b = [1]
    return o.a is o.b


def literals_with_unpacking(a):
    return {"a": a, **{"b": 2}}, {a, *[1, 2]}, [*range(3), a], (*"ab", a)


def nested_ternary_in_call(a):
    return max(a if a > 0 else -a, 1 if a else 2, key=lambda v: v)


def return_in_finally_loop(xs):
    result = []
    for x in xs:
        try:
            if x:
                return result
        finally:
            result.append(x)
    return result


class _Obj:
    def __init__(self):
        self.total = 1


CORPUS = [
    (arithmetic, [(7, 3), (10, -4)]),
    (comparisons, [(1, 2, 3), (None, None, 3), (2, 2, 2)]),
    (short_circuit, [(0, 1, 2), (1, 0, 2), (1, 2, 0), ("", [], None)]),
    (ternary, [(3, 4), (11, 2), (6, 1)]),
    (if_elif_else, [(-5,), (0,), (3,), (4,), (50,), (500,)]),
    (nested_conditions, [(1, 0, 1), (0, 1, 0), (1, None, 0), (None, 1, 1), (0, 0, 0)]),
    (while_loops, [(10,), (0,), (100,)]),
    (for_loops, [([1, None, 2],), (["a", "stop", "b"],), ([],)]),
    (nested_loops, [(4,), (9,)]),
    (try_except, [(2,), (0,), ("x",)]),
    (try_return, [("3",), ("x",)]),
    (try_finally_return, [([], True), ([], False)]),
    (bare_except, [(lambda: 1,), (lambda: 1 / 0,)]),
    (reraise, [(2,), (0,)]),
    (with_statements, [([],)]),
    (with_return, [([1, 2],)]),
    (comprehensions, [([1, 2, 3, 4],), ([],)]),
    (lambdas_and_closures, [(3,)]),
    (calls, [(lambda *a, **k: (a, sorted(k)), "a", "b"), (lambda *a, **k: (a, sorted(k)), 1)]),
    (fstrings, [("x", 3.14159)]),
    (unpacking, [([1, 2, 3, 4],), ("abcd",)]),
    (augmented, [(_Obj(), {"k": 2})]),
    (subscripts_and_slices, [([1, 2, 3, 4],), ("hello",)]),
    (walrus, [([1, 2, 3],), ([1, 2],)]),
    (asserts, [(3,), (-1,), (2.5,)]),
    (deletes, [({"a": 1, "b": 2},)]),
    (generator, [(3,), (0,)]),
    (imports, [()]),
    (class_definition, [(3,)]),
    (decorators, [(4,)]),
    (math_calls, [(2.5,), (-1.25,)]),
    (loop_else_break, [([1, 2, 3], 2), ([1, 2], 5)]),
    (while_else, [(20,), (9,), (-1,)]),
    (try_in_loop, [([1, -1, 0, 5, 200, 3],), ([],)]),
    (nested_break_continue, [([[1, None, 2], [3, -1, 4], []],)]),
    (early_returns, [(None,), ("",), ("ab",), ("12",), (3.5,), ([],)]),
    (while_complex, [(5, True), (5, False), (0, True)]),
    (sift, [([5, 3, 8, 1], 0, 3), ([1, 2, 3, 0], 0, 3)]),
    (with_in_loop, [([], 5)]),
    (chained_attribute_assignment, [(_Obj(),)]),
    (literals_with_unpacking, [(7,)]),
    (nested_ternary_in_call, [(3,), (-4,), (0,)]),
    (return_in_finally_loop, [([0, 0, 1, 2],), ([0],)]),
]
