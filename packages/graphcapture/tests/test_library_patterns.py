"""What library code (transformers' decorators and configs) does around model code, traced
in one graph and guarded: function metadata, `obj.__class__`, a custom __getattribute__
with super(), `obj.__dict__.get`, enum members."""

from __future__ import annotations

import abc
import collections.abc
import copy
import enum
import functools
import typing

import pytest
import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events


def one_graph(fn, *args):
    """Compile with fullgraph, compare with eager twice; return the records."""
    seen = []
    unsubscribe = events.subscribe(seen.append)
    try:
        compiled = fj.compile(fn, fullgraph=True)
        for _ in range(2):
            torch.testing.assert_close(compiled(*args), fn(*args))
    finally:
        unsubscribe()
    assert sum(len(r.graphs) for r in seen) == 1
    return compiled


def can_take(fn):
    @functools.wraps(fn)
    def wrapper(x, **kwargs):
        names = fn.__code__.co_varnames[: fn.__code__.co_argcount]
        label = f"{fn.__module__}.{fn.__qualname__}:{fn.__name__}"
        kwargs = {k: v for k, v in kwargs.items() if k in names}
        return fn(x, **kwargs) + len(label) * 0

    return wrapper


@can_take
def scaled(x, scale=2.0):
    return x * scale


def test_decorator_reads_function_metadata():
    def f(x):
        return scaled(x, scale=3.0, unknown=1)

    one_graph(f, torch.randn(3))


class Config:
    attribute_map = {"hidden_size": "n_embd"}

    def __init__(self):
        self.n_embd = 4
        self.flag = True

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


def test_custom_getattribute_with_super_is_traced_and_guarded():
    cfg = Config()

    def f(x):
        spec = cfg.__dict__.get("_spec")
        extra = 1.0 if spec is None else 2.0
        return x * cfg.hidden_size + extra + getattr(cfg, "missing", 0.5)

    x = torch.randn(3)
    compiled = one_graph(f, x)
    cfg.hidden_size = 7  # stored as n_embd through the alias
    torch.testing.assert_close(compiled(x), f(x))
    cfg._spec = "set"
    torch.testing.assert_close(compiled(x), f(x))
    cfg.missing = 10.0
    torch.testing.assert_close(compiled(x), f(x))


def test_setattr_through_super_in_traced_code():
    cfg = Config()

    def f(x):
        cfg.hidden_size = 5
        return x * cfg.n_embd

    x = torch.randn(2)
    torch.testing.assert_close(fj.compile(f)(x), x * 5)
    assert cfg.n_embd == 5 and "hidden_size" not in cfg.__dict__


class Model:
    def forward(self, x):
        return x + len(self.__class__.__name__) + len(type(self).__qualname__)


def test_class_of_an_object():
    m = Model()
    one_graph(lambda x: m.forward(x), torch.randn(2))


class Action(str, enum.Enum):  # noqa: UP042  (transformers' ExplicitEnum shape)
    RAISE = "raise"
    NOTIFY = "notify"


class State:
    action = Action.RAISE


def test_enum_member_attribute_folded_and_guarded():
    state = State()

    def f(x):
        if state.action == Action.RAISE:
            return x + 1
        if state.action in (Action.NOTIFY,):
            return x * 4
        return x

    x = torch.randn(3)
    compiled = one_graph(f, x)
    state.action = Action.NOTIFY
    torch.testing.assert_close(compiled(x), f(x))


def _double(t):
    return t * 2


class Registry:
    """A Mapping written in Python, like transformers' AttentionInterface."""

    _global = {"double": _double}

    def __init__(self):
        self._local = {}

    def __getitem__(self, key):
        if key in self._local:
            return self._local[key]
        return self._global[key]

    def __contains__(self, key):
        return key in self._local or key in self._global


REGISTRY = Registry()


def test_python_mapping_lookup_is_inlined():
    def f(x):
        if "double" in REGISTRY:
            return REGISTRY["double"](x) + 1
        return x

    one_graph(f, torch.randn(3))


class Slotted:
    __slots__ = ("name", "scale")

    def __init__(self, name, scale):
        self.name = name
        self.scale = scale


def test_slots_attributes_are_read_and_guarded():
    obj = Slotted("a", 2.0)

    def f(x):
        return x * obj.scale if obj.name == "a" else x

    x = torch.randn(3)
    compiled = one_graph(f, x)
    obj.scale = 5.0
    torch.testing.assert_close(compiled(x), f(x))
    obj.name = "b"
    torch.testing.assert_close(compiled(x), f(x))


