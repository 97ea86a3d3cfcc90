"""The 22-DoF anthropomorphic hand, built into an MjSpec body from :class:`HandParams`.

The right hand is described in its palm frame (origin at the wrist, z toward the fingers, y toward
the thumb, x out of the palm). The left hand is the same description reflected across y = 0:
positions p -> M p, orientations R -> M R M and joint axes a -> -M a with M = diag(1, -1, 1). With
that convention the SAME joint vector gives mirror-image poses, so both hands share one
retargeting configuration.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.core.conventions import FINGER_NODES, THUMB_NODES
from teleop.core.geometry import MIRROR_Y, mirror_axis, mirror_quat, quat_axis_angle
from teleop.robot.params import HandParams

FLEX_AXIS = (0.0, -1.0, 0.0)   # negative angles curl a digit toward the palm (+x)
ABD_AXIS = (1.0, 0.0, 0.0)
THUMB_JOINTS = ("cmc_flex", "cmc_abd", "mcp_flex", "mcp_abd", "ip")
FINGER_JOINTS = ("mcp_flex", "mcp_abd", "pip", "dip")
# Collision bits: the world (table, objects, fixtures) is bit 1, each robot side its own bit. A side
# touches the world and the other side (crossed hands, arms passing), never itself: its links overlap
# at the joints by construction, so within a side no pair needs an exclusion list.
ROBOT_CONTYPE = {"left": 2, "right": 4}
ROBOT_BITS = 2 | 4


def robot_collision(side: str) -> dict:
    """contype / conaffinity of a geom of the ``side`` robot."""
    other = "right" if side == "left" else "left"
    return dict(contype=ROBOT_CONTYPE[side], conaffinity=1 | ROBOT_CONTYPE[other])


@dataclass(frozen=True)
class HandLayout:
    """Names produced by :func:`build_hand`, in action order."""

    joints: tuple[str, ...]        # 22 joint names
    keypoints: tuple[str, ...]     # 21 site names: wrist, thumb x4, index x4, ... little x4
    fingertips: tuple[str, ...]    # 5 site names, thumb first
    palm_body: str
    tip_geoms: tuple[str, ...]     # fingertip pad geoms, thumb first


class _Frame:
    """Maps right-hand local quantities to the side being built (identity, or the y-mirror)."""

    def __init__(self, mirrored: bool, side: str = "right"):
        self.mirrored = mirrored
        self.collision = robot_collision(side)

    def p(self, pos) -> list[float]:
        pos = np.asarray(pos, float)
        return list(MIRROR_Y @ pos) if self.mirrored else list(pos)

    def q(self, quat) -> list[float]:
        return list(mirror_quat(quat)) if self.mirrored else list(np.asarray(quat, float))

    def a(self, axis) -> list[float]:
        return list(mirror_axis(axis)) if self.mirrored else list(np.asarray(axis, float))


def _joint(body, name, axis, rng, hp: HandParams):
    body.add_joint(name=name, type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis, range=list(rng),
                   limited=mujoco.mjtLimited.mjLIMITED_TRUE, armature=hp.armature,
                   damping=hp.joint_damping)


def _contact(hp: HandParams) -> dict:
    """The contact data every hand geom shares (robot.yaml ``hand``: friction, condim, solref, solimp)."""
    return dict(friction=list(hp.friction), condim=hp.condim, solref=list(hp.solref), solimp=list(hp.solimp))


def _capsule(body, fr: _Frame, length, radius, mass, rgba, hp: HandParams, name=None):
    end = (0.0, 0.0, length - radius) if name else (0.0, 0.0, length)
    geom = body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=fr.p((0, 0, 0)) + fr.p(end),
                         size=[radius, 0, 0], mass=mass, rgba=list(rgba), **_contact(hp), **fr.collision)
    if name:
        geom.name = name
    return geom


def _digit_chain(parent, fr, prefix, base_pos, base_quat, joints_per_body, segments, hp, nodes,
                 layout_sites):
    """Bodies for one digit: each entry of joints_per_body is [(joint name, axis, range), ...].

    The first body sits at ``base_pos`` / ``base_quat`` (right-hand frame) in ``parent``; each
    next one at the end of the previous segment. Returns the tip site name.
    """
    body = parent
    radii = [hp.link_radius] * (len(segments) - 1) + [hp.tip_radius]
    for i, (seg, joints) in enumerate(zip(segments, joints_per_body)):
        pos, quat = (base_pos, base_quat) if i == 0 else ((0, 0, segments[i - 1]), (1, 0, 0, 0))
        body = body.add_body(name=f"{prefix}_link{i}", pos=fr.p(pos), quat=fr.q(quat))
        body.gravcomp = 1.0
        for jname, axis, rng in joints:
            _joint(body, jname, fr.a(axis), rng, hp)
        is_tip = i == len(segments) - 1
        _capsule(body, fr, seg, radii[i], hp.segment_mass[i], hp.tip_rgba if is_tip else hp.rgba, hp,
                 name=f"{prefix}_pad" if is_tip else None)
        site = body.add_site(name=f"{prefix}_{nodes[i]}", pos=fr.p((0, 0, 0)), size=[0.004, 0, 0],
                             rgba=[0.1, 0.8, 0.3, 0.6], group=4)
        layout_sites.append(site.name)
    tip = body.add_site(name=f"{prefix}_{nodes[-1]}", pos=fr.p((0, 0, segments[-1])), size=[0.004, 0, 0],
                        rgba=[0.9, 0.2, 0.2, 0.6], group=4)
    layout_sites.append(tip.name)
    return tip.name


def _thumb(palm, fr, side, hp, sites):
    t = hp.thumb
    tilt = np.deg2rad(t.tilt_deg)
    # Opposition swings the thumb about the palm's long axis (palm z, seen from the tilted frame).
    opposition_axis = (0.0, -np.sin(tilt), np.cos(tilt))
    r = t.ranges
    chain = [
        [(f"{side}_thumb_cmc_flex", opposition_axis, r["cmc_flex"]), (f"{side}_thumb_cmc_abd", ABD_AXIS, r["cmc_abd"])],
        [(f"{side}_thumb_mcp_flex", FLEX_AXIS, r["mcp_flex"]), (f"{side}_thumb_mcp_abd", ABD_AXIS, r["mcp_abd"])],
        [(f"{side}_thumb_ip", FLEX_AXIS, r["ip"])],
    ]
    return _digit_chain(palm, fr, f"{side}_thumb", t.base, quat_axis_angle((1, 0, 0), -tilt), chain,
                        t.segments, hp, THUMB_NODES, sites)


def _finger(palm, fr, side, finger, hp, sites, joints):
    r = hp.finger_ranges
    prefix = f"{side}_{finger.name}"
    parent, base = palm, finger.base
    if finger.arch is not None:
        parent = palm.add_body(name=f"{prefix}_arch", pos=fr.p(finger.base))
        parent.gravcomp = 1.0
        _joint(parent, f"{side}_palm_arch", fr.a(finger.arch.axis), finger.arch.range, hp)
        parent.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[hp.link_radius, 0, 0],
                        mass=hp.segment_mass[-1], rgba=list(hp.rgba), **_contact(hp), **fr.collision)
        joints.append(f"{side}_palm_arch")
        base = finger.arch.mcp_offset
    chain = [
        [(f"{prefix}_mcp_abd", ABD_AXIS, r["mcp_abd"]), (f"{prefix}_mcp_flex", FLEX_AXIS, r["mcp_flex"])],
        [(f"{prefix}_pip", FLEX_AXIS, r["pip"])],
        [(f"{prefix}_dip", FLEX_AXIS, r["dip"])],
    ]
    # Three bodies carry four joints: the proximal phalanx has both MCP axes.
    tip = _digit_chain(parent, fr, prefix, base, (1, 0, 0, 0), chain, hp.finger_segments, hp,
                       FINGER_NODES, sites)
    joints.extend(f"{prefix}_{j}" for j in FINGER_JOINTS)
    return tip


def build_hand(flange_body, side: str, hp: HandParams, mirrored: bool, yaw_deg: float) -> HandLayout:
    """Add a hand under ``flange_body``; returns the names of its joints, keypoints and tips."""
    fr = _Frame(mirrored, side)
    palm = flange_body.add_body(name=f"{side}_palm",
                                quat=list(quat_axis_angle((0, 0, 1), np.deg2rad(yaw_deg))))
    palm.gravcomp = 1.0
    half = np.asarray(hp.palm["half_size"], float)
    palm.add_geom(name=f"{side}_palm_geom", type=mujoco.mjtGeom.mjGEOM_BOX, pos=fr.p(hp.palm["center"]),
                  size=list(half), mass=hp.palm["mass"], rgba=list(hp.rgba), **_contact(hp), **fr.collision)
    wrist = palm.add_site(name=f"{side}_wrist", size=[0.006, 0, 0], rgba=[0.2, 0.2, 0.9, 0.6], group=4)
    palm.add_site(name=f"{side}_palm_center", pos=fr.p(hp.palm["center"]), size=[0.005, 0, 0], group=4)
    sites: list[str] = [wrist.name]
    joints = [f"{side}_thumb_{j}" for j in THUMB_JOINTS]
    tips = [_thumb(palm, fr, side, hp, sites)]
    for finger in hp.fingers:
        tips.append(_finger(palm, fr, side, finger, hp, sites, joints))
    pads = tuple(f"{t.rsplit('_', 1)[0]}_pad" for t in tips)
    return HandLayout(tuple(joints), tuple(sites), tuple(tips), palm.name, pads)
