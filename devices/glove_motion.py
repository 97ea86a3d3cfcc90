"""A realistic synthetic glove stream: smooth grasp / release cycles and a moving wrist.

Used by ``teleop glove-sim`` and the tests, so the whole glove path runs without hardware.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from devices.frame import SIDES, Pose
from devices.glove_protocol import GloveHand
from devices.handmodel import PALM_DOWN, grasp_angles, nominal_wrist
from teleop.core.geometry import quat_axis_angle, quat_mul
from teleop.core.seeding import stable_rng


@dataclass(frozen=True)
class GloveMotion:
    """Hands as a function of time. ``period``: seconds per grasp-and-release cycle;
    ``engage_after``: the button reports engaged from then on (s); ``tracker``: send wrist poses."""
    period: float = 4.0
    engage_after: float = 1.0
    tracker: bool = True
    seed: int = 0

    def hands(self, t: float) -> dict[str, GloveHand]:
        rng = stable_rng("glove-motion", self.seed)
        phases = rng.uniform(0, 0.3, size=2)
        out = {}
        for i, side in enumerate(SIDES):
            # Smooth closure: a raised cosine with a dwell at both ends (grasp, hold, release).
            x = np.sin(2 * np.pi * (t / self.period + phases[i]))
            closure = 0.5 + 0.5 * np.tanh(2.5 * x) / np.tanh(2.5)
            angles = grasp_angles(closure, spread=0.3 * np.cos(2 * np.pi * t / 7.0))
            out[side] = GloveHand(angles, self._wrist(side, t, phases[i]) if self.tracker else None)
        return out

    def _wrist(self, side: str, t: float, phase: float) -> Pose:
        base = nominal_wrist(side).position
        w = 2 * np.pi * (t / 6.0 + phase)
        # A slow figure-eight in the horizontal plane with a small bob, and a gentle roll.
        offset = np.array([0.08 * np.sin(w), 0.06 * np.sin(2 * w), 0.04 * np.sin(w + 1.0)])
        roll = quat_axis_angle([1.0, 0.0, 0.0], 0.25 * np.sin(w))
        return Pose(base + offset, quat_mul(roll, PALM_DOWN))

    def engaged(self, t: float) -> bool:
        return t >= self.engage_after