def test_hasattr_on_a_tensor_needs_no_guard():
    def f(x):
        y = x.cumsum(0)
        return y * 2 if not hasattr(y, "framejit_missing") else y

    one_graph(f, torch.randn(4))


class Chunked(torch.nn.Module):
    def ff(self, x):
        return x * 3

    def forward(self, x):
        # transformers' apply_chunking_to_forward
        import inspect

        n_args = len(inspect.signature(self.ff).parameters)
        name = self.ff.__func__.__name__
        return self.ff(x) + n_args + len(name)


def test_signature_and_bound_method_metadata():
    one_graph(Chunked(), torch.randn(3))


def _takes(input_ids=None, use_cache=None):
    print(end="")  # a graph break inside the call
    return input_ids * 2 + (1 if use_cache else 0)


def test_kwargs_mutated_before_a_graph_break():
    """transformers' config-defaults decorator: `kwargs[k] = v`, then the call breaks.
    The replay cleared kwargs before reading kwargs['input_ids'] back (KeyError)."""

    def wrapper(**kwargs):
        kwargs["use_cache"] = True
        return _takes(**kwargs) + 1

    x = torch.ones(2)
    compiled = fj.compile(wrapper)
    for _ in range(2):
        torch.testing.assert_close(compiled(input_ids=x), wrapper(input_ids=x))


def test_environment_variable_read_is_folded_and_guarded_by_value(monkeypatch):
    import os

    def fn(x):
        # transformers' use_gqa_in_sdpa: a switch read from the environment
        if os.environ.get("FRAMEJIT_TEST_SWITCH", "0") == "1":
            x = x * 10
        if "FRAMEJIT_TEST_OTHER" in os.environ:
            x = x + int(os.environ["FRAMEJIT_TEST_OTHER"])
        return x + (os.getenv("FRAMEJIT_TEST_UNSET") is None)

    monkeypatch.delenv("FRAMEJIT_TEST_SWITCH", raising=False)
    monkeypatch.delenv("FRAMEJIT_TEST_OTHER", raising=False)
    monkeypatch.delenv("FRAMEJIT_TEST_UNSET", raising=False)
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter, fullgraph=True)
    x = torch.ones(2)
    torch.testing.assert_close(compiled(x), fn(x))
    torch.testing.assert_close(compiled(x), fn(x))
    assert counter.frame_count == 1
    monkeypatch.setenv("FRAMEJIT_TEST_SWITCH", "1")  # a guarded value changes: recompiles
    torch.testing.assert_close(compiled(x), fn(x))
    monkeypatch.setenv("FRAMEJIT_TEST_OTHER", "3")  # a variable appears
    torch.testing.assert_close(compiled(x), fn(x))
    monkeypatch.setenv("FRAMEJIT_TEST_OTHER", "4")
    torch.testing.assert_close(compiled(x), fn(x))
    assert counter.frame_count == 4


# transformers' per-layer config view (a collections.abc.Sequence) and cache layers (ABC)
class LayerView(collections.abc.Sequence):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i < 0 or i >= len(self):
            raise IndexError("list index out of range")
        return i + 1


class Layer(abc.ABC):
    def __init__(self, scale):
        self.scale = scale

    @abc.abstractmethod
    def apply(self, x): ...


class Scaled(Layer):
    def apply(self, x):
        return x * self.scale


def test_sequence_subclass_built_and_iterated_to_index_error():
    def f(x):
        for k in LayerView(3):
            x = x + k
        return x

    one_graph(f, torch.randn(3))
    assert torch.compile(f, backend="eager", fullgraph=True)(torch.ones(2)).tolist() == [7, 7]


def test_abc_subclass_built_in_the_frame():
    def f(x):
        return Scaled(2.0).apply(x)

    one_graph(f, torch.randn(3))


def test_abstract_class_construction_raises_its_eager_error():
    def f(x):
        Layer(1.0)
        return x + 1

    with pytest.raises(TypeError, match="abstract"):
        fj.compile(f, backend="eager")(torch.randn(3))


