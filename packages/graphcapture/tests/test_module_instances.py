"""Code entered with many instances of one nn.Module class (a layer's forward and its resume
function after a graph break inside the layer): after the first instance, the modules
reached from that argument are traced for any instance (module_policy.py), so the layers
share one cache entry instead of one each (and none runs eagerly past the cache size
limit); every instance's own weights, attributes and submodules still decide the result."""

from __future__ import annotations

import weakref

import torch
import torch._dynamo.testing

from framejit import frameeval as fe
from framejit import graphcapture as fj


def _untraceable(x):
    print("", end="")  # a graph break for framejit and torch.compile alike
    return x


class Layer(torch.nn.Module):
    def __init__(self, scale=1.0, act=None, bias=True):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8, bias=bias)
        self.norm = torch.nn.LayerNorm(8)
        self.act = act or torch.nn.ReLU()
        self.scale = scale

    def forward(self, x):
        x = self.act(self.lin(x))
        x = _untraceable(x)
        return self.norm(x) * self.scale + x


class Stack(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def _run(model, x, backend):
    with torch.no_grad():
        expected = model(x)
        compiled = fj.compile(model, backend=backend)
        for _ in range(2):
            torch.testing.assert_close(compiled(x), expected)


def test_layers_with_a_break_share_one_cache_entry_past_the_cache_limit():
    torch.manual_seed(0)
    fj.reset()
    model = Stack([Layer() for _ in range(12)]).eval()  # more layers than cache entries
    counter = fj.testing.CompileCounter()
    _run(model, torch.randn(2, 8), counter)
    # the first layer's entry, then one for every other layer (forward and resume alike)
    assert len(fe.cache_entries(Layer.forward)) == 2
    assert counter.frame_count == 4  # 2 per entry: before and after the break

    torch._dynamo.reset()
    reference = torch._dynamo.testing.CompileCounter()
    with torch.no_grad():
        torch.compile(model, backend=reference)(torch.randn(2, 8))
    torch._dynamo.reset()
    assert counter.frame_count <= 2 * reference.frame_count  # torch.compile: 2


def test_each_instance_keeps_its_own_attributes_submodules_and_missing_bias():
    torch.manual_seed(0)
    fj.reset()
    layers = [
        Layer(),
        Layer(scale=2.0),
        Layer(act=torch.nn.GELU()),
        Layer(bias=False),
        Layer(),
        Layer(scale=2.0, bias=False),
    ]
    _run(Stack(layers).eval(), torch.randn(2, 8), "eager")


def test_a_function_called_with_two_models_of_one_class():
    torch.manual_seed(0)
    fj.reset()

    def fn(model, x):
        return model(x) * 2

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(fn, backend=counter)
    x = torch.randn(2, 8)
    models = [torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh()) for _ in range(4)]
    models.append(torch.nn.Sequential(torch.nn.Linear(8, 8)))  # other children: recompiles
    with torch.no_grad():
        for _ in range(2):
            for model in models:
                torch.testing.assert_close(compiled(model, x), fn(model, x))
    assert counter.frame_count == 3


class Scaled(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.scale = scale

    def forward(self, x):
        return self.lin(x) * self.scale


def test_a_fresh_model_each_call_where_the_last_one_died():
    """A model made afresh for every call (a copy per step, as MAML does) is freed before
    the next is made, which CPython often allocates at the same address: it is another
    instance all the same (traced for any instance from the second call), not the first one
    again (specialised, recompiled on every call and eager past the cache limit)."""
    torch.manual_seed(0)
    fj.reset()

    def step(model, x):
        return model(x) + 1

    counter = fj.testing.CompileCounter()
    compiled = fj.compile(step, backend=counter)
    x = torch.randn(2, 8)
    outputs, expected = [], []
    with torch.no_grad():
        for _ in range(fj.config.cache_size_limit + 2):
            model = Scaled(2.0)
            outputs.append(compiled(model, x))
            expected.append(step(model, x))
            dead = weakref.ref(model)
            del model
            outputs.append(dead() is None)  # (compiled code does not keep it alive)
            expected.append(True)
    torch.testing.assert_close(outputs, expected)
    assert counter.frame_count == 2


def test_parameters_traced_for_any_instance_get_their_gradients():
    torch.manual_seed(0)
    fj.reset()
    model = Stack([Layer() for _ in range(3)]).train()
    twin = Stack([Layer() for _ in range(3)]).train()
    twin.load_state_dict(model.state_dict())
    x = torch.randn(2, 8)
    fj.compile(model)(x).sum().backward()
    twin(x).sum().backward()
    for (name, p), (_, q) in zip(model.named_parameters(), twin.named_parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, msg=name)


def test_identity_of_two_modules_traced_for_any_instance_is_guarded():
    fj.reset()

    def fn(a, b, x):
        return a(x) + 1 if a is b else b(x) - 1

    compiled = fj.compile(fn, backend="eager")
    layers = [torch.nn.Linear(4, 4) for _ in range(3)]
    x = torch.randn(2, 4)
    with torch.no_grad():
        for a, b in [(0, 1), (1, 2), (2, 2), (0, 0), (1, 0)]:
            torch.testing.assert_close(
                compiled(layers[a], layers[b], x), fn(layers[a], layers[b], x)
            )
