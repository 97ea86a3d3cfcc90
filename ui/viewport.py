"""Live 3-D view: MuJoCo renders offscreen on a worker thread; the widget only paints images.

Mouse: left-drag orbits, right- or middle-drag pans, the wheel zooms, double-click re-centres.
"""
from __future__ import annotations

import copy
import threading
import time

import mujoco
import numpy as np
from PyQt6.QtCore import QPointF, Qt, QThread, QTimer, pyqtSignal
from PyQt6.QtGui import QImage, QPainter
from PyQt6.QtWidgets import QWidget

from ui.overlay import paint_overlay

MAX_RENDER_WIDTH = 720          # software GL: cap the pixels (a 960-px frame cost ~0.17 s of CPU), scale up for display
IDLE_S = 0.25                   # a still picture is re-rendered this often
# Setting up a GL context holds the GIL (the UI thread's too) for as long as it takes, and the
# model's defaults are made for offline renders: a 4096-px shadow map cost ~130 ms per context,
# an offscreen buffer larger than the view and 4x multisampling ~50 ms more per frame.
VIEW_SHADOW_SIZE = 2048         # shadow map side: context set-up 130 -> ~20 ms, shadows still crisp at 720 px
VIEW_MSAA_SAMPLES = 0           # software GL: 4x MSAA doubled the frame cost (88 -> 38 ms at 720 px)
VIEW_MIN_GEOMS = 1000           # scene capacity: the default 10 000 cost ~20 ms to allocate
STOP_WAIT_MS = 10_000          # a frame takes well under a second even on a loaded machine
_PARKED: list = []              # workers that did not stop in time: kept, so Qt never destroys a running thread
_GL_SETUP = threading.Lock()    # one view sets up (or tears down) a context at a time: their GIL holds never add up


class OrbitCamera:
    """Free camera parameters (azimuth/elevation in degrees, distance in metres, look-at point)."""

    def __init__(self, lookat=(0.45, 0.0, 0.95), distance=2.0, azimuth=155.0, elevation=-24.0):
        self.home = (tuple(lookat), distance, azimuth, elevation)
        self.lookat, self.distance, self.azimuth, self.elevation = np.array(lookat, float), distance, azimuth, elevation

    def reset(self) -> None:
        lookat, self.distance, self.azimuth, self.elevation = self.home
        self.lookat = np.array(lookat, float)

    def orbit(self, dx: float, dy: float) -> None:
        self.azimuth -= 0.3 * dx
        self.elevation = float(np.clip(self.elevation - 0.3 * dy, -89.0, 89.0))

    def pan(self, dx: float, dy: float) -> None:
        az = np.deg2rad(self.azimuth)
        right = np.array([np.sin(az), -np.cos(az), 0.0])
        scale = 0.0015 * self.distance
        self.lookat += scale * (-dx * right + dy * np.array([0.0, 0.0, 1.0]))

    def zoom(self, steps: float) -> None:
        self.distance = float(np.clip(self.distance * 0.9 ** steps, 0.2, 6.0))

    def to_mjv(self, cam: mujoco.MjvCamera) -> None:
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = self.lookat
        cam.distance, cam.azimuth, cam.elevation = self.distance, self.azimuth, self.elevation


