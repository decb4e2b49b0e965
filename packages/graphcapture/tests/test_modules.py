"""nn.Module capture: parameters as get_attr, inlined forwards, wrappers that act like the module."""

from __future__ import annotations

import pytest
import torch
from oracle import eager_op_count, graph_op_count
from torch import nn

from framejit import graphcapture as fj


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.scale = 2.0

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x))) * self.scale


class WithModuleList(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x) + i
        return x


class WithModuleDict(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 3)})

    def forward(self, x):
        return {k: head(x) for k, head in self.heads.items()}


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.arange(4.0))
        self.weight = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return x * self.weight + self.offset


class Residual(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x):
        return x + self.inner(x)


class SuperCall(nn.Linear):
    def forward(self, x):
        return super().forward(x).relu()


class UsesParametersIteration(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        reg = sum(p.pow(2).sum() for p in self.parameters())
        return self.b(self.a(x)), reg


class TrainingFlag(nn.Module):
    def forward(self, x):
        if self.training:
            return x * 2
        return x * 3


MODULES = {
    "linear": (lambda: nn.Linear(8, 4), lambda: torch.randn(3, 8)),
    "sequential_mlp": (
        lambda: nn.Sequential(
            nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 4)
        ),
        lambda: torch.randn(3, 8),
    ),
    "custom_mlp": (MLP, lambda: torch.randn(3, 8)),
    "module_list": (WithModuleList, lambda: torch.randn(2, 6)),
    "module_dict": (WithModuleDict, lambda: torch.randn(2, 4)),
    "buffer": (WithBuffer, lambda: torch.randn(4)),
    "residual": (
        lambda: Residual(nn.Sequential(nn.Linear(5, 5), nn.Tanh())),
        lambda: torch.randn(2, 5),
    ),
    "super_call": (lambda: SuperCall(4, 4), lambda: torch.randn(2, 4)),
    "parameters_iteration": (UsesParametersIteration, lambda: torch.randn(2, 3)),
    "conv_bn_eval": (
        lambda: nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval(),
        lambda: torch.randn(2, 3, 8, 8),
    ),
    "layernorm_dropout_eval": (
        lambda: nn.Sequential(nn.LayerNorm(6), nn.Dropout(0.3)).eval(),
        lambda: torch.randn(2, 6),
    ),
    "embedding": (lambda: nn.Embedding(10, 4), lambda: torch.tensor([1, 2, 7])),
    "lstm_free_rnn_cell": (lambda: nn.GRUCell(4, 4), lambda: torch.randn(2, 4)),
    "flatten_pool": (
        lambda: nn.Sequential(nn.Conv2d(1, 2, 3), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(18, 3)),
        lambda: torch.randn(2, 1, 8, 8),
    ),
    "transformer_encoder_layer": (
        lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True),
        lambda: torch.randn(2, 5, 16),
    ),
    "transformer_encoder_layer_eval": (
        lambda: nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True).eval(),
        lambda: torch.randn(2, 5, 16),
    ),
    "multihead_attention": (
        lambda: _MHA(),
        lambda: torch.randn(2, 5, 8),
    ),
    "training_flag": (TrainingFlag, lambda: torch.randn(3)),
}


