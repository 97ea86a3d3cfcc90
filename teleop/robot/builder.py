"""Assemble the bimanual robot and its workspace (table, cameras, lights) into one MjSpec."""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.core.conventions import SIDES
from teleop.core.geometry import look_at_quat, mat_to_quat, quat_axis_angle, quat_mul
from teleop.robot.arm import build_arm
from teleop.robot.hand import ROBOT_BITS, HandLayout, build_hand
from teleop.robot.params import RobotParams

WORLD_COLLISION = dict(contype=1, conaffinity=1 | ROBOT_BITS)   # objects and fixtures touch everything
INTEGRATOR = {"euler": mujoco.mjtIntegrator.mjINT_EULER, "implicit": mujoco.mjtIntegrator.mjINT_IMPLICIT,
              "implicitfast": mujoco.mjtIntegrator.mjINT_IMPLICITFAST, "rk4": mujoco.mjtIntegrator.mjINT_RK4}
CONE = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}


@dataclass(frozen=True)
class RobotLayout:
    """Names of everything the rest of the application addresses, in a fixed order."""

    arm_joints: dict[str, tuple[str, ...]]     # side -> 7 names
    hands: dict[str, HandLayout]               # side -> hand layout
    cameras: tuple[str, ...]                   # head, left_wrist, right_wrist
    ee_sites: dict[str, str]                   # side -> wrist site (end-effector pose)

    def ready_qpos(self, params: RobotParams) -> dict[str, float]:
        """Joint name -> value of the episode start pose (``ready`` in the parameter file)."""
        out = {}
        for side in SIDES:
            out.update(zip(self.arm_joints[side], params.ready[f"{side}_arm"]))
            hand = params.ready["hand"]
            for name in self.hands[side].joints:
                local = name.removeprefix(f"{side}_")            # e.g. thumb_ip, index_pip
                digit, _, joint = local.partition("_")
                value = hand.get(local, hand.get(joint) if digit != "thumb" else None)
                if value is not None:
                    out[name] = value
        return out

    @property
    def action_joints(self) -> tuple[str, ...]:
        """58 joint names: left arm 7, right arm 7, left hand 22, right hand 22."""
        return (*self.arm_joints["left"], *self.arm_joints["right"],
                *self.hands["left"].joints, *self.hands["right"].joints)

    @property
    def action_dim(self) -> int:
        """Length of an action: one target per action joint (58 on the shipped robot)."""
        return len(self.action_joints)

    @property
    def obs_dim(self) -> int:
        """Length of an observation: qpos and qvel of each action joint, then per wrist site its
        position (3) and quaternion (4) (130 on the shipped robot; see ``Sim.observation``)."""
        return 2 * self.action_dim + 7 * len(self.ee_sites)


def _options(spec: mujoco.MjSpec, params: RobotParams) -> None:
    ph = params.physics
    spec.modelname = "bidex_bimanual"
    spec.compiler.degree = False          # every angle in the parameter file is in radians
    spec.option.timestep = ph.timestep
    spec.option.integrator = INTEGRATOR[ph.integrator]
    spec.option.cone = CONE[ph.cone]
    spec.option.impratio = ph.impratio
    spec.visual.global_.offwidth = 1280
    spec.visual.global_.offheight = 960
    spec.stat.center = [0.4, 0.0, 0.9]
    spec.stat.extent = 1.2


