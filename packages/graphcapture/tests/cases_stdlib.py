"""Cases for the stdlib that model code uses: functools, operator, sets, collections, itertools.

Each runs with fullgraph=True (torch.compile captures every one of them in one graph),
against eager, with the graph count and the op count checked by test_stdlib_cases.py.
Constructs follow torch's test/dynamo/test_functions.py and test_misc.py.
"""

from __future__ import annotations

import collections
import copy
import functools
import itertools
import operator
import re
import typing

import numpy as np
import torch
from cases import Case, args, t

STDLIB_CASES: list[Case] = []


def case(*factories, frames=1, check_ops=True):
    def register(fn):
        STDLIB_CASES.append(Case(fn, args(*factories), frames, check_ops))
        return fn

    return register


clip01 = functools.partial(torch.clip, min=0.0, max=1.0)
scale = functools.partial(torch.mul, other=2.0)


def _add3(a, b, c):
    return a + b * c


# ----------------------------------------------------------------- functools.partial
@case(t(4), t(4))
def partial_global(a, b):
    return clip01(a + b)


@case(t(4), t(4))
def partial_made_in_frame(a, b):
    p = functools.partial(_add3, a)
    return p(b, 2.0), p(c=3.0, b=a)


@case(t(4), t(4))
def partial_of_partial(a, b):
    p = functools.partial(functools.partial(_add3, a), b)
    return p(4.0), len(p.args), p.func is _add3


@case(t(4), t(4))
def partial_keywords_read_back(a, b):
    p = functools.partial(torch.add, alpha=3)
    return p(a, b), p.keywords["alpha"]


@case(t(4))
def partial_escapes(a):
    p = functools.partial(_add3, c=2.0)
    return p(a, a), p


@case(t(4), t(4))
def partial_of_lambda(a, b):
    f = functools.partial(lambda x, y, k: x * k + y, k=3)
    return f(a, b)


@case(t(4), t(4))
def partial_in_map(a, b):
    return list(map(functools.partial(torch.add, other=b), [a, b]))


# ----------------------------------------------------------------- reduce, operator
@case(t(4), t(4))
def reduce_operator_add(a, b):
    return functools.reduce(operator.add, [a, b, a])


@case(t(4), t(4))
def reduce_lambda_initial(a, b):
    return functools.reduce(lambda x, y: x * y + 1, [a, b], 2.0)


@case(t(3, 3), t(3, 3))
def reduce_matmul(a, b):
    return functools.reduce(torch.matmul, (a, b, a))


@case(t(4), t(4))
def operator_functions(a, b):
    return operator.mul(a, b), operator.neg(a), operator.getitem(a, 1), operator.truediv(a, 2)


@case(t(4), t(4))
def operator_itemgetter_attrgetter(a, b):
    pair = (a, b)
    first = operator.itemgetter(0)(pair)
    dtype = operator.attrgetter("dtype")(a)
    return first + 1, dtype == torch.float32


@case(t(4))
def lru_cached_pure_function(a):
    return _cached_scale(a, 3)


@functools.cache
def _cached_scale(x, k):
    return x * k


@case(t(4))
def wraps_decorator_in_frame(a):
    def deco(fn):
        @functools.wraps(fn)
        def inner(x):
            return fn(x) + 1

        return inner

    @deco
    def body(x):
        return x.sin()

    return body(a)


# ----------------------------------------------------------------- sets
@case(t(4))
def set_literal_and_add(a):
    s = {1, 2, 3}
    s.add(4)
    s.discard(1)
    v = a
    for x in sorted(s):
        v = v + x
    return v, len(s), 4 in s, 1 not in s


@case(t(4))
def set_operators(a):
    s = {1, 2, 3}
    u, i, d, x = s | {4}, s & {2, 9}, s - {1}, s ^ {3, 5}
    s |= {7}
    return a * len(u) + len(i) + len(d) + len(x) + len(s), u == {1, 2, 3, 4}, i <= s


