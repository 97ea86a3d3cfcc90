"""Operator profile (body measurements) and its calibration from a short pose sequence.

Frames: the operator frame is z up, x forward, y left (devices convert to it). Shoulder offsets
are given in the head's *yaw* frame (head position, rotated only by the head's heading), so nodding
or tilting the head does not move the shoulder anchors.
"""
from __future__ import annotations

import dataclasses
from typing import Any
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from retarget.nodes import SIDES, RetargetInputError
from teleop.core.errors import ConfigError, choices
from teleop.core.yamlio import load_yaml

POSES = {"t_pose": {"left": (0.0, 1.0, 0.0), "right": (0.0, -1.0, 0.0)},
         "arms_forward": {"left": (1.0, 0.0, 0.0), "right": (1.0, 0.0, 0.0)}}
UPPER_ARM_FRACTION = 0.53       # of shoulder->wrist length, when elbows are not tracked


@dataclass(frozen=True)
class OperatorProfile:
    """Per-operator measurements (metres), used by the arm scaling and the hand scaling."""

    name: str = "default"
    upper_arm: float = 0.30                                   # shoulder -> elbow
    forearm: float = 0.27                                     # elbow -> wrist
    shoulder_left: tuple[float, float, float] = (-0.05, 0.18, -0.25)    # head yaw frame
    shoulder_right: tuple[float, float, float] = (-0.05, -0.18, -0.25)
    hand_length: float = 0.189                               # wrist -> middle tip along the finger

    def __post_init__(self):
        for field in ("upper_arm", "forearm", "hand_length"):
            value = getattr(self, field)
            if not (np.isfinite(value) and 0.03 < value < 1.0):
                raise ConfigError(f"operator profile {self.name!r}: {field} = {value!r} m is not plausible")
        for field in ("shoulder_left", "shoulder_right"):
            value = getattr(self, field)
            if len(value) != 3 or not np.all(np.isfinite(value)):
                raise ConfigError(f"operator profile {self.name!r}: {field} must be 3 finite numbers")

    @property
    def arm_length(self) -> float:
        return self.upper_arm + self.forearm

    def shoulder(self, side: str) -> np.ndarray:
        return np.asarray(self.shoulder_left if side == "left" else self.shoulder_right, float)

    def save(self, path: str | Path) -> None:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
        Path(path).write_text(yaml.safe_dump(data, sort_keys=False))

    @classmethod
    def load(cls, path: str | Path) -> OperatorProfile:
        raw = load_yaml(path, "operator profile")
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in raw if k not in valid]
        if unknown:
            raise ConfigError(f"{path}: unknown field {unknown[0]!r}; valid: {choices(valid)}")
        kwargs: dict[str, Any] = {k: tuple(float(x) for x in v) if isinstance(v, list) else v
                                  for k, v in raw.items()}
        try:
            return cls(**kwargs)
        except ConfigError as exc:
            raise ConfigError(f"{path}: {exc}") from exc


DEFAULT_PROFILE = OperatorProfile()


@dataclass(frozen=True)
class CalibrationSample:
    """One held pose: head pose, wrist positions (and optionally elbows and hand nodes)."""

    pose: str                                  # a key of POSES
    head_pos: np.ndarray                       # (3,) operator frame
    head_rot: np.ndarray                       # (3, 3) columns = head axes
    wrists: dict                               # side -> (3,)
    elbows: dict | None = None                 # side -> (3,)
    hands: dict | None = None                  # side -> nodes (21, 3)


def yaw_frame(head_rot) -> np.ndarray:
    """The head's heading as a rotation about z (3, 3): pitch and roll removed."""
    fwd = np.asarray(head_rot, float)[:, 0]
    yaw = np.arctan2(fwd[1], fwd[0])
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def finger_length(nodes, chain=(0, 9, 10, 11, 12)) -> float:
    """Sum of segment lengths wrist -> middle MCP -> PIP -> DIP -> tip (pose independent)."""
    pts = np.asarray(nodes, float)[list(chain)]
    return float(np.linalg.norm(np.diff(pts, axis=0), axis=1).sum())


def _fit_side(samples, side):
    """Least squares for shoulder S (3,) and reach L: wrist_i = S + L d_i (head yaw frame)."""
    rows, rhs, dirs = [], [], set()
    for s in samples:
        d = np.asarray(POSES[s.pose][side])
        dirs.add(s.pose)
        local = yaw_frame(s.head_rot).T @ (np.asarray(s.wrists[side], float) - s.head_pos)
        rows.append(np.column_stack([np.eye(3), d]))
        rhs.append(local)
    if len(dirs) < 2:
        raise RetargetInputError(f"calibration needs at least two different poses ({choices(list(POSES))}), "
                                 f"got only {sorted(dirs)}")
    sol, *_ = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)
    return sol[:3], float(sol[3])


def _vec3(v) -> tuple[float, float, float]:
    x, y, z = (float(c) for c in v)
    return x, y, z


def calibrate(samples: list[CalibrationSample], name: str = "calibrated") -> OperatorProfile:
    """Fit a profile from held poses (e.g. one T-pose and one arms-forward sample, arms straight)."""
    for i, s in enumerate(samples):
        if s.pose not in POSES:
            raise RetargetInputError(f"calibration sample {i}: unknown pose {s.pose!r}; valid: {choices(list(POSES))}")
        for side in SIDES:
            if side not in s.wrists or not np.all(np.isfinite(s.wrists[side])):
                raise RetargetInputError(f"calibration sample {i}: {side} wrist missing or not finite")
    fits = {side: _fit_side(samples, side) for side in SIDES}
    reach = float(np.mean([fits[s][1] for s in SIDES]))
    with_elbows = [s for s in samples if s.elbows]
    if with_elbows:
        elbows = [(s, s.elbows) for s in with_elbows if s.elbows]          # (narrowed for the type checker)
        upper = float(np.mean([np.linalg.norm(yaw_frame(s.head_rot).T @ (np.asarray(e[side]) - s.head_pos)
                                              - fits[side][0]) for s, e in elbows for side in SIDES]))
        forearm = float(np.mean([np.linalg.norm(np.asarray(s.wrists[side]) - e[side])
                                 for s, e in elbows for side in SIDES]))
    else:
        upper, forearm = UPPER_ARM_FRACTION * reach, (1 - UPPER_ARM_FRACTION) * reach
    hands = [finger_length(h[side]) for h in (s.hands for s in samples) if h for side in SIDES if side in h]
    hand_length = float(np.median(hands)) if hands else DEFAULT_PROFILE.hand_length
    return OperatorProfile(name=name, upper_arm=float(upper), forearm=float(forearm),
                           shoulder_left=_vec3(fits["left"][0]), shoulder_right=_vec3(fits["right"][0]),
                           hand_length=hand_length)
