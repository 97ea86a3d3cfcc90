"""Synthetic operators for tests and benchmarks: robot motion turned into human-like input.

A robot joint vector (58,) is put through MuJoCo FK, and the resulting palm poses and keypoints
are mapped back through the exact inverse of the retargeter's scaling, so the true answer is known.
Noise and a different operator hand size make the stream "human-like"; the trajectories are
smooth sums of sinusoids around the ready pose.
"""
from __future__ import annotations

import mujoco
import numpy as np

from retarget.bimanual import BimanualRetargeter, HandInput, OperatorInput
from teleop.core.conventions import SIDES

HEAD_POS = np.array([0.0, 0.0, 1.60])


class RobotToHuman:
    """Inverse of a retargeter's mapping: robot joint vectors -> :class:`OperatorInput`."""

    def __init__(self, retargeter: BimanualRetargeter, scene):
        self.rt, self.scene = retargeter, scene
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        layout = scene.layout
        self.qadr = np.array([self.model.joint(n).qposadr[0] for n in layout.action_joints])
        self.sites = {s: np.array([self.model.site(n).id for n in layout.hands[s].keypoints]) for s in SIDES}
        self.palm = {s: self.model.site(layout.ee_sites[s]).id for s in SIDES}

    def robot_keypoints(self, q58: np.ndarray) -> dict:
        """side -> (palm position (3,), palm rotation (3, 3), world keypoints (21, 3))."""
        self.data.qpos[self.qadr] = q58
        mujoco.mj_kinematics(self.model, self.data)
        d = self.data
        return {s: (d.site_xpos[self.palm[s]].copy(), d.site_xmat[self.palm[s]].reshape(3, 3).copy(),
                    d.site_xpos[self.sites[s]].copy()) for s in SIDES}

    def operator_input(self, q58: np.ndarray, noise_m: float = 0.0, rng=None,
                       head_rot: np.ndarray | None = None) -> OperatorInput:
        rt = self.rt
        head_rot = np.eye(3) if head_rot is None else head_rot
        hands = {}
        for side, (p, R, kp) in self.robot_keypoints(q58).items():
            wrist = rt.operator_wrist(side, p, HEAD_POS, head_rot)
            local = (kp - p) @ R / rt.hand_scale(side)
            human = wrist + local @ (rt.rot.T @ R).T
            if noise_m > 0:
                human = human + rng.normal(0.0, noise_m, human.shape)
            hands[side] = HandInput(human)
        return OperatorInput(HEAD_POS.copy(), head_rot, hands)


def smooth_trajectory(scene, ticks: int, rng, amplitude: float = 0.25, hz: float = 0.3) -> np.ndarray:
    """(ticks, 58) smooth joint trajectories around the ready pose, inside the joint ranges.

    Each joint is a sum of three sinusoids (random phases, frequencies up to ``hz``, sampled at control ticks);
    hand joints swing over ``amplitude`` of their range, arm joints over a quarter of that in rad.
    """
    layout, model = scene.layout, scene.model
    ready = layout.ready_qpos(scene.params)
    names = layout.action_joints
    lo, hi = np.array([model.joint(n).range for n in names]).T
    centre = np.array([ready.get(n, 0.0) for n in names])
    is_arm = np.array(["_arm_" in n for n in names])
    span = np.where(is_arm, amplitude, amplitude * (hi - lo))
    t = np.arange(ticks)[:, None] / scene.params.physics.control_hz
    q = np.zeros((ticks, len(names)))
    for _ in range(3):
        f = rng.uniform(0.05, hz, len(names))
        q += np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi, len(names))) / 3
    return np.clip(centre + span * q, lo + 1e-3, hi - 1e-3)