@case(t(4))
def set_methods(a):
    s = set([1, 2, 3])  # noqa: C405 (the set() builtin is the construct under test)
    t2 = s.union([5], (6,)).intersection(range(10))
    s.update({8, 9})
    s.remove(8)
    return a + len(t2), s.issuperset({1, 2}), s.isdisjoint({100}), sorted(s.difference({1}))


@case(t(4))
def set_comprehension(a):
    s = {i % 3 for i in range(10)}
    return a + sum(s), len(s)


@case(t(4))
def frozenset_constant_and_in(a):
    fs = frozenset(["relu", "gelu"])
    if "relu" in fs:
        a = a.relu()
    return a, len(fs | {"tanh"})


_GLOBAL_FROZEN = frozenset({"x", "y"})


@case(t(4))
def frozenset_global(a):
    return a * 2 if "x" in _GLOBAL_FROZEN else a


@case(t(4), t(4))
def set_of_tensors_by_identity(a, b):
    s = {a, b, a}
    return a * len(s), a in s, b in s


@case(t(4))
def set_iteration_order_matches_eager(a):
    s = set()
    for k in ["c", "a", "b", "a"]:
        s.add(k)
    return a + 1, list(s)


@case(t(4))
def set_returned(a):
    return a + 1, {1, 2}


def _set_errors():
    s, key = {1, 2}, "a"
    return (
        lambda: s - 1, lambda: s.add([]), lambda: s.remove(3), lambda: set().pop(),
        lambda: s.issubset(1), lambda: s.copy(1), lambda: s.issubset(), lambda: [][2],
        lambda: (1, 2)[key],
    )  # fmt: skip


@case(t(4))
def set_errors_caught_as_eager(a):
    caught = []
    for bad in _set_errors():
        try:
            bad()
        except (TypeError, KeyError, IndexError) as e:
            caught.append((type(e).__name__, str(e)))
    return a + len(caught), caught


@case(t(4))
def set_keys_looked_up_as_frozensets(a):
    s = {frozenset("ab"), 1}
    found = set("ab") in s, set("xy") in s
    s.discard(set("ab"))
    return a * len(s), found


@case(t(4))
def ids_of_objects_made_in_the_frame(a):
    q = set("ab")
    r, p = q.copy(), frozenset(q)
    return a + 1, id(q) == id(r), id(q) != id(r), id(q) == id(q), id(p) == id(p.copy())


# ----------------------------------------------------------------- re on constants
@case(t(4))
def re_folded_on_constants(a):
    m = re.match(r"(\w+)-(\d+)", "layer-12")
    p = re.compile("b+")
    return (
        a * int(m.group(2)),
        m.group(1),
        bool(p.search("abbc")),
        p.pattern,
        re.sub("a", "b", "aa"),
    )


# ----------------------------------------------------------------- collections
@case(t(4), t(4))
def ordered_dict_built_in_frame(a, b):
    d = collections.OrderedDict()
    d["x"] = a
    d["y"] = b
    d.move_to_end("x")
    return next(iter(d.values())) * 2, list(d.keys()), d


@case(t(4), t(4))
def ordered_dict_from_pairs_popitem(a, b):
    d = collections.OrderedDict([("a", a), ("b", b)])
    k, v = d.popitem()
    return v + 1, k, len(d)


@case(t(4), t(4))
def defaultdict_list_factory(a, b):
    d = collections.defaultdict(list)
    d["k"].append(a)
    d["k"].append(b)
    return d["k"][0] + d["k"][1], len(d), d


@case(t(4))
def defaultdict_int_counting(a):
    d = collections.defaultdict(int)
    for w in "abcab":
        d[w] += 1
    return a * d["a"], dict(d)


@case(t(4))
def counter_counts(a):
    c = collections.Counter("abcaab")
    c.update("zz")
    return a * c["a"], c.most_common(1), c["missing"]


@case(t(4), t(4))
def deque_operations(a, b):
    d = collections.deque([a, b])
    d.append(a + 1)
    d.extend([a, b])
    d.appendleft(b)
    tmp = d.pop()
    d.extendleft([tmp])
    d.append(d.popleft())
    d.rotate(1)
    return list(d)


