"""The glove's kinematic model: 20 joint angles -> the 21 glove nodes of a human-sized hand.

Per digit (thumb, index, middle, ring, little) four angles, in this order:
    abduction (about the digit's palm-normal axis, + toward the thumb side),
    base flexion (thumb CMC / finger MCP), middle flexion (thumb MCP / finger PIP),
    distal flexion (thumb IP / finger DIP).
Flexion is POSITIVE when the digit curls toward the palm (anatomical convention; the robot's
joints use the opposite sign, which is the retargeter's business, not the glove's).

Geometry (right hand, palm frame, metres): wrist at the origin, z toward the fingers, y toward
the thumb, x out of the palm side. Proportions: wrist to middle tip 18.9 cm (a captured WebXR
relaxed pose), finger segments proximal : middle : distal = 1 : 0.62 : 0.45 (kinematics.md).
The left hand is the mirror image (y -> -y) of the same angles.
"""
from __future__ import annotations

import numpy as np

from devices.frame import NUM_NODES, Pose
from teleop.core.geometry import quat_to_mat

NUM_ANGLES = 20
DIGITS = ("thumb", "index", "middle", "ring", "little")
ANGLE_NAMES = tuple(f"{d}_{j}" for d in DIGITS for j in ("abd", "flex1", "flex2", "flex3"))
# Valid ranges (rad) a glove may report; packets outside are rejected as "range".
ABDUCTION_RANGE = (-0.7, 0.7)
FLEXION_RANGE = (-0.7, 2.3)
SEGMENT_RATIOS = np.array([1.0, 0.62, 0.45])


def _unit(v) -> np.ndarray:
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _digit_frame(z_dir, x_hint) -> np.ndarray:
    """Rest frame (3, 3) of a digit: z along it, x toward the palm side (flexion direction)."""
    z = _unit(z_dir)
    x = _unit(np.asarray(x_hint, float) - np.dot(x_hint, z) * z)
    return np.column_stack([x, np.cross(z, x), z])


def _rot_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_y(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


# base position (m), rest frame, segment lengths (m) per digit, right hand palm frame
_BASES = np.array([[0.012, 0.022, 0.025], [0.0, 0.024, 0.088], [0.0, 0.004, 0.094],
                   [0.002, -0.014, 0.088], [0.005, -0.031, 0.078]])
_FRAMES = np.stack([
    _digit_frame([0.25, 0.72, 0.65], [0.75, -0.55, 0.1]),     # thumb: out and forward
    _digit_frame([0.0, 0.08, 1.0], [1, 0, 0]),                # fingers splay slightly
    _digit_frame([0.0, 0.0, 1.0], [1, 0, 0]),
    _digit_frame([0.0, -0.07, 1.0], [1, 0, 0]),
    _digit_frame([0.0, -0.16, 1.0], [1, 0, 0]),
])
_LENGTHS = np.vstack([[0.046, 0.032, 0.027],
                      *(p * SEGMENT_RATIOS for p in (0.042, 0.046, 0.043, 0.034))])


def angle_limits() -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds (20,) of the glove angles."""
    lo = np.tile([ABDUCTION_RANGE[0]] + [FLEXION_RANGE[0]] * 3, 5)
    hi = np.tile([ABDUCTION_RANGE[1]] + [FLEXION_RANGE[1]] * 3, 5)
    return lo, hi


def local_nodes(angles: np.ndarray, side: str) -> np.ndarray:
    """Node positions (21, 3) in the hand's palm frame for ``angles`` (20,)."""
    a = np.asarray(angles, float).reshape(5, 4)
    nodes = np.zeros((NUM_NODES, 3))
    for d in range(5):
        rot = _FRAMES[d] @ _rot_x(-a[d, 0]) @ _rot_y(a[d, 1])
        p = _BASES[d].copy()
        nodes[1 + 4 * d] = p
        for s in range(3):
            if s:
                rot = rot @ _rot_y(a[d, 1 + s])
            p = p + rot[:, 2] * _LENGTHS[d, s]
            nodes[2 + 4 * d + s] = p
    if side == "left":
        nodes[:, 1] *= -1.0
    return nodes


def world_nodes(angles: np.ndarray, side: str, wrist: Pose) -> np.ndarray:
    """Node positions (21, 3) in the operator frame for a wrist ``Pose``."""
    return wrist.position + local_nodes(angles, side) @ quat_to_mat(wrist.quat).T


# Nominal wrist poses when a glove has no tracker: hands 35 cm ahead at chest height, palms down,
# fingers forward. Palm frame columns x = (0,0,-1), y = (0,1,0), z = (1,0,0): a quarter turn about
# y; the same for both hands because the left hand's node model is already mirrored.
PALM_DOWN = np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5), 0.0])


def nominal_wrist(side: str) -> Pose:
    y = 0.2 if side == "left" else -0.2
    return Pose(np.array([0.35, y, 1.2]), PALM_DOWN)


def grasp_angles(closure: float, spread: float = 0.0) -> np.ndarray:
    """A natural power-grasp posture (20,) for ``closure`` in [0, 1] (0 open, 1 closed)."""
    c = float(np.clip(closure, 0.0, 1.0))
    thumb = [0.25 - 0.2 * c, 0.15 + 0.55 * c, 0.1 + 0.5 * c, 0.1 + 0.6 * c]
    finger = [0.0, 0.1 + 1.2 * c, 0.15 + 1.3 * c, 0.1 + 0.8 * c]
    out = np.array(thumb + finger * 4)
    out[[4, 8, 12, 16]] = np.array([0.08, 0.0, -0.06, -0.12]) * (1.0 + spread)
    return out
