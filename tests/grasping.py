"""A scripted top-down power grasp used by the robot tests (and handy in a REPL)."""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from helpers import (OPEN_HAND, POWER_GRASP, arm_indices, arm_ik, hand_indices, hand_pose,
                     palm_down_rotation, run_segment)
from teleop.robot import WORLD_COLLISION
from teleop.sim.scene import build_scene
from teleop.sim import Sim


@dataclass(frozen=True)
class Item:
    name: str
    geom: dict                 # kwargs for spec geom: type, size, mass
    pos: tuple[float, float, float]
    approach: dict             # pitch, reach, height of the grasp; half_height of the item


def cube_item(pos=(0.5, -0.2)) -> Item:
    return Item("cube", dict(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.025] * 3, mass=0.1), (*pos, 0.78 + 0.025),
                dict(pitch=0.6, reach=0.10, height=0.11, half_height=0.025))


def cylinder_item(pos=(0.5, -0.2)) -> Item:
    return Item("cylinder", dict(type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.03, 0.05, 0], mass=0.3),
                (*pos, 0.78 + 0.05), dict(pitch=0.5, reach=0.08, height=0.11, half_height=0.05))


def scene_with(item: Item):
    def hook(spec):
        body = spec.worldbody.add_body(name=item.name, pos=list(item.pos))
        body.add_freejoint(name=f"{item.name}_free")
        body.add_geom(name=f"{item.name}_geom", rgba=[0.8, 0.2, 0.2, 1], friction=[1.0, 0.01, 0.0001],
                      condim=4, **item.geom, **WORLD_COLLISION)
    return build_scene(hooks=(hook,))


def grasp_and_lift(sim: Sim, item: Item, side="right", lift=0.10, hold=2.0, step=None) -> list[np.ndarray]:
    """Approach from above, close a power grasp, lift by ``lift`` m and hold; returns item positions
    (3,) sampled every tick during the hold. ``step(action)`` defaults to ``sim.step``."""
    step = step or sim.step
    pitch, reach, height = item.approach["pitch"], item.approach["reach"], item.approach["height"]
    rot = palm_down_rotation(side, pitch)
    x, y, top = item.pos[0], item.pos[1], item.pos[2] + item.approach["half_height"]
    wrist = np.array([x - reach, y, top + height - 0.05])
    ai, hi = arm_indices(sim, side), hand_indices(sim, side)
    a = sim.joint_positions
    pre = a.copy()
    pre[ai] = arm_ik(sim, side, wrist + [0, 0, 0.1], rot)
    pre[hi] = hand_pose(sim, side, OPEN_HAND)
    a = run_segment(sim, a, pre, 1.5, step)
    down = pre.copy()
    down[ai] = arm_ik(sim, side, wrist, rot, pre[ai])
    a = run_segment(sim, a, down, 1.0, step)
    closed = down.copy()
    closed[hi] = hand_pose(sim, side, POWER_GRASP)
    a = run_segment(sim, a, closed, 1.0, step)
    up = closed.copy()
    up[ai] = arm_ik(sim, side, wrist + [0, 0, lift], rot, closed[ai])
    a = run_segment(sim, a, up, 1.0, step)
    body = sim.model.body(item.name).id
    trace = []
    for _ in range(int(hold * sim.scene.params.physics.control_hz)):
        step(a)
        trace.append(sim.data.xpos[body].copy())
    return trace


def item_at(sim: Sim, body: str, approach: dict) -> Item:
    """An :class:`Item` describing an object already in the scene (for grasping it)."""
    pos = tuple(float(v) for v in sim.data.body(body).xpos)
    return Item(body, {"type": None, "size": [approach["half_height"]]}, pos, approach)
