"""Offscreen rendering of a take's replay: RGB + metric depth for every robot camera.

Only ever used on replays (never live): the take's actions are stepped from its initial state, the
scene events it recorded applied after each step, and before action ``t`` each camera is rendered
ONCE; colour and depth are both read from that one pass (``mjr_readPixels`` fills both buffers), so
frame ``t`` of every stream shows exactly what the policy saw before acting. Rendering follows the
replay, not the recorded states: an export never shows states nobody reproduced
(:func:`checked_replay`, :func:`replay_frames`).

``mujoco.Renderer`` needs two passes for the same (its depth mode re-renders the scene): measured on
the 2-core machine, one pass costs 0.64x the CPU time per frame (docs/benchmarks.md).

Dataset frames are rendered with cheaper settings than MuJoCo's defaults (:class:`RenderQuality`,
measured on the 2-core machine for the six streams of a task scene, docs/benchmarks.md): no
multisampling (4x MSAA triples the software rasteriser's cost, 199 -> 67 ms CPU per frame, for
smoother edges a policy does not need; and a single-sample buffer gives every pixel the depth of
exactly one surface, where with MSAA a pixel on an edge may take the depth of either side), and
primitives tessellated with 16 x 8 segments instead of 28 x 16 (65 -> 36 ms; the images differ by
0.8 grey levels on average, invisible at 480x360).
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator
from typing import NamedTuple

import mujoco
import numpy as np

from recordings.errors import RecordingsError, TakeError
from recordings.replay_check import StateLabels
from recordings.take_events import apply_events
from teleop.core.errors import choices

WIDTH, HEIGHT = 480, 360
# Depth beyond this is clipped (metres): the table, both hands and the room all sit within 4 m of
# every camera, and a bounded range keeps the 12-bit depth quantisation fine near the hands.
DEPTH_MAX_M = 4.0


class RenderQuality(NamedTuple):
    """What a GL context is made with (MuJoCo reads these once, when the context is created)."""

    samples: int = 0        # multisamples per pixel (MuJoCo's default: 4)
    slices: int = 16        # segments around a capsule, cylinder or sphere (default 28)
    stacks: int = 8         # segments along one (default 16)


# Dataset frames (see the module docstring); the operator's views never pass through here.
DATASET_QUALITY = RenderQuality()


def stream_keys(cameras: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Dataset feature key -> (camera, "rgb" | "depth"), RGB streams first, cameras in layout order."""
    keys = {f"observation.images.{cam}": (cam, "rgb") for cam in cameras}
    keys.update({f"observation.images.{cam}_depth": (cam, "depth") for cam in cameras})
    return keys


@dataclass(frozen=True)
class StreamSpec:
    key: str
    camera: str
    kind: str                  # "rgb" -> (H, W, 3) uint8; "depth" -> (H, W, 1) float32 metres
    shape: tuple[int, int, int]

    @property
    def dtype(self):
        return np.uint8 if self.kind == "rgb" else np.float32


def stream_specs(cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT) -> list[StreamSpec]:
    return [StreamSpec(key, cam, kind, (height, width, 3 if kind == "rgb" else 1))
            for key, (cam, kind) in stream_keys(cameras).items()]


def _cameras(model: mujoco.MjModel) -> list[str]:
    return [model.camera(i).name for i in range(model.ncam)]


class StateRenderer:
    """Renders every stream for one simulator state; one GL context, reused for a whole take."""

    def __init__(self, model: mujoco.MjModel, cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT,
                 quality: RenderQuality = DATASET_QUALITY):
        ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, cam) for cam in cameras]
        for cam, cam_id in zip(cameras, ids):
            if cam_id < 0:
                raise RecordingsError(f"camera {cam!r} is not in the model; valid: {choices(_cameras(model))}")
        if width > model.vis.global_.offwidth or height > model.vis.global_.offheight:
            raise RecordingsError(f"{width}x{height} exceeds the model's offscreen buffer "
                                  f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}")
        from mujoco import gl_context

        self.model, self.cameras = model, tuple(cameras)
        self.specs = stream_specs(self.cameras, width, height)
        self.width, self.height = width, height
        self._gl = gl_context.GLContext(width, height) if getattr(gl_context, "GLContext", None) else None
        if self._gl is not None:
            self._gl.make_current()
        self._ctx = _context(model, quality)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, self._ctx)
        self._ctx.readDepthMap = mujoco.mjtDepthMap.mjDEPTH_ZEROFAR
        self._scene = mujoco.MjvScene(model, maxgeom=10000)
        self._option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._ids = ids
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._rgb = np.empty((height, width, 3), np.uint8)
        self._depth = np.empty((height, width), np.float32)
        extent = model.stat.extent
        near, far = np.float32(model.vis.map.znear * extent), np.float32(model.vis.map.zfar * extent)
        # mujoco.Renderer's conversion of the [0, 1] depth buffer to metres, kept identical.
        c = -(far + near) / (far - near)
        d = -(np.float32(2) * far * near) / (far - near)
        self._c, self._d = np.float32(-0.5) * c - np.float32(0.5), np.float32(-0.5) * d

    def close(self) -> None:
        if self._ctx is not None:
            if self._gl is not None:
                self._gl.make_current()
            self._ctx.free()
            self._ctx = None
        if self._gl is not None:
            self._gl.free()
            self._gl = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _pass(self, data: mujoco.MjData, cam_id: int, rgb_out: np.ndarray, depth_out: np.ndarray) -> None:
        """One render of one camera into (H, W, 3) uint8 and (H, W, 1) float32 metres (clipped)."""
        self._camera.fixedcamid = cam_id
        mujoco.mjv_updateScene(self.model, data, self._option, None, self._camera, mujoco.mjtCatBit.mjCAT_ALL.value,
                               self._scene)
        mujoco.mjr_render(self._rect, self._scene, self._ctx)
        mujoco.mjr_readPixels(self._rgb, self._depth, self._rect, self._ctx)
        rgb_out[:] = self._rgb[::-1]                    # GL rows run bottom-up
        metres = (self._d / (self._depth.astype(np.float64) + self._c)).astype(np.float32)
        np.clip(metres[::-1, :, None], 0.0, DEPTH_MAX_M, out=depth_out)

    def render_into(self, data: mujoco.MjData, out: dict[str, np.ndarray]) -> None:
        """Render every stream of the current ``data`` into preallocated arrays (feature key ->
        array of its spec's shape and dtype), e.g. slots of shared memory."""
        if self._gl is not None:
            self._gl.make_current()
        for cam, cam_id in zip(self.cameras, self._ids):
            self._pass(data, cam_id, out[f"observation.images.{cam}"], out[f"observation.images.{cam}_depth"])

    def render(self, data: mujoco.MjData) -> dict[str, np.ndarray]:
        """Feature key -> image for the current ``data`` (kinematics must be up to date).

        RGB: (H, W, 3) uint8. Depth: (H, W, 1) float32 metres, clipped to [0, DEPTH_MAX_M].
        """
        out = {spec.key: np.empty(spec.shape, spec.dtype) for spec in self.specs}
        self.render_into(data, out)
        return out


