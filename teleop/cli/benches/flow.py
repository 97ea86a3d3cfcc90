"""The operator flow end to end: the real window (offscreen) driven through N takes of a short task
with the synthetic operator, by key presses — the keys' own path (shortcut -> flow -> station).

The "operator" presses Space as soon as the window is LIVE and A as soon as the review is up
(zero reaction time), so the figures are what the tool itself costs per take:

- ``overhead_s_per_take_p50``: wall time per accepted take (Space pressed -> the next take can
  be recorded) minus the take's own duration;
- ``inputs_per_take``: operator inputs per accepted take;
- ``ui_stall_ms_max``: the longest gap between 10 ms timer ticks on the UI thread during the run;
- ``accepted_per_hour``: accepted takes per hour of the run's wall time.

Accepted takes are validated in the background as in real use (``validated_pass`` at the end).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

NAME = "flow"


def add_arguments(parser) -> None:
    parser.add_argument("--task", default="pick_up_peach", help="a short scripted task (default pick_up_peach)")
    parser.add_argument("--takes", type=int, default=20, help="accepted takes to collect (default 20)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one take may take at most")


class _Stalls:
    """Longest gap between 10 ms timer ticks on the UI thread."""

    def __init__(self, QTimer, parent):
        self.gaps: list[float] = []
        self.last = None
        self.timer = QTimer(parent)      # Qt-owned: never destroyed by a GC on another thread
        self.timer.timeout.connect(self._tick)
        self.timer.start(10)

    def _tick(self) -> None:
        now = time.monotonic()
        if self.last is not None:
            self.gaps.append(now - self.last)
        self.last = now


def run(args) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PyQt6.QtCore import QEvent, QSettings, Qt, QTimer
    from PyQt6.QtTest import QTest
    from PyQt6.QtWidgets import QApplication

    from ui.main_window import MainWindow   # lazily: the CLI loads Qt only for the benches that need it

    app = QApplication.instance() or QApplication(sys.argv[:1])
    work = Path(tempfile.mkdtemp(prefix="bench-flow-"))
    settings = QSettings(str(work / "ui.ini"), QSettings.Format.IniFormat)
    win = MainWindow(work / "store", settings=settings, operator="bench", confirm=False)
    win.show()

    def until(cond, limit: float) -> None:
        end = time.monotonic() + limit
        while not cond():
            if time.monotonic() > end:
                why = win.flow.status or win.station.snapshot().message
                raise RuntimeError(f"bench flow: stuck in {win.flow.mode} ({why})")
            app.processEvents()
            time.sleep(0.002)

    try:
        win.task_panel.picker.select(args.task)
        until(lambda: win.station.snapshot().task_id == args.task, 60)
        win.connect_device("synthetic", {})
        until(lambda: win.station.snapshot().connected, 30)
        until(lambda: win.flow.mode == "LIVE" and win.station.snapshot().armed, 30)
        stalls, inputs0, ticks0 = _Stalls(QTimer, win), win.flow.inputs, win.station.ticks
        per_take, durations, phases, start = [], [], [], time.monotonic()
        for _ in range(args.takes):
            t0 = time.monotonic()
            QTest.keyClick(win, Qt.Key.Key_Space)
            until(lambda: win.station.snapshot().recording, 30)
            t1 = time.monotonic()
            until(lambda: not win.station.snapshot().recording, args.timeout)
            t2 = time.monotonic()
            until(lambda: win.flow.mode == "REVIEW", 30)
            t3 = time.monotonic()
            take = win.review.take
            durations.append(take.length / take.meta.control_hz)
            QTest.keyClick(win, Qt.Key.Key_A)
            until(lambda: win.flow.mode == "LIVE" and win.station.snapshot().armed, 30)
            per_take.append(time.monotonic() - t0)
            phases.append((t1 - t0, t2 - t1 - durations[-1], t3 - t2, time.monotonic() - t3))
        wall = time.monotonic() - start
        loop_hz = (win.station.ticks - ticks0) / wall
        inputs = win.flow.inputs - inputs0
        stalls.timer.stop()
        end = time.monotonic() + 180                   # let the background validations finish
        while win.validation.busy and time.monotonic() < end:
            app.processEvents()
            time.sleep(0.05)
        app.processEvents()
        win._refresh()
        passed = len(win.store.rows(status="validated_pass"))
        failed = len(win.store.rows(status="validated_fail"))
    finally:
        win.close()
        win.deleteLater()                 # deleted here, on the GUI thread, not by a GC on another one
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete.value)
        app.processEvents()
    overhead = np.array(per_take) - np.array(durations)
    gaps_ms = np.array(stalls.gaps) * 1e3
    return {"task": args.task, "takes": args.takes, "accepted": args.takes, "validated_pass": passed,
            "validated_fail": failed,
            "overhead_s_per_take_p50": round(float(np.median(overhead)), 3),
            "overhead_s_per_take_p90": round(float(np.percentile(overhead, 90)), 3),
            "inputs_per_take": round(inputs / args.takes, 2),
            "ui_stall_ms_max": round(float(gaps_ms.max()), 1),
            "ui_stall_ms_p99": round(float(np.percentile(gaps_ms, 99)), 1),
            "accepted_per_hour": round(3600.0 * args.takes / wall, 1),
            "take_s_p50": round(float(np.median(durations)), 2), "wall_s": round(wall, 1),
            "loop_hz": round(loop_hz, 1), "load_average_1min": round(os.getloadavg()[0], 2),
            # where the overhead goes (p50, s): Space -> recording, recording wall time beyond the
            # take's duration (a loop slower than 25 Hz), stop -> review shown, A -> next episode armed
            "phases_s_p50": dict(zip(("start", "loop_lag", "finish_to_review", "accept_to_armed"),
                                     (round(float(v), 3) for v in np.median(np.array(phases), axis=0))))}