def _workspace(spec: mujoco.MjSpec, params: RobotParams) -> None:
    world, t = spec.worldbody, params.table
    world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[3, 3, 0.05],
                   rgba=[0.55, 0.57, 0.6, 1], **WORLD_COLLISION)
    world.add_light(name="key", pos=[0.3, 0.0, 2.5], dir=[0.1, 0, -1], diffuse=[0.7, 0.7, 0.7],
                    castshadow=False)
    world.add_light(name="fill", pos=[1.5, 1.0, 2.0], dir=[-0.5, -0.4, -0.8], diffuse=[0.3, 0.3, 0.3],
                    castshadow=False)
    table = world.add_body(name="table", pos=[t.center[0], t.center[1], t.top_z - t.thickness / 2])
    table.add_geom(name="table_top", type=mujoco.mjtGeom.mjGEOM_BOX,
                   size=[t.half_size[0], t.half_size[1], t.thickness / 2], rgba=[0.72, 0.6, 0.45, 1],
                   friction=list(t.friction), **WORLD_COLLISION)
    leg_h = (t.top_z - t.thickness) / 2
    for i, (sx, sy) in enumerate([(1, 1), (1, -1), (-1, 1), (-1, -1)]):
        table.add_geom(name=f"table_leg{i}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.025, 0.025, leg_h],
                       pos=[sx * (t.half_size[0] - 0.04), sy * (t.half_size[1] - 0.04), -t.thickness / 2 - leg_h],
                       rgba=[0.4, 0.32, 0.25, 1], contype=0, conaffinity=0)
    # Pedestal carrying both arm bases, just behind the table.
    z = params.mounts["left"]["pos"][2]
    world.add_geom(name="pedestal", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.12, 0.45, z / 2],
                   pos=[params.mounts["left"]["pos"][0] - 0.02, 0, z / 2], rgba=[0.3, 0.3, 0.32, 1],
                   contype=0, conaffinity=0)


def _cameras(spec: mujoco.MjSpec, params: RobotParams, palms: dict[str, object]) -> tuple[str, ...]:
    head = params.cameras["head"]
    spec.worldbody.add_camera(name="head", pos=list(head["pos"]), fovy=head["fovy"],
                              quat=list(look_at_quat(head["pos"], head["lookat"])))
    wrist = params.cameras["wrist"]
    # Wrist cameras sit on the back of the hand and look along the fingers (palm +z), with the
    # back of the hand (-x) as image up.
    # The camera is tilted by tilt_deg toward the palm side so it sees what the fingers hold.
    rot = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
    quat = quat_mul(quat_axis_angle((0, -1, 0), -np.deg2rad(wrist["tilt_deg"])), mat_to_quat(rot))
    for side in SIDES:
        palms[side].add_camera(name=f"{side}_wrist", pos=list(wrist["pos"]), fovy=wrist["fovy"],
                               quat=list(quat))
    return ("head", "left_wrist", "right_wrist")


def _actuators(spec: mujoco.MjSpec, params: RobotParams, layout: RobotLayout) -> None:
    ap, hp = params.arm, params.hand
    gains = {}
    for side in SIDES:
        for name, link in zip(layout.arm_joints[side], ap.links):
            gains[name] = (link.kp, link.kp * ap.kv_ratio, link.torque)
        for name in layout.hands[side].joints:
            gains[name] = (hp.kp, hp.kv, hp.force_limit)
    for name in layout.action_joints:
        kp, kv, force = gains[name]
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = kp
        act.biasprm[0:3] = [0.0, -kp, -kv]
        act.inheritrange = 1.0           # ctrlrange = the joint's range
        act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.forcerange = [-force, force]


def build_robot_spec(params: RobotParams) -> tuple[mujoco.MjSpec, RobotLayout]:
    """A fresh MjSpec with the workspace and both arms + hands, ready for objects to be added."""
    spec = mujoco.MjSpec()
    _options(spec, params)
    _workspace(spec, params)
    arms, hands, palms = {}, {}, {}
    for side in SIDES:
        arms[side], flange = build_arm(spec.worldbody, side, params.mounts[side]["pos"], params.arm)
        hands[side] = build_hand(flange, side, params.hand, mirrored=(side == "left"),
                                 yaw_deg=params.mounts[side]["hand_yaw_deg"])
        palms[side] = spec.body(hands[side].palm_body)
    cameras = _cameras(spec, params, palms)
    layout = RobotLayout(arms, hands, cameras, {s: hands[s].keypoints[0] for s in SIDES})
    _actuators(spec, params, layout)
    return spec, layout
