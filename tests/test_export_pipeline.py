"""Export at scale: one render pass per camera, rendering pipelined with encoding in another
process through a bounded shared-memory ring, per-frame progress, the GL device choice."""
from __future__ import annotations

import json

import numpy as np
import pytest

from recordings.batch import report, run_batch
from recordings.errors import RecordingsError
from recordings.export import export_dataset
from recordings.export_progress import FrameProgress
from recordings.gl_device import EglDevice, choose_device, probe_egl_devices
from recordings.pipeline import RenderPipeline
from recordings.render import DATASET_QUALITY, RenderQuality, StateRenderer, stream_specs
from recordings.replay import scene_from_take
from recordings.store import TakeStore
from recordings.takefile import read_take
from takes_util import record_take
from teleop.sim import Sim

MESA = EglDevice(0, "EGL_MESA_device_software EGL_EXT_device_drm_render_node")
NV_NO_CUDA = EglDevice(1, "EGL_NV_device_cuda EGL_EXT_device_drm")


def nvidia(index: int, cuda: int) -> EglDevice:
    return EglDevice(index, "EGL_NV_device_cuda EGL_EXT_device_drm", cuda, f"/dev/dri/card{index}")


def test_cpu_rendering_when_no_nvidia_device():
    d = choose_device([MESA], {"MUJOCO_GL": "egl"})
    assert d.kind == "cpu" and d.env == {} and "llvmpipe" in d.description
    assert choose_device(None, {"MUJOCO_GL": "egl"}).env == {"MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}
    assert choose_device([MESA], {"MUJOCO_GL": "osmesa"}).env == {}


def test_the_nvidia_device_is_chosen_even_when_egl_lists_mesa_first():
    d = choose_device([MESA, NV_NO_CUDA], {})
    assert d.kind == "gpu" and d.env == {"MUJOCO_EGL_DEVICE_ID": "1"}        # EGL's own index, no CUDA ids


def test_several_gpus_are_shared_out_by_render_worker_under_mujocos_numbering():
    devices = [MESA, nvidia(1, 0), nvidia(2, 1)]
    assert [choose_device(devices, {}, w).env["MUJOCO_EGL_DEVICE_ID"] for w in range(3)] == ["0", "1", "0"]
    visible = {"CUDA_VISIBLE_DEVICES": "1"}                                    # only CUDA device 1, index 0
    assert choose_device([MESA, nvidia(2, 1)], visible, 0).env == {"MUJOCO_EGL_DEVICE_ID": "0"}


def test_mujoco_reads_our_device_id_as_the_chosen_device():
    """Cross-check against MuJoCo's own EGL selection (a private helper: skipped if it moved)."""
    egl = pytest.importorskip("mujoco.egl")
    select = getattr(egl, "_select_egl_device", None)
    if select is None or not hasattr(egl, "_ordered_egl_devices"):
        pytest.skip("this MuJoCo has no _select_egl_device")
    devices = [MESA, nvidia(1, 0), nvidia(2, 1)]
    cuda_map = {d.cuda_id: d for d in devices if d.cuda_id is not None}
    for env, worker in (({}, 1), ({"CUDA_VISIBLE_DEVICES": "1,0"}, 0), ({"CUDA_VISIBLE_DEVICES": "1,0"}, 1)):
        chosen = choose_device(devices, env, worker)
        visible = [int(x) for x in env["CUDA_VISIBLE_DEVICES"].split(",")] if env else None
        ordered = egl._ordered_egl_devices(devices, cuda_map, visible)
        picked = select(ordered, cuda_map, visible, int(chosen.env["MUJOCO_EGL_DEVICE_ID"]))
        assert picked is [d for d in devices if d.is_nvidia][worker % 2], (env, worker)
    ordered = egl._ordered_egl_devices([MESA, NV_NO_CUDA], None, None)
    assert select(ordered, None, None, int(choose_device([MESA, NV_NO_CUDA], {}).env["MUJOCO_EGL_DEVICE_ID"])) \
        is NV_NO_CUDA


def test_user_choices_win():
    d = choose_device([MESA, nvidia(1, 0)], {"MUJOCO_EGL_DEVICE_ID": "0"})
    assert d.env == {} and "as set" in d.description


def test_this_machine_is_probed():
    devices = probe_egl_devices()
    assert devices is None or all(isinstance(d, EglDevice) for d in devices)


@pytest.fixture(scope="module")
def take(tmp_path_factory, scene):
    root = tmp_path_factory.mktemp("pipeline") / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=9, name="pipe")
        store.set_review(store.add(path).meta.take_id, "validated_pass")
    return root, read_take(path)


