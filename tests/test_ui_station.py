"""A station that never dies, in the real window: the two device mistakes that used to kill the
control loop (switching to a glove with a malformed endpoint while connected; a headset port
another program holds) keep it ticking on the previous device and say why in the device panel;
a glove with nothing publishing is never "connected" and cannot record; a dead loop is shown and
restarted by the watchdog; a device's action reaches the flow through the keys' path."""
from __future__ import annotations

import socket
import threading

import pytest
from PyQt6.QtCore import QSettings, Qt

from ui.main_window import MainWindow

TASK = "pick_up_peach"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    win = MainWindow(tmp_path / "store", settings=settings, operator="tester", confirm=False, autostop_s=0.4)
    qtbot.addWidget(win)
    win.show()
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=30000)
    yield win
    win.close()


def connect_in_panel(qtbot, win, name: str, **options) -> None:
    """Pick the device in the panel, fill its form, click Connect (what an operator does)."""
    panel = win.device_panel
    panel.select(name, options)
    qtbot.mouseClick(panel.connect_button, Qt.MouseButton.LeftButton)


def still_ticking(qtbot, win, ticks: int = 25) -> None:
    start = win.station.snapshot().ticks
    qtbot.waitUntil(lambda: win.station.snapshot().ticks > start + ticks, timeout=20000)
    assert win.station.loop.running


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_malformed_glove_endpoint_while_connected_keeps_the_previous_device(window, qtbot):
    win = window
    connect_in_panel(qtbot, win, "synthetic")
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    connect_in_panel(qtbot, win, "glove", endpoint="tcp://127.0.0.1:notaport", haptics_bind="tcp://*:0")
    qtbot.waitUntil(lambda: win.station.snapshot().fault is not None, timeout=10000)
    still_ticking(qtbot, win)
    snap = win.station.snapshot()
    assert snap.connected and snap.device == "synthetic"      # running on the device it had
    panel = win.device_panel
    assert panel.fault.isVisible()
    text = panel.fault.text()
    assert "did not connect" in text and "not a valid address" in text and "tcp://HOST:PORT" in text
    assert "still using" in text
    key_space = win.flow.trigger("record")                    # and the station still records
    assert key_space
    qtbot.waitUntil(lambda: win.station.snapshot().recording, timeout=10000)


def test_headset_port_in_use_keeps_the_loop_and_says_why(window, qtbot):
    win = window
    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        connect_in_panel(qtbot, win, "synthetic")
        qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
        connect_in_panel(qtbot, win, "webxr", host="0.0.0.0", port=port, config_dir=str(win.store.root / "certs"))
        qtbot.waitUntil(lambda: win.station.snapshot().fault is not None, timeout=30000)
        still_ticking(qtbot, win)
        text = win.device_panel.fault.text()
        assert f"port {port} is already in use" in text, text
        assert win.station.snapshot().connected                 # back on the synthetic operator
    finally:
        holder.close()


def test_glove_with_nothing_publishing_is_never_connected(window, qtbot):
    win = window
    connect_in_panel(qtbot, win, "glove", endpoint=f"tcp://127.0.0.1:{free_port()}", haptics_bind="tcp://*:0")
    qtbot.waitUntil(lambda: win.station.snapshot().link == "waiting", timeout=10000)
    snap = win.station.snapshot()
    assert not snap.connected
    qtbot.waitUntil(lambda: "not connected" in win.device_panel.status["state"].text(), timeout=5000)
    win.flow.trigger("record")                                # refused, with the reason where it is asked
    qtbot.waitUntil(lambda: "nothing to record" in win.record_panel.notice.text(), timeout=5000)
    assert not win.station.snapshot().recording
    qtbot.waitUntil(lambda: win.device_panel.fault.isVisible(), timeout=10000)   # after a few seconds: why
    assert "sends nothing" in win.device_panel.fault.text() and "glove-sim" in win.device_panel.fault.text()
    still_ticking(qtbot, win)


def test_watchdog_shows_and_restarts_a_dead_loop(window, qtbot, monkeypatch):
    win, station = window, window.station
    original = station._step

    def die_once():
        monkeypatch.setattr(station, "_step", original)
        raise KeyboardInterrupt("simulated fatal error in the loop")
    monkeypatch.setattr(station, "_step", die_once)
    qtbot.waitUntil(lambda: station.loop_restarts == 1, timeout=10000)
    qtbot.waitUntil(lambda: "control loop died" in win.record_panel.notice.text(), timeout=5000)
    still_ticking(qtbot, win)


def test_a_device_action_takes_the_keys_path(window, qtbot):
    """What a headset button or glove gesture will call: Station.request_action, from any thread."""
    win = window
    connect_in_panel(qtbot, win, "synthetic")
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    inputs = win.flow.inputs
    threading.Thread(target=win.station.request_action, args=("record",)).start()
    qtbot.waitUntil(lambda: win.station.snapshot().recording, timeout=10000)
    assert win.flow.inputs == inputs + 1
