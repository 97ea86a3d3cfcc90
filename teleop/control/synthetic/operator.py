"""Assemble a synthetic operator for a task episode: plan from the reset scene, then stream."""
from __future__ import annotations

import numpy as np

from devices.synthetic import SyntheticOperator
from teleop.core.conventions import SIDES
from teleop.core.seeding import stable_rng
from teleop.control.synthetic.human import HandShapes, HumanNoise, HumanStream, load_grasps
from teleop.control.synthetic.motion import Key
from teleop.control.synthetic.planner import Planner
from teleop.control.synthetic.scene_query import SceneQuery
from teleop.control.synthetic.script import Script, load_script


def segment_starts(spec, dt: float) -> tuple[float, ...]:
    """When each instruction segment starts showing, in seconds."""
    if not spec.language_schedule:
        return (0.0,)
    starts = [0.0]
    for seg in spec.language_schedule[:-1]:
        starts.append(seg.until_step * dt)
    return tuple(starts)


DEFAULT_NOISE = HumanNoise()        # frozen: one shared default is safe


def plan_episode(runtime, retargeter, script: Script | None = None, seed: int = 0,
                 noise: HumanNoise = DEFAULT_NOISE) -> HumanStream:
    """Plan the current (just reset) episode of ``runtime``'s task; returns the human stream."""
    script = script or load_script(runtime.spec.id)
    scene, data = runtime.sim.scene, runtime.sim.data
    shapes = HandShapes(scene, load_grasps(scene))
    start = {}
    for side in SIDES:
        site = data.site(scene.layout.ee_sites[side])
        start[side] = Key(0.0, site.xpos.copy(), site.xmat.reshape(3, 3).copy(), 1.0, "ready")
    planner = Planner(SceneQuery(scene.model, data), start, shapes.tip, segment_starts(runtime.spec, scene.control_dt))
    timelines = planner.plan(script)
    rng = stable_rng("synthetic-operator", runtime.spec.id, seed)
    return HumanStream(retargeter, shapes, timelines, rng, noise)


def synthetic_device(runtime, retargeter, script: Script | None = None, seed: int = 0, clock: str = "lockstep",
                     noise: HumanNoise = DEFAULT_NOISE) -> SyntheticOperator:
    stream = plan_episode(runtime, retargeter, script, seed, noise)
    return SyntheticOperator(stream.frame_at, stream.duration, clock=clock, dt=runtime.sim.scene.control_dt)


def episode_ticks(device: SyntheticOperator, dt: float) -> int:
    return int(np.ceil(device.duration / dt)) + 1
