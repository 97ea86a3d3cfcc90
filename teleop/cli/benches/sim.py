"""Physics speed: raw steps/s and the real-time factor of the control tick (robot.yaml's control_hz)."""
from __future__ import annotations

import time

import mujoco
import numpy as np

from teleop.robot import WORLD_COLLISION
from teleop.sim.scene import build_scene
from teleop.core.seeding import stable_rng
from teleop.sim import Sim

NAME = "sim"


def add_arguments(parser) -> None:
    parser.add_argument("--ticks", type=int, default=500, help="control ticks to time (default 500)")


def _table_objects(spec) -> None:
    """Objects resting on the table, so the measured ticks include real contacts."""
    shapes = [(mujoco.mjtGeom.mjGEOM_BOX, [0.025, 0.025, 0.025]), (mujoco.mjtGeom.mjGEOM_CYLINDER, [0.03, 0.05, 0]),
              (mujoco.mjtGeom.mjGEOM_SPHERE, [0.035, 0, 0]), (mujoco.mjtGeom.mjGEOM_ELLIPSOID, [0.04, 0.03, 0.025])]
    for i, (kind, size) in enumerate(shapes):
        half_height = size[2] if kind != mujoco.mjtGeom.mjGEOM_SPHERE else size[0]
        if kind == mujoco.mjtGeom.mjGEOM_CYLINDER:
            half_height = size[1]
        body = spec.worldbody.add_body(name=f"bench_obj{i}", pos=[0.45 + 0.1 * (i % 2), -0.15 + 0.1 * i,
                                                                  0.78 + half_height])
        body.add_freejoint()
        body.add_geom(type=kind, size=size, mass=0.1, condim=4, **WORLD_COLLISION)


def _targets(sim: Sim, ticks: int) -> np.ndarray:
    """A smooth random walk of joint targets around the ready pose, so contacts and motion are real."""
    rng = stable_rng("bench-sim")
    span = sim.ctrl_high - sim.ctrl_low
    walk = np.cumsum(rng.normal(0.0, 0.004, (ticks, sim.ctrl_low.size)) * span, axis=0)
    return np.clip(sim.joint_positions + walk, sim.ctrl_low, sim.ctrl_high)


def run(args) -> dict:
    scene = build_scene(hooks=(_table_objects,))
    sim = Sim(scene)
    sim.reset(0)
    targets = _targets(sim, args.ticks)
    for a in targets[:20]:            # warm-up
        sim.step(a)
    sim.reset(0)
    ticks_ms = np.empty(args.ticks)
    for i, a in enumerate(targets):
        t0 = time.perf_counter()
        sim.step(a)
        ticks_ms[i] = (time.perf_counter() - t0) * 1e3
    # Raw physics: mj_step alone, one step at a time.
    sim.reset(0)
    n = args.ticks * scene.substeps
    t0 = time.perf_counter()
    for _ in range(n):
        mujoco.mj_step(sim.model, sim.data)
    raw = n / (time.perf_counter() - t0)
    return {
        "physics_steps_per_s": round(raw, 1),
        "realtime_factor": round(scene.control_dt / (np.mean(ticks_ms) / 1e3), 2),
        "tick_ms_p50": round(float(np.percentile(ticks_ms, 50)), 3),
        "tick_ms_p99": round(float(np.percentile(ticks_ms, 99)), 3),
        "ticks": args.ticks,
        "substeps": scene.substeps,
        "nv": int(scene.model.nv),
    }
