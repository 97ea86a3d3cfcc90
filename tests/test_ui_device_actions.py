"""Record, review, accept and reject without the keyboard, in the real window: a headset page
(a websocket client speaking the page's protocol to the real headset server) presses HUD buttons
and sees the flow's mode, times, count and buttons on its HUD and the reviewed take replayed;
a glove's buttons do the same over its real ZeroMQ sockets. Malformed actions change nothing."""
from __future__ import annotations

import json
import threading
import time

import mujoco
import numpy as np
import pytest
from test_devices_webxr import _frame_msg, _tls
from test_ui_station import TASK, connect_in_panel, free_port, window  # noqa: F401 - the fixture
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from devices.glove import GLOVE_REJECT_REASON, GloveLink
from devices.glove_motion import GloveMotion
from devices.webxr.scene_msgs import body_poses
from ui.record_panel import REJECT_REASONS

PAGE_HZ = 30.0          # frames per second the fake page streams (a headset streams 72-90)


class Page:
    """What the headset page does on the wire: stream hand frames, keep the latest HUD and poses
    the app sends, send actions."""

    def __init__(self, port: int, code: str):
        url = f"wss://127.0.0.1:{port}/ws?code={code}&client=test"
        self.ws = connect(url, ssl=_tls(), open_timeout=10).__enter__()
        self.hud: dict | None = None
        self.poses: dict | None = None
        self.huds: list[dict] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._stream, daemon=True),
                         threading.Thread(target=self._listen, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _stream(self) -> None:
        seq = 0
        while not self._stop.is_set():
            try:
                self.ws.send(json.dumps(_frame_msg(seq)))
            except ConnectionClosed:
                return
            seq += 1
            time.sleep(1.0 / PAGE_HZ)

    def _listen(self) -> None:
        try:
            for text in self.ws:
                msg = json.loads(text)
                if msg["type"] == "hud":
                    self.hud = msg
                    self.huds.append(msg)
                elif msg["type"] == "poses":
                    self.poses = msg["bodies"]
        except ConnectionClosed:
            pass

    def press(self, name: str, arg=None) -> None:
        self.ws.send(json.dumps({"type": "action", "name": name, "arg": arg}))

    def buttons(self) -> list[tuple[str, object]]:
        return [(b["name"], b["arg"]) for b in (self.hud or {}).get("buttons", [])]

    def close(self) -> None:
        self._stop.set()
        self.ws.close()


@pytest.fixture
def page(window, qtbot):  # noqa: F811 - the imported fixture
    win = window
    connect_in_panel(qtbot, win, "webxr", host="127.0.0.1", port=free_port(), config_dir=str(win.store.root / "certs"))
    qtbot.waitUntil(lambda: win.station.device is not None and win.station.device.is_connected, timeout=30000)
    device = win.station.device
    client = Page(device.server.port, device.pairing_code)
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    yield win, client, device
    client.close()


def _review_via(qtbot, win, press) -> str:
    """Record a short take and stop it with ``press``; the take's id once it is under review."""
    press("record")
    qtbot.waitUntil(lambda: win.station.snapshot().recorded_ticks > 30, timeout=15000)
    press("record")                                          # the same button is Stop while recording
    qtbot.waitUntil(lambda: win._reviewing, timeout=15000)
    return win.review.take.meta.take_id


def _accept(qtbot, win, press, take_id: str) -> None:
    press("accept")
    qtbot.wait(300)
    if win.store.index.get(take_id).status == "recorded":  # a flagged take (short, score 0): twice
        press("accept")
    qtbot.waitUntil(lambda: win.store.index.get(take_id).status != "recorded", timeout=15000)


def _poses_of(model, qpos) -> dict:
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    mujoco.mj_kinematics(model, data)
    return body_poses(model, data)


def _close_to(received: dict, expected: dict) -> bool:
    return all(np.allclose(received[name], pose, atol=2e-5) for name, pose in expected.items() if name in received)


def test_headset_buttons_record_accept_and_reject_with_a_reason(page, qtbot):
    win, client, device = page
    qtbot.waitUntil(lambda: client.hud is not None and client.hud["mode"] == "LIVE"
                    and client.buttons() == [("record", None)], timeout=10000)
    accepted, target = win.task_panel.picker.accepted(TASK)
    assert (client.hud["accepted"], client.hud["target"]) == (accepted, target) and target > 0

    inputs = win.flow.inputs                                 # malformed actions: dropped, nothing runs
    for text in ('{"type": "action"}', '{"type": "action", "name": "accept", "arg": {"x": 1}}',
                 '{"type": "action", "name": "launch"}'):
        client.ws.send(text)
    qtbot.waitUntil(lambda: device.stats()["dropped"].get("action") == 3, timeout=5000)
    qtbot.wait(300)
    assert win.flow.inputs == inputs and not win.station.snapshot().recording
    assert "not an operator action; valid: 'record', 'accept'" in device.stats()["last_error"]

    win.station.engage(True)            # the robot follows the hands: the take differs from the reset pose
    client.press("record")
    qtbot.waitUntil(lambda: win.station.snapshot().recording, timeout=10000)
    qtbot.waitUntil(lambda: client.hud["mode"] == "RECORDING" and client.hud["elapsed_s"] >= 1.0, timeout=10000)
    assert client.buttons() == [("record", None), ("rerecord", None)]
    assert client.hud["remaining_s"] is not None and client.hud["remaining_s"] > 0 and client.hud["recording"]
    client.press("record")
    qtbot.waitUntil(lambda: win._reviewing, timeout=15000)
    first = win.review.take.meta.take_id
    qtbot.waitUntil(lambda: client.hud["mode"] == "REVIEW", timeout=5000)
    assert client.buttons() == [("accept", None), ("reject", None), ("rerecord", None)]

    # The headset replays the reviewed take, not the live robot: paused at its first tick.
    client.press("play")
    qtbot.waitUntil(lambda: not win.review.playing, timeout=5000)
    win.review.seek(0)
    model = win.station.snapshot().model
    expected = _poses_of(model, win.review.qpos())
    live = _poses_of(model, win.station.snapshot().qpos)
    assert not _close_to(expected, live), "the live robot did not move away from the take's start"
    qtbot.waitUntil(lambda: client.poses is not None and _close_to(client.poses, expected), timeout=5000)

    _accept(qtbot, win, client.press, first)
    assert win.store.index.get(first).status in ("accepted", "validated_pass", "validated_fail")
    qtbot.waitUntil(lambda: client.hud["mode"] == "LIVE", timeout=10000)
    qtbot.waitUntil(lambda: client.poses is not None and _close_to(client.poses, _poses_of(
        model, win.station.snapshot().qpos)), timeout=5000)        # live again after the review

    second = _review_via(qtbot, win, client.press)
    client.press("reject")                                  # Reject… then one of the reasons
    qtbot.waitUntil(lambda: ("reason", 2) in client.buttons(), timeout=5000)
    assert [b["label"] for b in client.hud["buttons"]][:len(REJECT_REASONS)] == list(REJECT_REASONS)
    client.press("reason", 2)
    qtbot.waitUntil(lambda: win.store.index.get(second).status == "rejected", timeout=10000)
    assert win.store.index.get(second).reason == REJECT_REASONS[1]
    assert device.stats()["dropped"].get("action") == 3     # only the three malformed ones


def test_glove_buttons_record_and_accept_over_zeromq(window, qtbot):  # noqa: F811 - the imported fixture
    win = window
    link = GloveLink("tcp://127.0.0.1:*", None)
    held: set[str] = set()
    stop = threading.Event()

    def stream():                                          # the glove bridge, at its ~100 Hz
        motion, seq = GloveMotion(), 0
        while not stop.is_set():
            link.send(seq, seq * 0.01, motion.hands(seq * 0.01), buttons=set(held))
            seq += 1
            time.sleep(0.01)
    thread = threading.Thread(target=stream, daemon=True)
    thread.start()

    def press(name: str) -> None:                          # a real press: down for 0.1 s, then up
        held.add(name)
        time.sleep(0.1)
        held.discard(name)
        time.sleep(0.4)                                    # beyond the glove's debounce
    try:
        connect_in_panel(qtbot, win, "glove", endpoint=link.endpoint, haptics_bind="tcp://127.0.0.1:*")
        qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=15000)
        take_id = _review_via(qtbot, win, press)
        _accept(qtbot, win, press, take_id)
        assert win.store.index.get(take_id).status in ("accepted", "validated_pass", "validated_fail")
        second = _review_via(qtbot, win, press)
        press("reject")
        qtbot.waitUntil(lambda: win.store.index.get(second).status == "rejected", timeout=10000)
        assert win.store.index.get(second).reason == GLOVE_REJECT_REASON
    finally:
        stop.set()
        thread.join(2)
        link.close()
