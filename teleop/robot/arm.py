"""The Franka FR3 arm chain, built into an MjSpec body from :class:`ArmParams`."""
from __future__ import annotations

import mujoco
import numpy as np

from teleop.core.geometry import quat_axis_angle
from teleop.robot.hand import robot_collision
from teleop.robot.params import ArmParams


def _link_geoms(body, offset, ap: ArmParams, mass: float, name: str, collision: dict):
    """A housing capsule around the joint axis plus a capsule to the next joint, if any."""
    r = ap.joint_radius
    geoms = [dict(fromto=[0, 0, -r * 0.8, 0, 0, r * 0.8], size=[r, 0, 0])]
    if np.linalg.norm(offset) > 2 * r:
        geoms.append(dict(fromto=[0, 0, 0, *offset], size=[ap.link_radius, 0, 0]))
    for i, g in enumerate(geoms):
        body.add_geom(name=f"{name}_g{i}", type=mujoco.mjtGeom.mjGEOM_CAPSULE, mass=mass / len(geoms),
                      rgba=list(ap.rgba), **g, **collision)


def build_arm(parent, side: str, pos, ap: ArmParams) -> tuple[list[str], object]:
    """Add one FR3 arm at ``pos`` in ``parent``; returns (joint names, flange body)."""
    collision = robot_collision(side)
    base = parent.add_body(name=f"{side}_arm_base", pos=list(pos))
    base.add_geom(name=f"{side}_arm_base_g", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[0.07, 0.03, 0],
                  pos=[0, 0, 0.03], rgba=list(ap.rgba), mass=4.0, **collision)
    body, names = base, []
    offsets = [link.pos for link in ap.links[1:]] + [ap.flange]
    for i, link in enumerate(ap.links):
        quat = quat_axis_angle((1, 0, 0), np.deg2rad(link.rot_x_deg))
        body = body.add_body(name=f"{side}_link{i + 1}", pos=list(link.pos), quat=list(quat))
        body.gravcomp = 1.0   # like the real FR3 controller, gravity is compensated
        name = f"{side}_arm_j{i + 1}"
        body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1], range=list(link.range),
                       limited=mujoco.mjtLimited.mjLIMITED_TRUE, armature=link.armature,
                       damping=ap.joint_damping)
        names.append(name)
        # Link 1 spans base->shoulder in the parent's frame; draw its column in the base instead.
        if i == 0:
            base.add_geom(name=f"{side}_column", type=mujoco.mjtGeom.mjGEOM_CAPSULE, mass=0.0,
                          fromto=[0, 0, 0.06, 0, 0, link.pos[2] - ap.joint_radius], size=[ap.link_radius, 0, 0],
                          rgba=list(ap.rgba), **collision)
        _link_geoms(body, offsets[i], ap, link.mass, f"{side}_link{i + 1}", collision)
    flange = body.add_body(name=f"{side}_flange", pos=list(ap.flange))
    return names, flange
