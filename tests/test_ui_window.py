"""The operator window, driven offscreen through its real widgets: collect with the synthetic
operator, watch the checklist latch, replay, accept, see validation pass, export; reject with a
reason; recover an interrupted take on start. Screenshots of each state go to artifacts/."""
import time
from pathlib import Path

import numpy as np
import pytest
from PyQt6.QtCore import QEvent, QPoint, QPointF, Qt, QTimer
from PyQt6.QtGui import QMouseEvent, QWheelEvent
from PyQt6.QtWidgets import QApplication

from recordings.store import TakeStore
from takes_util import record_take
from teleop.sim import Sim
from ui.record_panel import RejectDialog
import ui_windows

make_window = ui_windows.make_window      # the fixture, shared with the other window tests

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
TASK = "put_peach_in_fruit_bowl"
FREEZE_S = 0.5          # a gap this long on the UI thread is a freeze, whatever the machine's load
LOOP_FLOOR = 0.5        # of the nominal rate: a busy CPU costs ~10 %, a loop stuck behind the views far more


def _shot(win, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    assert win.grab().save(str(ARTIFACTS / f"window_{name}.png"))


def _drag(widget, button, start, end):
    """A real press / move-with-button-held / release (QTest's mouseMove holds no button)."""
    def send(kind, pos, held):
        QApplication.sendEvent(widget, QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button,
                                                   held, Qt.KeyboardModifier.NoModifier))
    send(QEvent.Type.MouseButtonPress, start, button)
    send(QEvent.Type.MouseMove, end, button)
    send(QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)


def _frame_std(win) -> float:
    image = win.viewport._image
    ptr = image.constBits()
    ptr.setsize(image.sizeInBytes())
    return float(np.frombuffer(ptr, np.uint8).std())


def test_view_renders_orbits_pans_zooms_and_sliders_move_joints(make_window, qtbot):
    win = make_window()
    qtbot.waitUntil(lambda: win.viewport.worker.frames >= 2, timeout=20000)
    assert _frame_std(win) > 10, "the 3-D view is blank"
    vp = win.viewport
    az, el, lookat, dist = vp.orbit.azimuth, vp.orbit.elevation, vp.orbit.lookat.copy(), vp.orbit.distance
    _drag(vp, Qt.MouseButton.LeftButton, QPoint(100, 100), QPoint(160, 120))
    assert vp.orbit.azimuth == pytest.approx(az - 18) and vp.orbit.elevation == pytest.approx(el - 6)
    _drag(vp, Qt.MouseButton.RightButton, QPoint(100, 100), QPoint(100, 150))
    assert vp.orbit.lookat[2] > lookat[2]
    QApplication.sendEvent(vp, QWheelEvent(QPointF(50, 50), QPointF(50, 50), QPoint(0, 0), QPoint(0, 240),
                                           Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                           Qt.ScrollPhase.NoScrollPhase, False))
    assert vp.orbit.distance == pytest.approx(dist * 0.81)
    frames = vp.worker.frames
    win.follow_head.setChecked(True)                   # View > Follow the head camera
    assert vp.fixed_camera == "head"
    qtbot.waitUntil(lambda: vp.worker.frames > frames + 2, timeout=10000)
    _drag(vp, Qt.MouseButton.LeftButton, QPoint(100, 100), QPoint(200, 100))
    assert vp.orbit.azimuth == pytest.approx(az - 18)  # the mouse does not move a fixed camera
    win.follow_head.setChecked(False)
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=20000)
    slider = next(s for s in win.joint_panel.sliders if s.slider.objectName() == "right_index_pip")
    slider.slider.setValue(0)                     # fully flexed: the lower end of the range
    index = win.station._bundle.rt.sim.qpos_idx[slider.index]
    qtbot.waitUntil(lambda: abs(win.station.snapshot().qpos[index] - slider.low) < 0.05, timeout=10000)
    _shot(win, "first")


class Watchdog:
    """Measures the longest gap between 10 ms timer ticks on the UI thread (a stall detector)."""

    def __init__(self, parent):
        self.last, self.worst = time.monotonic(), 0.0
        self.timer = QTimer(parent)             # Qt-owned: never destroyed by a GC on another thread
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)

    def _tick(self):
        now = time.monotonic()
        self.worst = max(self.worst, now - self.last)
        self.last = now


