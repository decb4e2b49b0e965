"""fast_fake: a plain leaf's FakeTensor built directly is the one from_tensor builds.

Parameters and buffers are faked without FakeTensorMode.from_tensor's full description;
these tests hold the result to from_tensor's (metadata, autograd flags, Parameter-ness,
memo and storage aliasing), check that anything else falls back, and compile modules whose
parameters alias each other or are views, against eager.
"""

from __future__ import annotations

import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from framejit import graphcapture as fj
from framejit.graphcapture.fast_fake import fast_fake


def _props(f):
    return (
        tuple(f.shape),
        f.stride(),
        f.dtype,
        f.device,
        f.requires_grad,
        f.is_leaf,
        isinstance(f, torch.nn.Parameter),
        f.storage_offset(),
        f.untyped_storage().nbytes(),
    )


PLAIN = {
    "parameter": lambda: torch.nn.Parameter(torch.randn(3, 4)),
    "frozen parameter": lambda: torch.nn.Parameter(torch.randn(3, 4), requires_grad=False),
    "float64 parameter": lambda: torch.nn.Parameter(torch.randn(2, 3, dtype=torch.float64)),
    "buffer": lambda: torch.randn(5),
    "int scalar": lambda: torch.zeros((), dtype=torch.int64),
    "transposed strides": lambda: torch.empty_strided((3, 4), (1, 3)).normal_(),
    "leaf requiring grad": lambda: torch.randn(2, 2, requires_grad=True),
    "empty": lambda: torch.randn(0, 3),
}


@pytest.mark.parametrize("name", list(PLAIN))
def test_plain_leaf_matches_from_tensor(name):
    t = PLAIN[name]()
    if t.numel() == 0:
        assert fast_fake(FakeTensorMode(), t) is None  # an empty storage: the general path
        return
    mode = FakeTensorMode()
    fake = fast_fake(mode, t)
    assert fake is not None
    assert _props(fake) == _props(FakeTensorMode().from_tensor(t, static_shapes=True))
    # the converter's memo holds it: from_tensor returns the same fake afterwards
    assert mode.from_tensor(t, static_shapes=True) is fake
    with mode:
        out = (fake * 2).sum()
    assert out.requires_grad == t.requires_grad


NOT_PLAIN = {
    "view": lambda: torch.randn(4, 4)[1:],
    "offset into its storage": lambda: torch.randn(8).as_strided((2,), (1,), 3).detach(),
    "sparse": lambda: torch.randn(3, 3).to_sparse(),
    "conj bit": lambda: torch.randn(3, dtype=torch.complex64).conj(),
    "non-leaf": lambda: torch.randn(3, requires_grad=True) * 2,
    "inference tensor": lambda: _inference(),
}


def _inference():
    with torch.inference_mode():
        return torch.randn(3)


@pytest.mark.parametrize("name", list(NOT_PLAIN))
def test_other_tensors_take_the_general_path(name):
    assert fast_fake(FakeTensorMode(), NOT_PLAIN[name]()) is None


def test_shared_storage_aliases_as_from_tensor_does():
    p = torch.nn.Parameter(torch.randn(4, 4))
    mode = FakeTensorMode()
    fake = fast_fake(mode, p)
    # p.data: another tensor on p's storage (no view): the general path, on the memo'd storage
    assert fast_fake(mode, p.data) is None
    other = mode.from_tensor(p.data, static_shapes=True)
    assert other.untyped_storage()._cdata == fake.untyped_storage()._cdata


class _Aliased(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(4, 4))
        self.register_buffer("same_storage", self.w.data)  # shares w's storage
        self.register_buffer("row", self.w.data[1])  # a view into it
        self.tied = self.w

    def forward(self, x):
        return x @ self.w + self.same_storage.sum() + self.row + (x @ self.tied)


@pytest.mark.parametrize("train", [False, True])
def test_module_with_aliased_parameters_against_eager(train):
    torch.manual_seed(0)
    mod = _Aliased().train(train)
    x = torch.randn(3, 4)
    counter = fj.testing.CompileCounter()
    compiled = fj.compile(mod, backend=counter)
    with torch.set_grad_enabled(train):
        expected = mod(x)
        got = compiled(x)
    torch.testing.assert_close(got, expected)
    assert counter.frame_count == 1
    if train:
        got.sum().backward()
        grad = mod.w.grad.clone()
        mod.w.grad = None
        expected.sum().backward()
        torch.testing.assert_close(grad, mod.w.grad)
