"""The UI thread's longest stall from a task switch to the first latch, in the real window
(offscreen Qt, all views rendering): select a task, connect the synthetic operator, record at
once (while the views set up their renderers for the new model), and time the gaps between 10 ms
timer ticks until two subtasks have latched. Prints JSON.

Compare two trees side by side (the machine is noisy; alternate runs)::

    for i in 1 2 3; do for tree in /tmp/old /work/main; do
      (cd $tree && PYTHONPATH=$tree .venv/bin/python bench/ui_stall_task_switch.py); done; done
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("MUJOCO_GL", "egl")

TICK_MS = 10            # the stall detector's timer period


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="put_peach_in_fruit_bowl")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    from PyQt6.QtCore import QSettings, QTimer
    from PyQt6.QtTest import QTest
    from PyQt6.QtWidgets import QApplication

    from ui.main_window import MainWindow
    app = QApplication(sys.argv[:1])
    work = Path(tempfile.mkdtemp())
    win = MainWindow(work / "store", settings=QSettings(str(work / "ui.ini"), QSettings.Format.IniFormat),
                     operator="bench", confirm=False)
    win.show()

    def wait_until(predicate) -> None:
        end = time.monotonic() + args.timeout
        while not predicate():
            QTest.qWait(20)
            if time.monotonic() > end:
                raise SystemExit("timed out")

    win.task_panel.picker.select(args.task)
    wait_until(lambda: win.station.snapshot().task_id == args.task)
    win.connect_device("synthetic", {})
    wait_until(lambda: win.station.snapshot().connected)
    win.flow.trigger("record")
    wait_until(lambda: win.station.snapshot().recording)
    gaps: list[float] = []
    last = [time.monotonic()]

    def tick() -> None:
        now = time.monotonic()
        gaps.append(now - last[0])
        last[0] = now
    timer = QTimer(win)
    timer.timeout.connect(tick)
    timer.start(TICK_MS)
    wait_until(lambda: len(win.task_panel.checklist.latched_names()) >= 2)
    timer.stop()
    win.close()
    app.processEvents()
    ms = sorted(g * 1e3 for g in gaps)
    print(json.dumps({"task": args.task, "ui_stall_ms_max": round(ms[-1], 1),
                      "ui_stall_ms_p99": round(ms[int(0.99 * (len(ms) - 1))], 1), "samples": len(ms),
                      "load_average_1min": os.getloadavg()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