class HandlesOwnIndexError(collections.abc.Sequence):
    """__getitem__ catches its own IndexError: the view must not stop at it."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        try:
            if i == 1:
                raise IndexError(i)
        except IndexError:
            return -1
        return i


def test_index_error_caught_inside_getitem_is_not_the_end():
    def f(x):
        return [x + k for k in HandlesOwnIndexError()]

    compiled = fj.compile(f, backend="eager")
    x = torch.randn(2)
    for got, want in zip(compiled(x), f(x), strict=True):
        torch.testing.assert_close(got, want)


def test_list_index_and_count_over_constant_items():
    def f(x, names):
        kinds = list(names)
        kinds.append("full")
        return x * kinds.index("full") + kinds.count("sliding")

    one_graph(f, torch.randn(3), ["sliding", "sliding"])


def test_list_index_of_a_missing_item_raises_value_error():
    def f(x):
        kinds = ["a", "b"]
        return x + kinds.index("c")

    with pytest.raises(ValueError):
        fj.compile(f, backend="eager")(torch.randn(3))


# huggingface_hub's strict dataclasses pick a validator from a dict keyed by types and
# typing special forms (`_BASIC_TYPE_VALIDATORS.get(get_origin(t))`)
def _check_list(x):
    return x + 1


def _check_union(x):
    return x * 2


VALIDATORS = {
    typing.Union: _check_union,
    list: _check_list,
    "plain": _check_list,
    typing.Literal: abs,
}


def test_dict_keyed_by_types_and_special_forms():
    def f(x, t):
        validator = VALIDATORS.get(typing.get_origin(t))
        missing = VALIDATORS.get(dict)
        return validator(x) if missing is None else x

    compiled = one_graph(f, torch.randn(3), typing.Optional[int])  # noqa: UP045
    x = torch.randn(3)
    for t in (typing.Union[int, str], typing.Literal["a"]):  # noqa: UP007 (hit, recompile)
        torch.testing.assert_close(compiled(x, t), f(x, t))


def test_dict_keyed_by_types_rebound_between_calls_recompiles():
    table = {int: _check_list, list: _check_union}

    def f(x):
        return table[list](x)

    compiled = fj.compile(f)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x * 2)
    table[list] = _check_list  # the value read by position is guarded
    torch.testing.assert_close(compiled(x), x + 1)
    del table[int]
    table[int] = _check_union  # same keys, new order: the key at position 0 changed
    torch.testing.assert_close(compiled(x), x + 1)
    table.clear()
    table[tuple] = _check_list
    table[list] = _check_union
    torch.testing.assert_close(compiled(x), x * 2)


class Record:
    def __init__(self):
        self.a = 1


def test_key_in_instance_dict():
    def f(x, obj):
        made = Record()
        extra = 1 if "b" in made.__dict__ else 0
        return x + ("a" in obj.__dict__) + ("b" in obj.__dict__) + extra

    obj = Record()
    compiled = one_graph(f, torch.randn(3), obj)
    obj.b = 2  # its absence was guarded
    torch.testing.assert_close(compiled(torch.ones(3), obj), torch.ones(3) + 2)


def test_loss_module_built_in_the_frame():
    """transformers' heads build `CrossEntropyLoss()` in forward: its `weight` buffer is
    None, so it holds no state and is made at trace time."""

    def f(logits, labels):
        return torch.nn.CrossEntropyLoss()(logits.view(-1, 3), labels.view(-1))

    one_graph(f, torch.randn(4, 3), torch.tensor([0, 2, 1, 0]))


def test_hasattr_on_a_none_made_in_the_frame():
    """transformers' masking utils: `hasattr(cache, "is_sliding")` with no cache."""

    def f(x):
        cache = None
        sliding = getattr(cache, "is_sliding", False)
        return x + 1 if not hasattr(cache, "layers") and not sliding else x

    one_graph(f, torch.randn(3))


def _json_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("json") is not None


_json_installed._dynamo_marked_constant = True  # transformers' _make_compile_constant


def test_function_marked_constant_is_called_at_trace_time_and_folded():
    """An install probe marked constant (transformers' `is_torch_available`) is folded:
    importlib's find_spec would be a graph break."""

    def f(x):
        return x + 1 if _json_installed() else x - 1

    one_graph(f, torch.randn(3))


def test_weight_norm_parametrization_in_one_graph_with_eager_grads():
    """torch.nn.utils.parametrizations.weight_norm (wav2vec2's positional conv): `weight` is
    a property whose getter closes over the tensor's name, guarded through the class."""
    torch.manual_seed(0)
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3), dim=2)
    twin = copy.deepcopy(conv)
    x = torch.randn(1, 2, 8)
    graphs = []
    unsubscribe = events.subscribe(lambda r: graphs.extend(r.graphs))
    try:
        compiled = fj.compile(conv, fullgraph=True)
        got, expected = compiled(x), twin(x)
    finally:
        unsubscribe()
    torch.testing.assert_close(got, expected)
    got.sum().backward()
    expected.sum().backward()
    for (name, p), (_, q) in zip(conv.named_parameters(), twin.named_parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, msg=name)
    assert len(graphs) == 1
