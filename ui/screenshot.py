"""Open the operator window on the current display, optionally pick a task, connect the synthetic
operator and record or review a take, wait, and save a screenshot of the whole screen:
``python -m ui.screenshot --out window.png [--task ID] [--state live|recording|review] [--fit]
[--report fit.json]``.

Run under Xvfb (``xvfb-run -a -s "-screen 0 1920x1080x24" python -m ui.screenshot ...``) to check
the real windowed app, as the tests and the docs' screenshots do. ``--fit`` sizes the window to
the screen less a title bar and taskbar (what a maximised window gets on a 1080-px screen);
``--report`` writes where the key widgets ended up, to check that they are all on screen.
``--device webxr --headset-shot hud.png`` also opens the headset page in headless Chromium with
the iwer emulator (its hands drive the take) and saves what the operator sees in the headset."""
from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from pathlib import Path

from PyQt6.QtCore import QPoint, QRect, QSettings
from PyQt6.QtWidgets import QApplication

from ui.main_window import MainWindow

TITLE_AND_TASKBAR = 72          # px a desktop takes from a 1080-px screen's height


def _pump(app: QApplication, seconds: float, until=None) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (until is not None and until()):
        app.processEvents()
        time.sleep(0.01)


def _rect(widget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def fit_report(window, screen: QRect) -> dict:
    """Each key widget's global rectangle, and whether it is visible and entirely on screen."""
    rp, picker = window.record_panel, window.task_panel.picker
    widgets = {"status bar": window.statusBar(), "record button": rp.record_button,
               "accept button": rp.buttons["accept"], "timeline": rp.timeline, "viewport": window.viewport,
               "task list": picker, "device connect": window.device_panel.connect_button,
               "episode table": window.browser.table}
    out = {}
    for name, w in widgets.items():
        r = _rect(w)
        out[name] = {"rect": [r.x(), r.y(), r.width(), r.height()], "visible": w.isVisible(),
                     "on_screen": screen.contains(r)}
    row = picker.sizeHintForRow(0) or 20
    return {"screen": [screen.width(), screen.height()], "window": [window.width(), window.height()],
            "minimum": [window.minimumSizeHint().width(), window.minimumSizeHint().height()],
            "task_rows_visible": round(picker.viewport().height() / row, 1), "widgets": out}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--task")
    ap.add_argument("--state", choices=("live", "recording", "review"), default="live")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--store", default=None)
    ap.add_argument("--device", help="connect this device (recording / review use the synthetic operator)")
    ap.add_argument("--fit", action="store_true", help="size the window to the screen less a desktop's bars")
    ap.add_argument("--report", help="write the key widgets' placement as JSON here")
    ap.add_argument("--headset-shot", help="with --device webxr: save the headset page's view (HUD included) here")
    args = ap.parse_args(argv)
    app = QApplication(sys.argv[:1])
    work = Path(tempfile.mkdtemp())
    window = MainWindow(args.store or work / "store", settings=QSettings(str(work / "ui.ini"),
                        QSettings.Format.IniFormat), confirm=False)
    screen = app.primaryScreen().geometry()
    if args.fit:
        window.setGeometry(0, 0, screen.width(), screen.height() - TITLE_AND_TASKBAR)
    window.show()
    if args.task:
        window.task_panel.picker.select(args.task)
        _pump(app, 60, lambda: window.station.snapshot().task_id == args.task)
    device = args.device or ("synthetic" if args.state != "live" else None)
    headset = None
    if device and args.task:
        options = {"host": "127.0.0.1", "port": 0, "config_dir": str(work / "certs")} if args.headset_shot else {}
        window.connect_device(device, options)
        if args.headset_shot:
            headset = _open_headset_page(app, window)
        _pump(app, 20, lambda: window.station.snapshot().connected)
    if args.state != "live" and args.task:
        window.flow.trigger("record")
        _pump(app, 20, lambda: window.station.snapshot().recorded_ticks > 60)
        if args.state == "review":
            if headset is not None:
                window.flow.trigger("end_early")        # the emulated hands never finish the task
            _pump(app, 120, lambda: window.flow.mode == "REVIEW")
    _pump(app, args.seconds)
    ok = app.primaryScreen().grabWindow(0).save(args.out)
    if headset is not None:
        shot = headset.call("Page.captureScreenshot", format="png")
        Path(args.headset_shot).write_bytes(base64.b64decode(shot["data"]))
        headset.close()
    if args.report:
        Path(args.report).write_text(json.dumps(fit_report(window, screen), indent=1))
    window.close()
    return 0 if ok else 1


def _open_headset_page(app: QApplication, window):
    """Headless Chromium + iwer on the connected headset server's page (its hands wave and pinch)."""
    from devices.webxr.browser import HeadlessChromium
    _pump(app, 30, lambda: window.station.device is not None and hasattr(window.station.device, "page_url"))
    browser = HeadlessChromium()
    browser.start(window.station.device.page_url("127.0.0.1", emulate=True))
    _pump(app, 30, lambda: browser.evaluate("window.__teleop && __teleop.xr === 'running'"))
    return browser


if __name__ == "__main__":
    sys.exit(main())