@case(t(4), check_ops=False)  # the appends that fall off the deque are dead code
def deque_maxlen(a):
    d = collections.deque(maxlen=2)
    for i in range(4):
        d.append(a + i)
    return list(d), d.maxlen


@case(t(4))
def namedtuple_class_built(a):
    return _Point(a, 2).x + _Point(x=1, y=a).y


_Point = collections.namedtuple("_Point", ["x", "y"])


# ----------------------------------------------------------------- itertools
@case(t(4), t(4))
def itertools_product(a, b):
    v = a
    for x, i in itertools.product([a, b], [1, 2]):
        v = v + x * i
    return v


@case(t(4), t(4))
def itertools_chain_and_from_iterable(a, b):
    v = a
    for x in itertools.chain([a, b], [1, 2]):
        v = v + x
    for x in itertools.chain.from_iterable([[a, b], [1, 2]]):
        v = v * x
    return v


@case(t(4))
def itertools_combinations_permutations(a):
    out = [torch.ones(size) for size in itertools.combinations((1, 2, 3), 2)]
    n = len(list(itertools.permutations([a, a, a], 2)))
    return out, n


@case(t(4), t(4))
def itertools_zip_longest(a, b):
    v = a
    for x, y in itertools.zip_longest([a], [b, b], fillvalue=1):
        v = v + x * y
    return v


@case(t(4))
def itertools_islice_count_repeat(a):
    xs = list(itertools.islice(itertools.count(2, 3), 1, 4))
    reps = list(itertools.repeat(a, 2))
    return a * sum(xs), reps, list(zip(itertools.count(), "ab"))


@case(t(4))
def itertools_accumulate(a):
    sums = list(itertools.accumulate([1, 2, 3]))
    prods = list(itertools.accumulate([a, a, a], operator.mul))
    return sums, prods[-1]


@case(t(4))
def itertools_misc(a):
    pairs = list(itertools.pairwise([1, 2, 3]))
    taken = list(itertools.takewhile(lambda x: x < 3, [1, 2, 3, 1]))
    dropped = list(itertools.dropwhile(lambda x: x < 3, [1, 2, 3, 1]))
    starred = list(itertools.starmap(operator.add, [(a, 1), (a, 2)]))
    cyc = list(itertools.islice(itertools.cycle("ab"), 5))
    return pairs, taken, dropped, starred, cyc


# ----------------------------------------------------------------- dict views
@case(t(4), check_ops=False)  # the d[4] value is dead code in the graph
def dict_views_are_live(x):
    # regression: keys() was a snapshot, so `4 in keys` after d[4] = ... was False
    d = {3: x}
    keys, values = d.keys(), d.values()
    d[4] = x + 1
    d2 = {3: 2, 4: "aa"}
    return 3 in keys, 4 in keys, 5 in keys, d2.keys() == keys, len(values), x * len(keys)


@case(t(4), t(4))
def dict_items_and_key_set_ops(a, b):
    d = {"a": a, "b": b}
    total = a
    for _k, v in d.items():
        total = total + v
    return total, sorted(d.keys() - {"a"}), sorted(d.keys() | {"c"}), list(d.values())[1] * 2


@case(t(4))
def partial_is_callable_and_a_partial(a):
    p = functools.partial(torch.add, other=1)
    return p(a), callable(p), isinstance(p, functools.partial), p.func is torch.add


# ----------------------------------------------------------------- tuple concatenation
@case(t(4))
def constant_tuple_plus_tuple_of_tensors(x):
    output = (x, x + 1, x + 2, x + 3)
    output = (None,) + output + ()  # noqa: RUF005 (concatenation is the construct under test)
    return output[2] + output[3], output


# ----------------------------------------------------------------- from torch's dynamo tests
DICT_KEY_PARAM = torch.nn.Parameter(torch.ones(4))
IMPORTED_SCALE = torch.full((4,), 3.0)


