"""The real windowed app on an X server (Xvfb): the window opens and renders; the screenshot is an
artifact (what `make run` shows on a machine without a display)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs Xvfb (make setup installs it)")


def test_window_under_xvfb():
    ARTIFACTS.mkdir(exist_ok=True)
    out = ARTIFACTS / "window_xvfb.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable, "-m", "ui.screenshot",
                    "--out", str(out), "--task", "pick_up_peach", "--seconds", "5"], env=env, check=True,
                   timeout=180, cwd=Path(__file__).resolve().parents[1])
    image = np.asarray(Image.open(out).convert("RGB"))
    assert image.shape == (1000, 1600, 3)
    assert image.std() > 20                                   # widgets and a rendered scene, not a blank screen


def test_window_fits_a_1080_px_screen():
    """On a 1920x1080 screen, sized as a maximised window is (less a title bar and a taskbar),
    every control the operator needs is visible and on screen, and the task list shows its rows."""
    ARTIFACTS.mkdir(exist_ok=True)
    out, report = ARTIFACTS / "window_1080.png", ARTIFACTS / "window_1080.json"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb"}
    subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", sys.executable, "-m", "ui.screenshot",
                    "--out", str(out), "--task", "pick_up_peach", "--seconds", "2", "--fit", "--report", str(report)],
                   env=env, check=True, timeout=180, cwd=Path(__file__).resolve().parents[1])
    import json

    from ui.window_layout import FIT_SIZE
    fit = json.loads(report.read_text())
    assert fit["screen"] == [1920, 1080]
    assert fit["minimum"][0] <= FIT_SIZE[0] and fit["minimum"][1] <= FIT_SIZE[1]
    hidden = {name: w for name, w in fit["widgets"].items() if not (w["visible"] and w["on_screen"])}
    assert not hidden, hidden
    assert fit["task_rows_visible"] >= 6