def _context(model: mujoco.MjModel, quality: RenderQuality) -> mujoco.MjrContext:
    """A GL context for ``model`` made with ``quality``; the caller's model is left as it was."""
    if quality.samples < 0 or quality.slices < 3 or quality.stacks < 2:
        raise RecordingsError(f"render quality needs samples >= 0, slices >= 3, stacks >= 2; got {quality}")
    vis = model.vis.quality
    saved = vis.offsamples, vis.numslices, vis.numstacks
    vis.offsamples, vis.numslices, vis.numstacks = quality
    try:
        return mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_150.value)
    finally:
        vis.offsamples, vis.numslices, vis.numstacks = saved


def checked_replay(sim, take, tolerance: float = 0.0) -> Iterator[tuple[int, np.ndarray]]:
    """Replay ``take``'s actions in ``sim`` (a plain Sim of the take's model) from its initial
    state, with its scene events applied (:func:`recordings.take_events.apply_events`); yields
    ``(t, observation)`` with ``sim`` at the state before action ``t``, ready to render.

    Each replayed state is checked against the recorded one first (bit for bit when
    ``tolerance`` is 0, else positions within it). Scene-event counters (``userdata``) are task
    logic a plain Sim does not run: they move nothing, so they are left out of the comparison.
    A mismatch raises :class:`TakeError`: the take changed, or was never reproducible.
    """
    labels = StateLabels(sim.model)
    compare = np.ones(take.arrays["states"].shape[1], bool)
    for lo, hi, name in labels.spans:
        if name == "userdata":
            compare[lo:hi] = False
    if tolerance:
        compare[:] = False
        qpos = next((lo, hi) for lo, hi, name in labels.spans if name == "qpos")
        compare[qpos[0]:qpos[1]] = True
    events = list(take.events)
    sim.set_state(take.initial_state)
    apply_events(sim.model, sim.data, events, 0)        # colours set at the reset
    for t, action in enumerate(take.arrays["actions"]):
        state, recorded = sim.get_state(), take.arrays["states"][t]
        diff = np.abs(state - recorded)
        diff[np.isnan(diff)] = np.inf
        if (diff[compare] > tolerance).any():
            i = int(np.flatnonzero(compare)[np.argmax(diff[compare])])
            raise TakeError(take.path, f"replay does not reproduce the recorded states at tick {t} "
                                       f"({labels(i)} differs by {diff[i]:.3g}); validate the take again")
        # Sim.step only recomputes body poses: everything a render reads (cameras, lights, tendons)
        # must be what set_state(states[t]) gives. mj_forward leaves the integration state as it is.
        mujoco.mj_forward(sim.model, sim.data)
        yield t, sim.observation()
        sim.step(action)
        apply_events(sim.model, sim.data, events, t + 1)


def replay_frames(sim, take, cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT,
                  tolerance: float = 0.0,
                  quality: RenderQuality = DATASET_QUALITY) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """``(observation, streams)`` before each action of the checked replay (:func:`checked_replay`),
    rendered here; exports render the same in a render process (:mod:`recordings.pipeline`).

    A generator so callers can hand each frame to a writer and drop it: memory stays constant
    whatever the take length.
    """
    with StateRenderer(sim.model, cameras, width, height, quality) as renderer:
        for _, obs in checked_replay(sim, take, tolerance):
            yield obs, renderer.render(sim.data)
