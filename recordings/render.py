"""Offscreen rendering of a take's replay: RGB + metric depth for every robot camera.

Only ever used on replays (never live): the take's actions are stepped from its initial state and
before action ``t`` each camera is rendered twice, once as colour and once as depth, so frame ``t``
of every stream shows exactly what the policy saw before acting. Rendering follows the replay, not
the recorded states: an export never shows states nobody reproduced (:func:`replay_frames`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import mujoco
import numpy as np

from recordings.errors import RecordingsError, TakeError
from recordings.replay_check import StateLabels
from teleop.core.errors import choices

WIDTH, HEIGHT = 480, 360
# Depth beyond this is clipped (metres): the table, both hands and the room all sit within 4 m of
# every camera, and a bounded range keeps the 12-bit depth quantisation fine near the hands.
DEPTH_MAX_M = 4.0


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


def stream_specs(cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT) -> list[StreamSpec]:
    return [StreamSpec(key, cam, kind, (height, width, 3 if kind == "rgb" else 1))
            for key, (cam, kind) in stream_keys(cameras).items()]


def _cameras(model: mujoco.MjModel) -> list[str]:
    return [model.camera(i).name for i in range(model.ncam)]


class StateRenderer:
    """Renders every stream for one simulator state; one GL context, reused for a whole take."""

    def __init__(self, model: mujoco.MjModel, cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT):
        for cam in cameras:
            if mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_CAMERA, cam) < 0:
                raise RecordingsError(f"camera {cam!r} is not in the model; valid: {choices(_cameras(model))}")
        self.model, self.cameras = model, tuple(cameras)
        self.specs = stream_specs(self.cameras, width, height)
        self._renderer = mujoco.Renderer(model, height, width)

    def close(self) -> None:
        self._renderer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def render(self, data: mujoco.MjData) -> dict[str, np.ndarray]:
        """Feature key -> image for the current ``data`` (kinematics must be up to date).

        RGB: (H, W, 3) uint8. Depth: (H, W, 1) float32 metres, clipped to [0, DEPTH_MAX_M].
        """
        out: dict[str, np.ndarray] = {}
        r = self._renderer
        for cam in self.cameras:
            r.update_scene(data, camera=cam)
            out[f"observation.images.{cam}"] = r.render().copy()
            r.enable_depth_rendering()
            depth = r.render()
            r.disable_depth_rendering()
            out[f"observation.images.{cam}_depth"] = np.clip(depth, 0.0, DEPTH_MAX_M)[..., None].astype(np.float32)
        return {spec.key: out[spec.key] for spec in self.specs}


def replay_frames(sim, take, cameras: tuple[str, ...], width: int = WIDTH, height: int = HEIGHT,
                  tolerance: float = 0.0) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Replay ``take``'s actions in ``sim`` (a plain Sim of the take's model) from its initial
    state, yielding ``(observation, streams)`` before each action.

    Each replayed state is checked against the recorded one first (bit for bit when
    ``tolerance`` is 0, else positions within it). Scene-event counters (``userdata``) are task
    logic a plain Sim does not run: they move nothing, so they are left out of the comparison.
    A mismatch raises :class:`TakeError`: the take changed, or was never reproducible.

    A generator so callers can hand each frame to a writer and drop it: memory stays constant
    whatever the take length.
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
    sim.set_state(take.initial_state)
    with StateRenderer(sim.model, cameras, width, height) as renderer:
        for t, action in enumerate(take.arrays["actions"]):
            state, recorded = sim.get_state(), take.arrays["states"][t]
            diff = np.abs(state - recorded)
            diff[np.isnan(diff)] = np.inf
            if (diff[compare] > tolerance).any():
                i = int(np.flatnonzero(compare)[np.argmax(diff[compare])])
                raise TakeError(take.path, f"replay does not reproduce the recorded states at tick {t} "
                                           f"({labels(i)} differs by {diff[i]:.3g}); validate the take again")
            yield sim.observation(), renderer.render(sim.data)
            sim.step(action)
