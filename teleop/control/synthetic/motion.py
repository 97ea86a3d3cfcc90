"""Keyframe timelines: minimum-jerk position, slerped orientation, grip in [0, 1]."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from teleop.core.geometry import mat_to_quat, quat_to_mat

SPEED = 0.35            # m/s: an unhurried reach
MIN_MOVE_S = 0.4        # s: no move, however short, is quicker than a person's


@dataclass(frozen=True)
class Key:
    t: float                 # seconds from the episode start
    pos: np.ndarray          # (3,) palm (wrist site) position, robot world
    rot: np.ndarray          # (3, 3) palm rotation, robot world
    grip: float              # 0 = open hand, 1 = fully closed grasp
    grasp: str               # name of the grasp synergy in use


def min_jerk(s: np.ndarray) -> np.ndarray:
    """The minimum-jerk profile 10 s^3 - 15 s^4 + 6 s^5 on [0, 1]: a person's reach."""
    s = np.clip(s, 0.0, 1.0)
    return s ** 3 * (10 - 15 * s + 6 * s * s)


def slerp(q0: np.ndarray, q1: np.ndarray, s: float) -> np.ndarray:
    dot = float(np.dot(q0, q1))
    if dot < 0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + s * (q1 - q0)
        return q / np.linalg.norm(q)
    theta = np.arccos(dot)
    return (np.sin((1 - s) * theta) * q0 + np.sin(s * theta) * q1) / np.sin(theta)


class Timeline:
    """Piecewise minimum-jerk interpolation between keys (held after the last one)."""

    def __init__(self, keys: list[Key]):
        if not keys:
            raise ValueError("a timeline needs at least one key")
        self.keys = sorted(keys, key=lambda k: k.t)
        self.times = np.array([k.t for k in self.keys])
        self._quats = [mat_to_quat(k.rot) for k in self.keys]

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    def sample(self, t: float) -> tuple[np.ndarray, np.ndarray, float, str]:
        """(palm position (3,), palm rotation (3, 3), grip, grasp name) at time ``t``."""
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        if i < 0:
            k = self.keys[0]
            return k.pos, k.rot, k.grip, k.grasp
        if i >= len(self.keys) - 1:
            k = self.keys[-1]
            return k.pos, k.rot, k.grip, k.grasp
        a, b = self.keys[i], self.keys[i + 1]
        s = float(min_jerk(np.array((t - a.t) / max(b.t - a.t, 1e-9))))
        pos = a.pos + s * (b.pos - a.pos)
        rot = quat_to_mat(slerp(self._quats[i], self._quats[i + 1], s))
        grasp = b.grasp if b.grip >= a.grip else a.grasp
        return pos, rot, a.grip + s * (b.grip - a.grip), grasp


class SidePlan:
    """One hand's keyframes, appended step by step."""

    def __init__(self, start: Key):
        self.keys = [start]

    @property
    def last(self) -> Key:
        return self.keys[-1]

    @property
    def t(self) -> float:
        return self.last.t

    def go(self, pos=None, rot=None, grip=None, grasp=None, duration=None) -> None:
        last = self.last
        pos = last.pos if pos is None else np.asarray(pos, float)
        if duration is None:
            duration = max(MIN_MOVE_S, float(np.linalg.norm(pos - last.pos)) / SPEED)
        self.keys.append(Key(last.t + duration, pos, last.rot if rot is None else rot,
                             last.grip if grip is None else grip, last.grasp if grasp is None else grasp))

    def wait(self, seconds: float) -> None:
        self.go(duration=seconds)
