"""fake_cache: the capture's FakeTensorMode builds torch's own dispatch-cache key, faster.

For a table of ops (pointwise, views, reshape through matmul's _unsafe_view, indexing,
reductions with dim lists, factories with dtype keywords, SDPA, a bool mask, kwargs, lists
of tensors) each dispatch's key is checked element for element against torch's
``FakeTensorMode._cache_key``, and the outputs of a second call (cache hits, built by the
fast entry path) against a plain FakeTensorMode's: metadata, autograd flags, and storage
shared with the input for a view.  torch's own cross-check (``cache_crosscheck_enabled``:
every hit re-dispatched uncached and compared) runs under a compiled model, against eager.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import FakeTensorMode, _BypassDispatchCache, _CacheKeyState
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from framejit import graphcapture as fj
from framejit.graphcapture.fake_cache import CaptureFakeMode

OPS = {
    "add": lambda x, w, m: x + x,
    "add scalar float": lambda x, w, m: x + 1.5,
    "add int scalar": lambda x, w, m: x * 2,
    "linear (mm + _unsafe_view)": lambda x, w, m: F.linear(x, w),
    "matmul 3d": lambda x, w, m: x @ w,
    "view": lambda x, w, m: x.view(2, 256),
    "transpose": lambda x, w, m: x.transpose(1, 2),
    "slice getitem": lambda x, w, m: x[..., :16],
    "select getitem": lambda x, w, m: x[:, 0],
    "index with tensor": lambda x, w, m: x[:, torch.tensor([0, 2])],
    "reshape non-contiguous": lambda x, w, m: x.transpose(1, 2).reshape(2, -1),
    "sum dim list": lambda x, w, m: x.sum([0, 2], keepdim=True),
    "softmax dtype kw": lambda x, w, m: x.softmax(-1, dtype=torch.float64),
    "layer_norm": lambda x, w, m: F.layer_norm(x, (32,)),
    "cat list": lambda x, w, m: torch.cat([x, x], dim=1),
    "zeros factory": lambda x, w, m: torch.zeros(3, 4, dtype=torch.int32),
    "to dtype": lambda x, w, m: x.to(torch.float16),
    "masked_fill bool": lambda x, w, m: x.masked_fill(m, 0.0),
    "where": lambda x, w, m: torch.where(m, x, -x),
    "sdpa with bool mask": lambda x, w, m: F.scaled_dot_product_attention(
        x.view(2, 2, 4, 32), x.view(2, 2, 4, 32), x.view(2, 2, 4, 32), attn_mask=m[:, None, :4, :4]
    ),
    "contiguous": lambda x, w, m: x.transpose(1, 2).contiguous(),
    "max dim (tuple out)": lambda x, w, m: x.max(dim=-1),
    "in-place add": lambda x, w, m: x.clone().add_(1),
    "unsqueeze": lambda x, w, m: x.unsqueeze(0),
}


def _inputs(mode, grad):
    x = mode.from_tensor(torch.randn(2, 8, 32), static_shapes=True)
    w = mode.from_tensor(torch.randn(32, 32, requires_grad=grad), static_shapes=True)
    m = mode.from_tensor(torch.rand(2, 8, 32) > 0.5, static_shapes=True)
    return x, w, m


def _props(t):
    if isinstance(t, tuple):
        return tuple(_props(x) for x in t)
    return (
        type(t).__name__,
        tuple(t.shape),
        t.stride(),
        t.dtype,
        t.device,
        t.storage_offset(),
        t.untyped_storage().nbytes(),
        t.requires_grad,
        t.is_leaf,
        t._is_view(),
        t.is_contiguous(),
    )


@pytest.fixture
def key_checks(monkeypatch):
    """Every key the fast path builds, beside torch's for the same dispatch."""
    seen = []
    fast = CaptureFakeMode._cache_key

    def both(self, state, func, args, kwargs):
        mine = fast(self, state, func, args, kwargs)  # raises where torch's bypasses
        try:
            theirs = FakeTensorMode._cache_key(
                self, _CacheKeyState(self.shape_env), func, args, kwargs
            )
        except _BypassDispatchCache:  # pragma: no cover - the fast one fell back first
            theirs = None
        seen.append((func, mine.key, theirs.key if theirs is not None else None))
        return mine

    monkeypatch.setattr(CaptureFakeMode, "_cache_key", both)
    return seen


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("name", list(OPS))
def test_key_is_torchs_and_hits_match_plain_dispatch(name, grad, key_checks):
    op = OPS[name]
    mode = CaptureFakeMode(shape_env=ShapeEnv())
    x, w, m = _inputs(mode, grad)
    with torch.set_grad_enabled(grad), mode:
        first = op(x, w, m)
        hit = op(x, w, m)  # the second call is served from the cache
    for func, mine, theirs in key_checks:
        assert mine == theirs, func
    plain = FakeTensorMode(shape_env=ShapeEnv())
    px, pw, pm = _inputs(plain, grad)
    with torch.set_grad_enabled(grad), plain:
        expected = op(px, pw, pm)
    assert _props(hit) == _props(first) == _props(expected)
    for out in hit if isinstance(hit, tuple) else (hit,):
        if out._is_view():  # a view from a hit shares its input's storage, as eager's
            assert out.untyped_storage()._cdata == out._base.untyped_storage()._cdata


