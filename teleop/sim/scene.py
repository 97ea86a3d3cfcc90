"""A compiled scene: the robot, its workspace and any task objects, with a model fingerprint.

The live model is always compiled from the MJCF text it is saved as, so a take's ``model_file``
reproduces the exact same physics (and fingerprint) when it is replayed elsewhere.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from collections.abc import Callable

import mujoco
import numpy as np

from teleop.core.errors import ConfigError
from teleop.robot import RobotLayout, RobotParams, build_robot_spec, load_params

SpecHook = Callable[[mujoco.MjSpec], None]


@dataclass(frozen=True)
class Scene:
    model: mujoco.MjModel
    xml: str
    layout: RobotLayout
    params: RobotParams
    fingerprint: str                 # 16 hex digits, a hash of the compiled model

    @property
    def substeps(self) -> int:
        return self.params.physics.substeps

    @property
    def control_dt(self) -> float:
        return 1.0 / self.params.physics.control_hz


def model_fingerprint(model: mujoco.MjModel) -> str:
    """Stable 64-bit hash of every array in a compiled model (mj_saveModel's binary image)."""
    buf = np.zeros(mujoco.mj_sizeModel(model), np.uint8)
    mujoco.mj_saveModel(model, None, buf)
    return hashlib.sha256(buf.tobytes()).hexdigest()[:16]


def compile_xml(xml: str) -> mujoco.MjModel:
    try:
        return mujoco.MjModel.from_xml_string(xml)
    except ValueError as exc:
        raise ConfigError(f"the scene's MJCF does not compile: {exc}") from exc


def build_scene(params: RobotParams | None = None, hooks: tuple[SpecHook, ...] = ()) -> Scene:
    """Build the robot spec, let ``hooks`` add objects to it, and compile from its MJCF text."""
    params = params or load_params()
    spec, layout = build_robot_spec(params)
    for hook in hooks:
        hook(spec)
    spec.compile()                   # surfaces spec errors with MjSpec's own messages
    xml = spec.to_xml()
    model = compile_xml(xml)
    return Scene(model, xml, layout, params, model_fingerprint(model))
