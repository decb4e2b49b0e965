"""`framejit.listeners` entry points: loaded once, only when FRAMEJIT_DUMP_DIR asks for artifacts."""

from __future__ import annotations

from framejit.graphcapture import events


class FakeEntryPoint:
    value = "fake.module:activate"

    def __init__(self, received: list) -> None:
        self.received = received
        self.loads = 0

    def load(self):
        self.loads += 1
        return lambda: events.subscribe(self.received.append)


def _install(monkeypatch, entry_point, env_value):
    monkeypatch.setattr(events, "_plugins_loaded", False)
    monkeypatch.setattr(events, "entry_points", lambda group: [entry_point])
    monkeypatch.setattr(events, "_subscribers", [])
    if env_value is None:
        monkeypatch.delenv(events.LISTENER_TRIGGER, raising=False)
    else:
        monkeypatch.setenv(events.LISTENER_TRIGGER, env_value)


def test_plugins_subscribe_once_when_a_dump_dir_is_requested(monkeypatch, tmp_path):
    received: list = []
    ep = FakeEntryPoint(received)
    _install(monkeypatch, ep, str(tmp_path))
    events.publish("first")
    events.publish("second")
    assert ep.loads == 1
    assert received == ["first", "second"]


def test_plugins_are_not_loaded_without_the_trigger(monkeypatch):
    received: list = []
    ep = FakeEntryPoint(received)
    _install(monkeypatch, ep, None)
    events.publish("record")
    assert ep.loads == 0
    assert received == []


def test_a_failing_plugin_does_not_break_publishing(monkeypatch, tmp_path):
    class Broken(FakeEntryPoint):
        def load(self):
            raise RuntimeError("broken plugin")

    _install(monkeypatch, Broken([]), str(tmp_path))
    got: list = []
    events.subscribe(got.append)
    events.publish("record")
    assert got == ["record"]
