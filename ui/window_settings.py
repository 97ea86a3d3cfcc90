"""The operator's session, kept across restarts in ``QSettings``: the last task, the device and
its options (reconnected if it was connected), the review speed, and the window's layout —
restored onto the screen the window opens on, so a layout saved on a bigger screen still fits."""
from __future__ import annotations

import json

from PyQt6.QtGui import QGuiApplication


def _bool(value) -> bool:
    return value in (True, "true", "True", "1", 1)


def restore_layout(window) -> None:
    s = window.settings
    geometry, state = s.value("geometry"), s.value("state")
    if geometry is not None:
        window.restoreGeometry(geometry)
    if state is not None:
        window.restoreState(state)
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    area = screen.availableGeometry()
    frame = window.frameGeometry()
    if frame.width() > area.width() or frame.height() > area.height() or not area.intersects(frame):
        window.resize(min(window.width(), area.width() - 16), min(window.height(), area.height() - 48))
        window.move(area.topLeft())


def restore_session(window) -> None:
    """Select the last task and device; returns nothing — a device that was connected is
    reconnected by the window once its task is loaded (``window.reconnect_pending``)."""
    s = window.settings
    speed = s.value("review/speed")
    if speed is not None:
        window.record_panel.set_speed(float(speed))
    device = s.value("session/device")
    if device:
        try:
            options = json.loads(s.value("session/device_options") or "{}")
        except (TypeError, ValueError):
            options = {}
        window.device_panel.select(str(device), options)
        window.reconnect_pending = _bool(s.value("session/connected"))
    task = s.value("session/task")
    if task and task in window.specs:
        window.task_panel.picker.select(str(task))


def save_session(window) -> None:
    s = window.settings
    snap = window.station.snapshot()
    s.setValue("geometry", window.saveGeometry())
    s.setValue("state", window.saveState())
    if snap.task_id:
        s.setValue("session/task", snap.task_id)
    s.setValue("session/device", window.device_panel.device_name())
    s.setValue("session/device_options", json.dumps(window.device_panel.options(), default=str))
    s.setValue("session/connected", snap.link not in ("none", "connecting"))
    s.setValue("review/speed", window.flow.speed)
    s.sync()