def test_view_of_a_hit_aliases_its_input():
    mode = CaptureFakeMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.randn(4, 6), static_shapes=True)
    with mode:
        x.view(24)
        y = x.view(24)  # a hit
        y.add_(1)  # an in-place op through the alias is legal and keeps the storage
    assert y.untyped_storage()._cdata == x.untyped_storage()._cdata
    assert y._base is x


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_unsafe_view_is_views_twin_below_autograd(grad):
    """_unsafe_view dispatched as view: same metadata and storage as torch's own impl, and
    above the dispatch still no view (autograd tracks it as _unsafe_view)."""
    outs = []
    for mode in (CaptureFakeMode(shape_env=ShapeEnv()), FakeTensorMode(shape_env=ShapeEnv())):
        x = mode.from_tensor(torch.randn(16, 32), static_shapes=True)
        with torch.set_grad_enabled(grad), mode:
            y = (x * 2).requires_grad_(grad) if grad else x
            outs.append([torch.ops.aten._unsafe_view(y, [2, 8, 32]) for _ in range(2)])
            assert all(o.untyped_storage()._cdata == y.untyped_storage()._cdata for o in outs[-1])
            with pytest.raises(Exception, match="view"):  # not viewable: view's error
                torch.ops.aten._unsafe_view(y.t(), [2, 8, 32])
    mine, torchs = outs
    assert [_props(o) for o in mine] == [_props(o) for o in torchs]
    assert not mine[0]._is_view()


def test_symbolic_sizes_take_torchs_path():
    shape_env = ShapeEnv()
    mode = CaptureFakeMode(shape_env=shape_env)
    x = mode.from_tensor(torch.randn(4, 6))  # dynamic sizes: SymInts
    assert isinstance(x.shape[0], torch.SymInt)
    with mode:
        a = x * 2
        b = x * 2
    assert a.shape == b.shape == x.shape


def test_static_view_of_a_dynamic_tensor_takes_torchs_path():
    # x[0] of a (s0, 1) tensor: static sizes, but its storage's size is symbolic
    shape_env = ShapeEnv()
    mode = CaptureFakeMode(shape_env=shape_env)
    x = mode.from_tensor(torch.randn(4, 1))
    with mode:
        row = x[0]
        assert not isinstance(row.shape[0], torch.SymInt)
        assert isinstance(row.untyped_storage().nbytes(), torch.SymInt)
        a = row + 1
    assert a.shape == (1,)


def test_compiled_static_view_of_a_dynamic_input():
    def fn(x):
        return x[0] + 1, torch.outer(x[1], x[2])

    x = torch.rand(4, 1)
    fj.reset()
    torch.testing.assert_close(fj.compile(fn, dynamic=True, fullgraph=True)(x), fn(x))


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
            for _ in range(2)
        )

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, src_key_padding_mask=mask)
        return x[:, :4].reshape(2, -1) @ torch.ones(64, 3)


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_compiled_model_under_torchs_crosscheck(train):
    """Every cache hit of the capture re-dispatched uncached and compared by torch."""
    import torch._dynamo.config  # the reference switch (tests may read torch._dynamo)

    hits = FakeTensorMode.cache_hits
    torch.manual_seed(0)
    model = _Block().train(train)
    x = torch.randn(2, 5, 16, requires_grad=train)
    mask = torch.tensor([[False] * 5, [False] * 4 + [True]])
    fj.reset()
    crosscheck = torch._dynamo.config.patch(fake_tensor_cache_crosscheck_enabled=True)
    with torch.set_grad_enabled(train), crosscheck:
        expected = model(x, mask)
        got = fj.compile(model, backend="eager")(x, mask)
    torch.testing.assert_close(got, expected)
    assert FakeTensorMode.cache_hits > hits  # the second layer's ops were hits
    if train:
        (g_expected,) = torch.autograd.grad(expected.sum(), x)
        (g_got,) = torch.autograd.grad(got.sum(), x)
        torch.testing.assert_close(g_got, g_expected)


def test_dispatch_skips_torchs_per_op_wrappers_and_keeps_its_paths(caplog):
    """The mode's __torch_dispatch__ is its own (no torch._dynamo disable wrapper around each
    op); the debug log and a nested fake mode keep torch's behaviour."""
    assert not hasattr(CaptureFakeMode.__torch_dispatch__, "_torchdynamo_disable")
    mode = CaptureFakeMode(shape_env=ShapeEnv())
    x = mode.from_tensor(torch.randn(4, 8), static_shapes=True)
    with mode:
        assert (x + 1).shape == (4, 8) and x.sum().dim() == 0
        with caplog.at_level("DEBUG", logger="torch._subclasses.fake_tensor"):
            y = x * 2
        assert any("FakeTensorMode.__torch_dispatch__" in r.getMessage() for r in caplog.records)
        assert y.shape == (4, 8) and y.fake_mode is mode
        with pytest.raises(AssertionError, match="should not be set"):
            mode.__torch_dispatch__(torch.ops.aten.add.Tensor, (), (x, x), {})