class RenderWorker(QThread):
    """Owns the GL context; renders the newest request, dropping any it could not keep up with."""

    frame_ready = pyqtSignal(QImage)

    def __init__(self, model: mujoco.MjModel, parent=None):
        super().__init__(parent)
        self.model = model
        self._cond = threading.Condition()
        self._request = None
        self._next_model: mujoco.MjModel | None = None
        self._running = True
        self.frames = 0

    def set_model(self, model: mujoco.MjModel) -> None:
        """Render ``model`` from the next request on (swapped in this thread: never blocks the UI)."""
        with self._cond:
            self._next_model = model
            self._request = None

    def request(self, qpos: np.ndarray, camera, size: tuple[int, int]) -> None:
        with self._cond:
            self._request = (qpos, camera, size)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._running = False
            self._cond.notify()
        if not self.wait(STOP_WAIT_MS):
            self.setParent(None)           # the view may go; this thread object must not
            _PARKED.append(self)

    def run(self) -> None:
        data = mujoco.MjData(self.model)
        view_model = copy.copy(self.model)
        renderer, cam = None, mujoco.MjvCamera()
        while True:
            with self._cond:
                while self._running and self._request is None:
                    self._cond.wait()
                if not self._running:
                    break
                qpos, camera, (w, h) = self._request
                self._request = None
                model, self._next_model = self._next_model, None
            if model is not None:
                self.model, data, view_model = model, mujoco.MjData(model), copy.copy(model)
                _close(renderer)
                renderer = None
            if len(qpos) != self.model.nq:      # a request for the previous model, mid-switch
                continue
            if renderer is None or (renderer.width, renderer.height) != (w, h):
                _close(renderer)
                renderer = _view_renderer(view_model, w, h)
            view_model.geom_rgba[:] = self.model.geom_rgba     # scene events recolour the live model
            data.qpos[:] = qpos
            mujoco.mj_forward(view_model, data)
            if isinstance(camera, str):
                renderer.update_scene(data, camera=camera)
            else:
                camera.to_mjv(cam)
                renderer.update_scene(data, camera=cam)
            pixels = np.ascontiguousarray(renderer.render())
            image = QImage(pixels.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
            self.frames += 1
            self.frame_ready.emit(image)
        _close(renderer)


def _view_renderer(view_model: mujoco.MjModel, width: int, height: int) -> mujoco.Renderer:
    """A renderer for the window's own copy of the model: an offscreen buffer of exactly the
    view's size, and the cheaper quality settings above (the task's model is never touched)."""
    quality, offscreen = view_model.vis.quality, view_model.vis.global_
    quality.shadowsize = min(quality.shadowsize, VIEW_SHADOW_SIZE)
    quality.offsamples = VIEW_MSAA_SAMPLES
    offscreen.offwidth, offscreen.offheight = width, height
    with _GL_SETUP:
        return mujoco.Renderer(view_model, height, width, max_geom=max(VIEW_MIN_GEOMS, 4 * view_model.ngeom))


def _close(renderer: mujoco.Renderer | None) -> None:
    if renderer is not None:
        with _GL_SETUP:
            renderer.close()


class Viewport(QWidget):
    """Shows the scene from the orbit camera (or a named model camera) at up to ``fps``."""

    def __init__(self, model: mujoco.MjModel, snapshot_fn, fps: float = 20.0, parent=None,
                 camera: str | None = None, max_width: int = MAX_RENDER_WIDTH):
        super().__init__(parent)
        self.setMinimumSize(320, 240)
        self.orbit = OrbitCamera()
        self.fixed_camera = camera
        self._snapshot_fn = snapshot_fn
        self._max_width = max_width
        self._image: QImage | None = None
        self.overlay = None
        self._last = None                  # (qpos, view) of the last request
        self._last_mouse: QPointF | None = None
        self.worker = self._start_worker(model)
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._request_frame)
        self._timer.start(int(1000 / fps))

    def _start_worker(self, model) -> RenderWorker:
        # Owned by the view (Qt deletes it with the view, on the UI thread), never by Python's
        # garbage collector, which may run on any thread and must not destroy a QObject there.
        worker = RenderWorker(model, parent=self)
        worker.frame_ready.connect(self._on_frame)
        worker.start()
        return worker

    def set_source(self, model: mujoco.MjModel, snapshot_fn) -> None:
        """Show another model (a new task, or a take under review) from another snapshot source.
        The render thread swaps the model itself: switching never waits for a frame to finish."""
        self._snapshot_fn = snapshot_fn
        self._last = None
        self.worker.set_model(model)

    def set_overlay(self, overlay) -> None:
        """The mode banner drawn over the view (``ui.overlay.Overlay``; None: none)."""
        if overlay != self.overlay:
            self.overlay = overlay
            self.update()

    def render_size(self) -> tuple[int, int]:
        w, h = max(self.width(), 64), max(self.height(), 48)
        scale = min(1.0, self._max_width / w)
        return max(64, int(w * scale)), max(48, int(h * scale))

    def shutdown(self) -> None:
        self._timer.stop()
        self.worker.stop()

    def _request_frame(self) -> None:
        if not self.isVisible():
            return
        qpos = self._snapshot_fn()
        if qpos is None:
            return
        camera = self.fixed_camera or self.orbit
        view = (self.fixed_camera or (tuple(self.orbit.lookat), self.orbit.distance, self.orbit.azimuth,
                                      self.orbit.elevation), self.render_size())
        # Software GL costs a core at 30 fps: render when the picture would change, and otherwise
        # only every IDLE_S (so a frame lost to a model switch never sticks).
        now = time.monotonic()
        if self._last is not None and self._last[1] == view and np.array_equal(self._last[0], qpos) \
                and now - self._last[2] < IDLE_S:
            return
        self._last = (np.array(qpos, copy=True), view, now)
        self.worker.request(qpos, camera, view[1])

    def _on_frame(self, image: QImage) -> None:
        self._image = image
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        painter = QPainter(self)
        painter.fillRect(self.rect(), Qt.GlobalColor.black)
        if self._image is not None:
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(self.rect(), self._image)
        if self.overlay is not None:
            paint_overlay(painter, self.rect(), self.overlay)
        painter.end()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self._last_mouse = event.position()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        self._last_mouse = None

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        self.orbit.reset()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._last_mouse is None or self.fixed_camera:
            return
        delta = event.position() - self._last_mouse
        self._last_mouse = event.position()
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.orbit.orbit(delta.x(), delta.y())
        elif event.buttons() & (Qt.MouseButton.RightButton | Qt.MouseButton.MiddleButton):
            self.orbit.pan(delta.x(), delta.y())

    def wheelEvent(self, event) -> None:  # noqa: N802
        if not self.fixed_camera:
            self.orbit.zoom(event.angleDelta().y() / 120.0)
