"""Open the operator window on the current display, optionally pick a task, wait, and save a
screenshot of the whole screen: ``python -m ui.screenshot --out window.png [--task ID]``.

Run under Xvfb (``xvfb-run -a python -m ui.screenshot ...``) to check the real windowed app, as
the tests and the docs' screenshot do."""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from PyQt6.QtCore import QSettings
from PyQt6.QtWidgets import QApplication

from ui.main_window import MainWindow


def _pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.01)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--task")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--store", default=None)
    args = ap.parse_args(argv)
    app = QApplication(sys.argv[:1])
    work = Path(tempfile.mkdtemp())
    window = MainWindow(args.store or work / "store", settings=QSettings(str(work / "ui.ini"),
                        QSettings.Format.IniFormat), confirm=False)
    window.show()
    if args.task:
        window.task_panel.picker.select(args.task)
    _pump(app, args.seconds)
    ok = app.primaryScreen().grabWindow(0).save(args.out)
    window.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
