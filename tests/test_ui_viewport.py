"""The views' renderers: the window's own copy of the model with cheap GL settings (a context's
set-up holds the GIL, the UI thread's too), the task's model untouched, scene-event colours
carried over, and a worker that renders the newest request."""
import copy

import mujoco
import numpy as np
import pytest

from teleop.tasks import TaskRuntime
from ui.viewport import VIEW_MSAA_SAMPLES, VIEW_SHADOW_SIZE, RenderWorker, _close, _view_renderer


@pytest.fixture(scope="module")
def model():
    return TaskRuntime("put_peach_in_fruit_bowl").sim.model


def test_the_view_renderer_is_cheap_and_leaves_the_task_model_alone(model):
    before = (model.vis.quality.shadowsize, model.vis.quality.offsamples, model.vis.global_.offwidth)
    view_model = copy.copy(model)
    renderer = _view_renderer(view_model, 320, 200)
    try:
        assert (renderer.width, renderer.height) == (320, 200)
        assert view_model.vis.quality.shadowsize <= VIEW_SHADOW_SIZE
        assert view_model.vis.quality.offsamples == VIEW_MSAA_SAMPLES
        assert (view_model.vis.global_.offwidth, view_model.vis.global_.offheight) == (320, 200)
        data = mujoco.MjData(view_model)
        mujoco.mj_forward(view_model, data)
        renderer.update_scene(data)
        assert renderer.render().std() > 5                      # a picture, not a blank buffer
    finally:
        _close(renderer)
    assert (model.vis.quality.shadowsize, model.vis.quality.offsamples, model.vis.global_.offwidth) == before


def test_the_worker_shows_the_live_models_colours(qtbot, model):
    live = copy.copy(model)
    worker = RenderWorker(live)
    frames = []
    worker.frame_ready.connect(frames.append)
    worker.start()
    try:
        qpos = mujoco.MjData(live).qpos.copy()
        worker.request(qpos, "head", (160, 120))
        qtbot.waitUntil(lambda: len(frames) >= 1, timeout=30000)
        live.geom_rgba[:, :3] = [1.0, 0.0, 1.0]                  # a scene event recolours everything magenta
        worker.request(qpos, "head", (160, 120))
        qtbot.waitUntil(lambda: len(frames) >= 2, timeout=30000)
    finally:
        worker.stop()
    before, after = (_magenta_share(image) for image in frames[:2])
    assert before < 0.05 < 0.3 < after, (before, after)


def _magenta_share(image) -> float:
    ptr = image.constBits()
    ptr.setsize(image.sizeInBytes())
    rgb = np.frombuffer(ptr, np.uint8).reshape(image.height(), image.bytesPerLine())[:, :3 * image.width()]
    rgb = rgb.reshape(image.height(), image.width(), 3).astype(int)
    return float(np.mean((rgb[..., 0] > 2 * rgb[..., 1] + 20) & (rgb[..., 2] > 2 * rgb[..., 1] + 20)))
