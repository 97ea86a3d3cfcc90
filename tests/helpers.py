"""Test helpers: a small damped-least-squares IK for placing a palm, and scripted grasps."""
from __future__ import annotations

import time

import mujoco
import numpy as np

from teleop.sim import Sim


def arm_ik(sim: Sim, side: str, pos, rot, q0=None, iters: int = 200) -> np.ndarray:
    """7 arm joint values putting the ``side`` wrist site at ``pos`` (3,) with rotation ``rot`` (3, 3)."""
    m = sim.model
    d = mujoco.MjData(m)
    d.qpos[:] = sim.data.qpos
    names = sim.scene.layout.arm_joints[side]
    qa = np.array([m.joint(n).qposadr[0] for n in names])
    da = np.array([m.joint(n).dofadr[0] for n in names])
    lo, hi = m.jnt_range[[m.joint(n).id for n in names]].T
    if q0 is not None:
        d.qpos[qa] = q0
    sid = m.site(sim.scene.layout.ee_sites[side]).id
    jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
    for _ in range(iters):
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        cur = d.site_xmat[sid].reshape(3, 3)
        err = np.concatenate([np.asarray(pos) - d.site_xpos[sid],
                              0.5 * sum(np.cross(cur[:, i], rot[:, i]) for i in range(3))])
        if np.linalg.norm(err) < 1e-7:
            break
        mujoco.mj_jacSite(m, d, jp, jr, sid)
        jac = np.vstack([jp[:, da], jr[:, da]])
        step = jac.T @ np.linalg.solve(jac @ jac.T + 1e-5 * np.eye(6), err)
        d.qpos[qa] = np.clip(d.qpos[qa] + step, lo + 1e-4, hi - 1e-4)
    return d.qpos[qa].copy()


def palm_down_rotation(side: str, pitch: float = 0.0) -> np.ndarray:
    """Palm facing the table, fingers pointing forward (+x), tipped down by ``pitch`` rad."""
    z = np.array([np.cos(pitch), 0.0, -np.sin(pitch)])
    x = np.array([-np.sin(pitch), 0.0, -np.cos(pitch)])
    return np.column_stack([x, np.cross(z, x), z])


def hand_indices(sim: Sim, side: str) -> np.ndarray:
    names = sim.scene.layout.action_joints
    return np.array([i for i, n in enumerate(names) if n in set(sim.scene.layout.hands[side].joints)])


def arm_indices(sim: Sim, side: str) -> np.ndarray:
    names = sim.scene.layout.action_joints
    return np.array([names.index(n) for n in sim.scene.layout.arm_joints[side]])


def hand_pose(sim: Sim, side: str, values: dict[str, float]) -> np.ndarray:
    """22 hand targets from {joint suffix: value}; unspecified joints are 0."""
    joints = sim.scene.layout.hands[side].joints
    out = np.zeros(len(joints))
    for i, name in enumerate(joints):
        local = name.removeprefix(f"{side}_")
        digit, _, joint = local.partition("_")
        out[i] = values.get(local, values.get(joint, 0.0) if digit != "thumb" else 0.0)
    return out


POWER_GRASP = {"thumb_cmc_flex": -1.3, "thumb_cmc_abd": 0.2, "thumb_mcp_flex": -0.6, "thumb_ip": -0.8,
               "mcp_flex": -1.1, "pip": -1.3, "dip": -0.9, "palm_arch": -0.2}
OPEN_HAND = {"thumb_cmc_flex": -0.9, "thumb_cmc_abd": -0.2, "mcp_flex": 0.0, "pip": -0.1, "dip": -0.05}


def run_segment(sim: Sim, start: np.ndarray, end: np.ndarray, seconds: float, step=None) -> np.ndarray:
    """Interpolate targets linearly from start to end over ``seconds`` of control ticks.

    ``step(action)`` defaults to ``sim.step``; pass a task runtime's or a recorder's to score/record.
    """
    step = step or sim.step
    n = max(1, int(round(seconds * sim.scene.params.physics.control_hz)))
    for k in range(1, n + 1):
        step(start + (end - start) * k / n)
    return end


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.01) -> bool:
    """Poll ``predicate`` until it is true (True) or ``timeout`` seconds pass (False)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(interval)
    return False