def test_the_render_process_yields_every_frame_in_order_equal_to_a_render_here(take):
    _, t = take
    sim = Sim(scene_from_take(t))
    specs = stream_specs(sim.scene.layout.cameras, 96, 72)
    with RenderPipeline(str(t.path), specs, 96, 72, slots=2) as frames:
        got = list(frames)
        assert frames.device[0] in ("cpu", "gpu") and frames.frames == t.length
    assert [i for i, _ in got] == list(range(t.length))
    with StateRenderer(sim.model, sim.scene.layout.cameras, 96, 72) as renderer:
        for i, frame in got:
            sim.set_state(t.arrays["states"][i])
            for key, image in renderer.render(sim.data).items():
                np.testing.assert_array_equal(frame[key], image)


def test_one_pass_gives_the_colour_of_the_rgb_pass_and_the_depth_of_the_depth_pass(take):
    """Against mujoco.Renderer's two passes made with the same render quality: the same colour,
    and (one sample per pixel, so no edge mixes two surfaces) the depth pass's depth."""
    import mujoco
    _, t = take
    sim = Sim(scene_from_take(t))
    sim.set_state(t.arrays["states"][5])
    with StateRenderer(sim.model, sim.scene.layout.cameras) as renderer:
        ours = renderer.render(sim.data)
    vis = sim.model.vis.quality
    vis.offsamples, vis.numslices, vis.numstacks = DATASET_QUALITY
    with mujoco.Renderer(sim.model, 360, 480) as r:
        for cam in sim.scene.layout.cameras:
            r.update_scene(sim.data, camera=cam)
            np.testing.assert_array_equal(ours[f"observation.images.{cam}"], r.render())
            r.enable_depth_rendering()
            two_pass = np.clip(r.render(), 0, 4.0)
            r.disable_depth_rendering()
            err = np.abs(ours[f"observation.images.{cam}_depth"][..., 0] - two_pass)
            assert err.max() < 1e-4, (cam, err.max())


def test_render_quality_is_the_contexts_own_and_the_model_is_left_as_it_was(take):
    _, t = take
    sim = Sim(scene_from_take(t))
    sim.set_state(t.arrays["states"][5])
    vis = sim.model.vis.quality
    before = (vis.offsamples, vis.numslices, vis.numstacks)
    assert before != tuple(DATASET_QUALITY)           # MuJoCo's defaults serve the operator's views
    with StateRenderer(sim.model, sim.scene.layout.cameras, 96, 72) as cheap, \
            StateRenderer(sim.model, sim.scene.layout.cameras, 96, 72, RenderQuality(*before)) as full:
        a, b = cheap.render(sim.data), full.render(sim.data)
    assert (vis.offsamples, vis.numslices, vis.numstacks) == before
    diff = np.abs(a["observation.images.head"].astype(int) - b["observation.images.head"]).mean()
    assert 0 < diff < 8                                  # smoother edges and round parts, same picture
    with pytest.raises(RecordingsError, match="render quality needs samples >= 0, slices >= 3"):
        StateRenderer(sim.model, sim.scene.layout.cameras, 96, 72, RenderQuality(-1, 16, 8))


def test_a_broken_take_fails_in_the_render_process_with_its_error(take, tmp_path):
    _, t = take
    sim = Sim(scene_from_take(t))
    specs = stream_specs(sim.scene.layout.cameras, 96, 72)
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not a take")
    with pytest.raises(Exception, match="unreadable take file"):
        with RenderPipeline(str(bad), specs, 96, 72) as frames:
            list(frames)


def _reports_twice(n: int) -> int:
    report((1, 2))
    report((2, 2))
    return n


@pytest.mark.parametrize("workers", [1, 2])
def test_items_report_to_the_driver_while_they_run(workers):
    seen = []
    results = run_batch(_reports_twice, [10, 20, 30], workers=workers, progress=False,
                        reports=lambda i, p: seen.append((i, p)))
    assert [r.value for r in results] == [10, 20, 30]
    assert sorted(seen) == sorted([(i, (1, 2)) for i in range(3)] + [(i, (2, 2)) for i in range(3)])


def test_progress_counts_frames_once_even_when_a_take_restarts():
    seen = []
    p = FrameProgress([10, 20], callback=seen.append)
    p.frame(0, (8, 10))
    p.frame(0, (3, 10))           # the take restarted (its worker died): counted from zero again
    p.take(1, ok=True, reused=True)
    p.take(0, ok=True)
    last = seen[-1]
    assert (last.frames_done, last.frames_total, last.takes_done, last.failed) == (30, 30, 2, 0)
    assert last.to_json()["done"] == 30 and last.to_json()["total"] == 30


def test_export_reports_every_frame_with_an_estimate(take, tmp_path):
    root, t = take
    seen = []
    summary = export_dataset(root, tmp_path / "ds", progress=seen.append, mark_exported=False)
    assert summary.ok and seen[-1].frames_done == seen[-1].frames_total == t.length
    assert any(p.eta_s is not None and 0 < p.frames_done < t.length for p in seen)
    assert [p.frames_done for p in seen] == sorted(p.frames_done for p in seen)
    assert summary.render_devices and json.dumps(seen[-1].to_json())
