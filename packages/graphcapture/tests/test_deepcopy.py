"""copy.deepcopy in the traced frame (variables/copy_models.py): a config object copied,
its copy changed and read, as transformers' `get_text_config(decoder=True)` does for T5,
in one graph, guarded on what was copied; what deepcopy cannot be modelled for runs
eagerly with the same result."""

from __future__ import annotations

import copy

import torch

from framejit import graphcapture as fj
from framejit.graphcapture import events


class Config:
    """Like transformers' PreTrainedConfig: attribute aliases through __getattribute__."""

    attribute_map = {"hidden": "d_model"}
    decoder_scale = 1.0  # a class default an instance value shadows

    def __init__(self):
        self.d_model = 4
        self.decoder_scale = 3.0
        self.labels = {0: "a", 1: "b"}
        self.sizes = [1, 2]
        self.name = "t5"

    def __getattribute__(self, key):
        if key != "attribute_map" and key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        return super().__getattribute__(key)

    def __setattr__(self, key, value):
        if key in super().__getattribute__("attribute_map"):
            key = super().__getattribute__("attribute_map")[key]
        super().__setattr__(key, value)


def decoder_view(cfg):
    """get_text_config's legacy branch: copy, then rename the decoder_* keys."""
    out = copy.deepcopy(cfg)
    for key in copy.deepcopy(out.__dict__):
        if key.startswith("decoder_"):
            value = getattr(out, key)
            delattr(out, key)
            setattr(out, key[len("decoder_") :], value)
    out.sizes.append(3)
    return out


def _counting(fn):
    graphs = []
    unsubscribe = events.subscribe(lambda r: graphs.extend(r.graphs))
    return graphs, unsubscribe


def test_config_copied_renamed_and_read_in_one_graph():
    cfg = Config()

    def f(x):
        view = decoder_view(cfg)
        return x * view.scale * view.hidden + len(view.sizes) + view.decoder_scale, view

    graphs, unsubscribe = _counting(f)
    try:
        compiled = fj.compile(f, fullgraph=True)
        x = torch.randn(3)
        for _ in range(2):
            got, got_view = compiled(x)
            expected, expected_view = f(x)
            torch.testing.assert_close(got, expected)
            assert vars(got_view) == vars(expected_view)
            assert type(got_view) is Config and got_view is not cfg
    finally:
        unsubscribe()
    assert len(graphs) == 1
    assert cfg.sizes == [1, 2] and cfg.decoder_scale == 3.0  # the original is untouched


def test_a_changed_or_added_attribute_of_the_original_is_seen():
    cfg = Config()

    def f(x):
        view = decoder_view(cfg)
        return x * view.scale + len(view.__dict__)

    compiled = fj.compile(f)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), f(x))
    cfg.decoder_scale = 5.0
    torch.testing.assert_close(compiled(x), f(x))
    cfg.extra = 1
    torch.testing.assert_close(compiled(x), f(x))
    cfg.labels[2] = "c"
    torch.testing.assert_close(compiled(x), f(x))


class OwnCopy:
    def __init__(self):
        self.k = 2.0

    def __deepcopy__(self, memo):
        out = OwnCopy()
        out.k = self.k * 10
        return out


class Proxy:
    """__getattr__ forwards what the class lacks, __deepcopy__ included."""

    def __init__(self, target):
        self.target = target

    def __getattr__(self, name):
        return getattr(self.target, name)


class WithTensor:
    def __init__(self):
        self.w = torch.ones(3)


def test_what_deepcopy_does_itself_is_kept():
    own, proxy, holder = OwnCopy(), Proxy(OwnCopy()), WithTensor()

    def f(x):
        a = copy.deepcopy(own)
        b = copy.deepcopy(proxy)  # the target's __deepcopy__, found through __getattr__
        c = copy.deepcopy(holder)
        c.w.add_(1)
        return x * a.k + b.k + c.w

    x = torch.randn(3)
    torch.testing.assert_close(fj.compile(f)(x), f(x))
    assert holder.w.eq(1).all()


def test_delattr_on_an_outside_object_happens_once():
    class Box:
        pass

    def f(x, box):
        delattr(box, "k")
        return x + 1

    box, twin = Box(), Box()
    box.k = twin.k = 1
    x = torch.randn(2)
    torch.testing.assert_close(fj.compile(f)(x, box), f(x, twin))
    assert not hasattr(box, "k")
