"""Offscreen rendering of a take's recorded states: RGB + metric depth for every robot camera.

Only ever used on replays (never live): for tick ``t`` the simulator is set to ``states[t]``
(the state BEFORE action ``t``) and each camera is rendered twice, once as colour and once as
depth, so frame ``t`` of every stream shows exactly what the policy saw before acting.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import mujoco
import numpy as np

from recordings.errors import RecordingsError
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


def render_states(sim, states: np.ndarray, cameras: tuple[str, ...], width: int = WIDTH,
                  height: int = HEIGHT) -> Iterator[dict[str, np.ndarray]]:
    """Yield the streams for each recorded state ``states[t]`` ((T, D) f8), one tick at a time.

    A generator so callers can hand each frame to a writer and drop it: memory stays constant
    whatever the take length.
    """
    with StateRenderer(sim.model, cameras, width, height) as renderer:
        for state in states:
            sim.set_state(state)
            yield renderer.render(sim.data)
