"""The window around the flow: the session comes back on start (task, device, review speed);
closing while recording asks first; recovered takes are listed without a modal box; the window
asks for no more than a 1080-px screen gives; the export runs at a lower priority and shows its
own failure's reason, never a previous run's summary."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from PyQt6.QtWidgets import QMessageBox

from recordings.store import TakeStore
from takes_util import record_take
from teleop.sim import Sim
from ui.export_dialog import NICE, ExportDialog
from ui.window_layout import FIT_SIZE
import ui_windows

make_window = ui_windows.make_window      # the fixture, shared with the other window tests

TASK = "pick_up_peach"


def test_the_session_is_restored_on_start(make_window, qtbot):
    win = make_window()
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=30000)
    win.device_panel.select("synthetic", {"dropout_per_s": 0.25})
    win.connect_device("synthetic", win.device_panel.options())
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    win.flow.trigger("speed", 4.0)
    win.close()
    again = make_window()
    qtbot.waitUntil(lambda: again.station.snapshot().task_id == TASK, timeout=30000)
    qtbot.waitUntil(lambda: again.station.snapshot().connected, timeout=10000)    # reconnected
    assert again.station.snapshot().device == "synthetic"
    assert again.device_panel.options()["dropout_per_s"] == pytest.approx(0.25)
    assert again.flow.speed == 4.0 and again.record_panel.speed.currentData() == 4.0


def test_closing_while_recording_asks_first(make_window, qtbot, monkeypatch):
    win = make_window(confirm=True)
    win.task_panel.picker.select(TASK)
    qtbot.waitUntil(lambda: win.station.snapshot().task_id == TASK, timeout=30000)
    win.connect_device("synthetic", {})
    qtbot.waitUntil(lambda: win.station.snapshot().connected, timeout=10000)
    win.flow.trigger("record")
    qtbot.waitUntil(lambda: win.station.snapshot().recording, timeout=10000)
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Cancel)
    win.close()
    assert asked and win.isVisible() and win.station.snapshot().recording      # nothing was lost
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Save)
    takes = win.store.takes_dir
    win.close()
    assert not win.isVisible()
    assert len(list(Path(takes).glob("*.h5"))) == 1                             # kept
    # Closed means closed: the window's threads end with it (nothing left ticking or waiting).
    assert not win.station.loop.running and not win.writer._thread.is_alive()
    assert not any(view.worker.isRunning() for view in (win.viewport, *win.camera_views))


def test_recovered_takes_are_listed_without_a_modal(make_window, tmp_path, scene, monkeypatch):
    root = tmp_path / "crashed"
    store = TakeStore(root)
    store.open()
    writer, _ = record_take(store, Sim(scene), ticks=12, finish=False)
    writer.journal.sync()                 # the process "dies" here: a journal, no final file
    writer.journal.release()              # ... and the kernel drops its owner lock, as it would
    store.close()
    monkeypatch.setattr(QMessageBox, "information", lambda *a, **k: pytest.fail("a modal box was shown"))
    win = make_window(root, confirm=True)
    assert win.recovered_banner.isVisible() and "Recovered 1 interrupted take" in win.recovered_banner.text()


def test_the_window_asks_for_no_more_than_a_1080_px_screen(make_window):
    win = make_window()
    hint = win.minimumSizeHint()
    assert hint.width() <= FIT_SIZE[0] and hint.height() <= FIT_SIZE[1], hint
    assert win.task_panel.picker.minimumHeight() >= 150        # the task list keeps ~6 rows


def _nice_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
    except (OSError, IndexError, ValueError):
        return None


def test_export_runs_at_low_priority_and_shows_its_own_error(qtbot, tmp_path):
    store = TakeStore(tmp_path / "store")
    store.open()
    store.close()
    out = tmp_path / "dataset"
    out.mkdir()
    dialog = ExportDialog(str(tmp_path / "store"), {TASK: 1}, str(out))
    qtbot.addWidget(dialog)
    dialog.start()                                             # the folder exists: said inline, not started
    assert dialog._process is None and "already exists" in dialog.log.toPlainText()
    dialog.replace.setChecked(True)
    dialog.summary = {"episodes": 3, "out": "old"}             # a previous run's summary
    dialog.start()
    assert "--overwrite" in dialog.command([TASK])
    pid, seen = dialog._process.processId(), None
    deadline = time.monotonic() + 20
    while seen != NICE and dialog._process.state() != dialog._process.ProcessState.NotRunning \
            and time.monotonic() < deadline:
        seen = _nice_of(pid)
        qtbot.wait(20)
    qtbot.waitUntil(lambda: dialog.run_button.isEnabled(), timeout=120000)
    assert seen == NICE, f"the export child ran at niceness {seen}"
    assert dialog.summary is None                              # the old summary is never shown as this run's
    assert "no validated-pass takes" in dialog.failed_reason, dialog.failed_reason
    assert "export failed: " in dialog.log.toPlainText() and "FAILED" not in dialog.log.toPlainText()
