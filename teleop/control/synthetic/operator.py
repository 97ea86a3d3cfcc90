"""Assemble a synthetic operator for a task episode.

:func:`plan_episode` plans the whole episode once from the reset scene (open loop: the grasp trials
use it); :func:`live_episode` plans each step as it begins from the live scene (closed loop, see
:mod:`teleop.control.synthetic.closed_loop`): the ``synthetic`` device plays that one.
"""
from __future__ import annotations

import numpy as np

import mujoco

from devices.synthetic import SyntheticOperator
from teleop.core.conventions import SIDES
from teleop.core.seeding import stable_rng
from teleop.control.synthetic.closed_loop import LivePlanner, LiveStream, SideRecorder
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


def _start_keys(scene, data) -> dict[str, Key]:
    start = {}
    for side in SIDES:
        site = data.site(scene.layout.ee_sites[side])
        start[side] = Key(0.0, site.xpos.copy(), site.xmat.reshape(3, 3).copy(), 1.0, "ready")
    return start


def open_loop_planner(runtime, shapes: HandShapes, planner: type[Planner] = Planner) -> Planner:
    """A planner of the current (just reset) scene of ``runtime``, both hands where they are now."""
    scene, data = runtime.sim.scene, runtime.sim.data
    return planner(SceneQuery(scene.model, data), _start_keys(scene, data), shapes.tip,
                   segment_starts(runtime.spec, scene.control_dt))


def plan_episode(runtime, retargeter, script: Script | None = None, seed: int = 0,
                 noise: HumanNoise = DEFAULT_NOISE) -> HumanStream:
    """Plan the current (just reset) episode of ``runtime``'s task; returns the human stream."""
    script = script or load_script(runtime.spec.id)
    shapes = HandShapes(runtime.sim.scene, load_grasps(runtime.sim.scene))
    timelines = open_loop_planner(runtime, shapes).plan(script)
    rng = stable_rng("synthetic-operator", runtime.spec.id, seed)
    return HumanStream(retargeter, shapes, timelines, rng, noise)


def live_episode(runtime, retargeter, script: Script | None = None, seed: int = 0,
                 noise: HumanNoise = DEFAULT_NOISE, shadow: bool = False) -> LiveStream:
    """The closed-loop stream for the current (just reset) episode. ``shadow``: it will be called
    from another thread than the one stepping the sim (the real-time clock), so it reads poses
    from its own copy, refreshed by :meth:`LiveStream.publish`."""
    script = script or load_script(runtime.spec.id)
    scene, data = runtime.sim.scene, runtime.sim.data
    shapes = HandShapes(scene, load_grasps(scene))
    segments = segment_starts(runtime.spec, scene.control_dt)
    # A dry open-loop plan checks the script's arguments, resolves ``side: auto`` as before and
    # sizes the stream's time bound.
    dry = open_loop_planner(runtime, shapes, SideRecorder)
    open_loop_s = max(t.duration for t in dry.plan(script).values())
    own = mujoco.MjData(scene.model) if shadow else None
    if own is not None:
        own.qpos[:], own.mocap_pos[:], own.mocap_quat[:] = data.qpos, data.mocap_pos, data.mocap_quat
        mujoco.mj_kinematics(scene.model, own)
    planner = LivePlanner(SceneQuery(scene.model, data if own is None else own), _start_keys(scene, data),
                          shapes.tip, segments)
    rng = stable_rng("synthetic-operator", runtime.spec.id, seed)
    return LiveStream(retargeter, shapes, script, planner, dry.chosen, open_loop_s, dict(scene.layout.ee_sites),
                      rng, noise, own)


def synthetic_device(runtime, retargeter, script: Script | None = None, seed: int = 0, clock: str = "lockstep",
                     noise: HumanNoise = DEFAULT_NOISE) -> SyntheticOperator:
    """The closed-loop operator; it ends when its last step has (``duration`` is only the bound)."""
    stream = live_episode(runtime, retargeter, script, seed, noise, shadow=clock == "realtime")
    sim = runtime.sim
    return SyntheticOperator(stream.frame_at, stream.bound, clock=clock, dt=sim.scene.control_dt,
                             end=lambda: stream.end, on_read=lambda: stream.publish(sim.data))


def episode_ticks(device: SyntheticOperator, dt: float) -> int:
    """Ticks up to the device's time bound (a closed-loop operator usually finishes sooner)."""
    return int(np.ceil(device.duration / dt)) + 1
