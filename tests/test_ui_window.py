"""The first window, driven offscreen: live view renders, orbit/zoom work, sliders move joints."""
from pathlib import Path

import numpy as np
import pytest
from PyQt6.QtCore import QPoint, QPointF, QSettings, Qt
from PyQt6.QtCore import QEvent
from PyQt6.QtGui import QMouseEvent, QWheelEvent
from PyQt6.QtWidgets import QApplication

from ui.main_window import MainWindow

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()


def _frame_pixels(win) -> np.ndarray:
    image = win.viewport._image
    ptr = image.constBits()
    ptr.setsize(image.sizeInBytes())
    return np.frombuffer(ptr, np.uint8).reshape(image.height(), image.bytesPerLine())[:, :3 * image.width()]


def test_window_renders_and_screenshot(window, qtbot):
    qtbot.waitUntil(lambda: window.viewport.worker.frames >= 2, timeout=20000)
    pixels = _frame_pixels(window)
    assert pixels.std() > 10, "the 3-D view is blank"
    ARTIFACTS.mkdir(exist_ok=True)
    assert window.grab().save(str(ARTIFACTS / "window_first.png"))


def _drag(widget, button, start, end):
    """A real press / move-with-button-held / release sequence (QTest's mouseMove holds no button)."""
    def send(kind, pos, held):
        event = QMouseEvent(kind, QPointF(pos), QPointF(widget.mapToGlobal(pos)), button, held,
                            Qt.KeyboardModifier.NoModifier)
        QApplication.sendEvent(widget, event)
    send(QEvent.Type.MouseButtonPress, start, button)
    send(QEvent.Type.MouseMove, end, button)
    send(QEvent.Type.MouseButtonRelease, end, Qt.MouseButton.NoButton)


def test_orbit_pan_and_zoom_follow_the_mouse(window):
    vp = window.viewport
    az, el, lookat, dist = vp.orbit.azimuth, vp.orbit.elevation, vp.orbit.lookat.copy(), vp.orbit.distance
    _drag(vp, Qt.MouseButton.LeftButton, QPoint(100, 100), QPoint(160, 120))
    assert vp.orbit.azimuth == pytest.approx(az - 18) and vp.orbit.elevation == pytest.approx(el - 6)
    _drag(vp, Qt.MouseButton.RightButton, QPoint(100, 100), QPoint(100, 150))
    assert vp.orbit.lookat[2] > lookat[2]
    wheel = QWheelEvent(QPointF(50, 50), QPointF(50, 50), QPoint(0, 0), QPoint(0, 240),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(vp, wheel)
    assert vp.orbit.distance == pytest.approx(dist * 0.81)


def test_slider_moves_the_simulated_joint(window, qtbot):
    slider = next(s for s in window.joint_panel.sliders if s.slider.objectName() == "right_index_pip")
    sim = window.service.sim
    slider.slider.setValue(0)                     # fully flexed: the range's lower end
    target = slider.low
    qpos_index = sim.qpos_idx[slider.index]
    qtbot.waitUntil(lambda: abs(window.service.snapshot().qpos[qpos_index] - target) < 0.05, timeout=10000)
    assert window.service.loop.error is None