class _MHA(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        out, weights = self.attn(x, x, x)
        return out, weights


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_eager(name):
    torch.manual_seed(0)
    make, make_input = MODULES[name]
    module = make()
    x = make_input()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(module, backend=counter)
    expected = module(x)
    torch.testing.assert_close(compiled(x), expected)
    torch.testing.assert_close(compiled(x), expected)
    assert counter.frame_count == 1
    assert graph_op_count(counter.graphs) == eager_op_count(module, x) or name.startswith(
        ("multihead", "transformer", "lstm", "parameters_iteration")
    )


class Doubles(nn.Module):
    def forward(self, x):
        return x * 2


class EagerFrameCallsTorchModules(nn.Module):
    """wav2vec2's encoder: a data-dependent branch in a loop runs the frame eagerly, and
    the torch.nn modules it calls run for real (as under torch.compile), not one graph each;
    a user module it calls is still captured, and so are a torch.nn forward with a hook and
    the hook (torch.compile: 1 and 3 graphs)."""

    def __init__(self, hooked: bool):
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.drop = nn.Dropout(0.0)
        self.twice = Doubles()
        if hooked:
            self.norm.register_forward_hook(lambda module, args, out: out + 1)

    def forward(self, x):
        x = self.twice(self.drop(self.norm(x)))
        for _ in range(2):
            if x.sum() > 0:
                x = x + 1
        return x


@pytest.mark.parametrize("hooked, graphs", [(False, 1), (True, 3)], ids=["plain", "hooked"])
def test_torch_modules_called_from_an_eager_frame(hooked, graphs):
    torch.manual_seed(0)
    module = EagerFrameCallsTorchModules(hooked)
    x = torch.randn(2, 8)
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(module, backend=counter)
    for _ in range(2):
        torch.testing.assert_close(compiled(x), module(x))
    assert counter.frame_count == graphs


def test_torch_module_compiled_directly_is_one_graph_with_its_hooks():
    module = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    module.register_forward_hook(lambda m, args, out: out * 3)
    x = torch.randn(2, 4)
    counter = fj.testing.CompileCounter()
    torch.testing.assert_close(fj.compile(module, backend=counter)(x), module(x))
    assert counter.frame_count == 1


def test_parameters_reach_the_graph_as_get_attr():
    counter = fj.testing.CompileCounter()
    module = MLP()
    fj.compile(module, backend=counter)(torch.randn(2, 8))
    [gm] = counter.graphs
    get_attrs = [n for n in gm.graph.nodes if n.op == "get_attr"]
    assert len(get_attrs) == 4
    params = {id(p) for p in module.parameters()}
    assert {id(getattr(gm, n.target)) for n in get_attrs} == params


def test_wrapper_behaves_like_the_module():
    module = MLP()
    compiled = fj.compile(module, backend="eager")
    assert isinstance(compiled, nn.Module)
    assert compiled.state_dict().keys() == module.state_dict().keys()
    assert [id(p) for p in compiled.parameters()] == [id(p) for p in module.parameters()]
    assert dict(compiled.named_parameters()).keys() == dict(module.named_parameters()).keys()
    assert compiled.fc1 is module.fc1
    compiled.eval()
    assert not module.training and not compiled.training
    compiled.train()
    assert module.training
    compiled.scale = 5.0
    assert module.scale == 5.0
    state = {k: torch.zeros_like(v) for k, v in module.state_dict().items()}
    compiled.load_state_dict(state)
    assert torch.count_nonzero(module.fc1.weight) == 0
    assert fj.compile(module, backend="eager").forward is not None


def test_attribute_mutation_between_calls_recompiles():
    module = MLP()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(module, backend=counter)
    x = torch.randn(2, 8)
    torch.testing.assert_close(compiled(x), module(x))
    module.scale = 3.0
    torch.testing.assert_close(compiled(x), module(x))
    assert counter.frame_count == 2
    module.fc2 = nn.Linear(16, 4)  # a new submodule object
    torch.testing.assert_close(compiled(x), module(x))
    assert counter.frame_count == 3
    module.fc1.weight = nn.Parameter(torch.randn(16, 8))  # a new parameter object
    torch.testing.assert_close(compiled(x), module(x))
    assert counter.frame_count == 4
    with torch.no_grad():
        module.fc1.weight.mul_(2)  # in-place update: same object, no recompile needed
    torch.testing.assert_close(compiled(x), module(x))
    assert counter.frame_count == 4


def test_train_eval_switch_recompiles():
    module = TrainingFlag()
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(module, backend=counter)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x * 2)
    compiled.eval()
    torch.testing.assert_close(compiled(x), x * 3)
    assert counter.frame_count == 2


def test_batchnorm_training_updates_running_stats():
    torch.manual_seed(0)
    reference = nn.BatchNorm1d(4)
    module = nn.BatchNorm1d(4)
    module.load_state_dict(reference.state_dict())
    compiled = fj.compile(module, backend="eager")
    for _ in range(3):
        x = torch.randn(8, 4)
        torch.testing.assert_close(compiled(x), reference(x))
    torch.testing.assert_close(module.running_mean, reference.running_mean)
    torch.testing.assert_close(module.running_var, reference.running_var)
    assert module.num_batches_tracked == reference.num_batches_tracked


class CountsCalls(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        self.calls += 1
        self.last = x * 2
        return self.lin(x)


def test_attribute_stores_are_replayed():
    module = CountsCalls()
    compiled = fj.compile(module, backend="eager")
    x = torch.randn(2, 3)
    compiled(x)
    compiled(x)
    assert module.calls == 2
    torch.testing.assert_close(module.last, x * 2)


def test_module_with_hooks_still_matches_eager():
    module = nn.Linear(3, 3)
    seen = []
    module.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    compiled = fj.compile(Residual(module), backend="eager")
    x = torch.randn(2, 3)
    torch.testing.assert_close(compiled(x), x + module(x))
    assert len(seen) == 2


class _PrecedenceBase(nn.Module):
    def linear(self, x):
        return x * 2.0


class _AttributePrecedence(_PrecedenceBase):
    """torch's test_module_attribute_precedence: a class attribute (the base's `linear`, the
    class's `activation`) wins over a submodule of that name; an instance attribute (a
    tensor, a float) wins over a method."""

    def __init__(self):
        super().__init__()
        self.activation = nn.ReLU()
        self.linear = nn.Linear(4, 4)
        self.initializer = torch.ones([4, 4])
        self.scale = 0.5

    def activation(self, x):
        return x * 1.2

    def initializer(self):
        return torch.zeros([4, 4])

    def scale(self):
        return 2.0

    def forward(self, x):
        return self.activation(self.linear(self.initializer + x)) * self.scale


def test_class_attribute_shadows_a_submodule():
    mod = _AttributePrecedence()
    x = torch.randn(4, 4)
    counter = fj.testing.CompileCounter()
    torch.testing.assert_close(fj.compile(mod, backend=counter, fullgraph=True)(x), mod(x))
    assert counter.frame_count == 1