def test_collect_review_accept_validate_export(make_window, qtbot, tmp_path):
    win = make_window()
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=20000)
    win.device_panel.choice.setCurrentIndex(win.device_panel.choice.findData("synthetic"))
    qtbot.mouseClick(win.device_panel.connect_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    qtbot.keyClick(win, Qt.Key.Key_Space)                           # record
    qtbot.waitUntil(lambda: win.station.snapshot().recording, timeout=5000)
    _shot(win, "collecting")
    watchdog = Watchdog(win)                                           # from here on, nothing may stall
    ticks0, t0 = win.station.snapshot().report.tick, time.monotonic()
    checklist = win.task_panel.checklist
    qtbot.waitUntil(lambda: len(checklist.latched_names()) == 2, timeout=60000)
    qtbot.wait(1500)
    snap = win.station.snapshot()
    rate = (snap.report.tick - ticks0) / (time.monotonic() - t0)
    # A freeze (a blocking call or a GL set-up on the UI thread) fails here; the 100 ms goal is a
    # figure of `teleop bench flow` (ui_stall_ms_max), not a timed test on a shared machine.
    assert watchdog.worst < FREEZE_S, f"the UI thread stalled {watchdog.worst * 1000:.0f} ms"
    # A loaded CI machine costs a healthy loop ~10 % (it ran at 22.4 Hz there); this check is for a
    # loop stuck behind the views, so its floor is half the nominal rate, not 90 %.
    assert rate > LOOP_FLOOR * 25, f"the control loop ran at {rate:.1f} Hz while the views rendered"
    qtbot.keyClick(win, Qt.Key.Key_Space)                           # stop: instant replay
    qtbot.waitUntil(lambda: win._reviewing, timeout=10000)
    assert len(win.record_panel.timeline.marks) == 2                # latch marks on the timeline
    assert win.review.playing                                       # review plays by itself: no click
    qtbot.waitUntil(lambda: win.review.replayer.tick > 20, timeout=10000)
    _shot(win, "reviewing")
    take_id = win.review.take.meta.take_id
    qtbot.keyClick(win, Qt.Key.Key_A)                               # accept -> background validation
    qtbot.waitUntil(lambda: win.store.index.get(take_id).status == "validated_pass", timeout=120000)
    win.browser.refresh()
    assert "validated ✓" in win.record_panel.take_status.text()
    dialog = win.export_dialog()
    out = tmp_path / "dataset"
    dialog.out.setText(str(out))
    dialog.start()
    qtbot.waitUntil(lambda: dialog.summary is not None, timeout=180000)
    _shot(dialog, "exporting")
    assert dialog.summary["episodes"] == 1 and (out / "meta" / "info.json").exists()


def test_reject_with_a_reason(make_window, qtbot):
    win = make_window()
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=20000)
    win.connect_device("synthetic", {})
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    win.toggle_recording()
    qtbot.waitUntil(lambda: win.station.snapshot().recorded_ticks > 25, timeout=10000)
    win.toggle_recording()
    qtbot.waitUntil(lambda: win._reviewing, timeout=10000)
    take_id = win.review.take.meta.take_id
    win.reject_take("dropped the object: slipped")
    row = win.store.index.get(take_id)
    assert row.status == "rejected" and row.reason == "dropped the object: slipped"
    dialog = RejectDialog()
    dialog.reasons.setCurrentRow(1)
    dialog.details.setText("grabbed the onion")
    assert dialog.reason() == "wrong object or order: grabbed the onion"


def test_interrupted_take_is_recovered_and_shown_on_start(make_window, qtbot, tmp_path, scene):
    root = tmp_path / "crashed"
    store = TakeStore(root)
    store.open()
    writer, _ = record_take(store, Sim(scene), ticks=12, finish=False)
    writer.journal.sync()                 # the process "dies" here: a journal, no final file
    writer.journal.release()              # ... and the kernel drops its owner lock, as it would
    store.close()
    win = make_window(root)
    assert len(win.open_report.recovered) == 1
    rows = win.store.rows()
    assert len(rows) == 1 and rows[0].interrupted and rows[0].ticks == 12
    model = win.browser.model
    assert any("(interrupted)" in model.item(r, 2).text() for r in range(model.rowCount()))