@case(t(4), t(4))
def dict_keyed_by_tensors(a, b):
    # tensors hash by identity: a Parameter global and the inputs as keys, one entry per object
    d = {"a": a, DICT_KEY_PARAM: 3, b: 4}
    d[a] = 5
    total = d["a"] + d[DICT_KEY_PARAM]
    for k, v in d.items():
        if not isinstance(k, str):
            total = total + k * v
    return total, len(d), list(d)[2] is b, a in d, (a + 1) in d, d.pop(b)


@case(t(4), 4096, np.int64(8))
def numpy_int_scalar_argument(x, a, b):
    # a numpy number folds like the Python number it holds, kept as its numpy type
    return x + (a % b), b * 2, type(b * 2).__name__


@case(t(4), np.float32(2.5))
def numpy_float_scalar_argument(x, s):
    return x * s, s + 1


@case(t(4))
def typing_annotation_on_inner_function(x):
    # typing's forms are the construct under test
    def inner(y: typing.List[Tag], z: typing.Optional[typing.Dict[str, int]] = None) -> int:  # noqa: UP006, UP045
        return y + 1

    return inner(x / 3.0)


@case(t(4))
def isinstance_of_legacy_tensor_types(x):
    i = x.long()
    return (
        x + 1,
        isinstance(x, torch.FloatTensor),
        isinstance(x, torch.DoubleTensor),
        isinstance(i, (torch.FloatTensor, torch.LongTensor)),
        isinstance(i, torch.Tensor),
    )


@case(t(4))
def import_inside_the_frame(x):
    import cases_stdlib
    from cases_stdlib import IMPORTED_SCALE  # a tensor held by a module, read through import

    return x * IMPORTED_SCALE + cases_stdlib.DICT_KEY_PARAM


class Tag:
    pass


@case(t(4, 4), t(4, 4))
def autocast_disabled_where_it_is_off(x, y):
    # LLaMA's rotary embedding: `with torch.autocast(device_type, enabled=False)` changes
    # nothing where autocast is off (the state is in the global-state guard)
    with torch.autocast(device_type="cpu", enabled=False):
        z = x @ y
    with torch.autocast("cpu", enabled=False):
        return z.float() * 2


_DEFAULTS = {"scale": 2.0, "sizes": [1, 2], "extra": None}
_SHARED = [1.0]
_TREE = {"a": _SHARED, "b": (_SHARED, 3), "c": {"k": [4.0]}}


@case(t(4))
def deepcopy_of_a_global_config_tree(x):
    d = copy.deepcopy(_DEFAULTS)
    d["scale"] = 3.0
    d["sizes"].append(5)  # the global's list is untouched
    tree = copy.deepcopy(_TREE)
    tree["a"].append(2.0)  # the copy keeps the tree's aliasing: tree["b"][0] is tree["a"]
    return x * d["scale"] + len(tree["b"][0]), d, tree, _DEFAULTS["sizes"]


@case(t(4))
def id_of_global_containers_as_keys(x):
    memo = {id(_DEFAULTS): True, id(_SHARED): 1}
    return x + (id(_DEFAULTS) in memo) + memo[id(_SHARED)] + (id(_TREE) in memo)


_T = typing.TypeVar("_T")


class _Hinted:
    pass


@case(t(4))
def builtin_generics_and_unions_in_annotations(x):
    # annotations are evaluated when the def runs: list[C], C | None, Callable[[T], T]
    def inner(y: list[_Hinted], z: torch.Tensor | None, w: None | list[int]) -> torch.Tensor:  # noqa: RUF036
        return y

    def apply(c: typing.Callable[[_T], _T], y: _T) -> _T:
        return c(y)

    inner([], None, None)
    return apply(torch.sin, x) + 1


@case(t(4))
def iterator_of_a_constant_from_its_dunder(x):
    it = range(3).__iter__()
    first = next(it)
    return x + first + next(it), list(it), "ab".__iter__().__next__()
