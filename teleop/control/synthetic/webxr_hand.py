"""Captured human hands as a headset sends them: iwer's poses -> WebXR joint poses -> frame messages.

``iwer_hand_poses.json`` holds the three hand poses the ``iwer`` WebXR emulator ships (captured
from a person on a Quest headset; extracted verbatim by ``bench/extract_iwer_poses.py``): 25 joint
transforms per pose, of a left hand, in the hand's target-ray space. This module does what iwer
does with them in a browser — mirror x for the right hand, blend two poses by lerping positions
and slerping rotations joint by joint (iwer's ``interpolateMatrix``) — then places the hand in the
XR reference space so its wrist sits at a chosen pose, and writes the headset's ``frame`` message
(``devices/webxr/messages.py``). Tests and the human synthetic operator feed those messages to
``parse_frame``: the same path a real headset's hands take.

Frames: WebXR reference space (x right, y up, -z forward); operator frame (x forward, y left, z up),
``op = C_XR_TO_OP @ xr``. A palm frame (operator frame, the retargeter's convention): z from the
wrist toward the fingers, x out of the palm side, y toward the thumb on a right hand.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from devices.webxr.messages import C_XR_TO_OP, P_JOINT_TO_PALM, PROTOCOL_VERSION
from teleop.core.geometry import mat_to_quat, quat_to_mat

POSES_FILE = Path(__file__).with_name("iwer_hand_poses.json")
POSE_NAMES = ("relaxed", "pinch", "point")
N_JOINTS = 25
MIRROR_X = np.diag([-1.0, 1.0, 1.0, 1.0])


@lru_cache(maxsize=1)
def _raw() -> dict:
    data = json.loads(POSES_FILE.read_text())
    out = {}
    for name, pose in data["poses"].items():
        m = np.asarray(pose["matrices"], float).reshape(N_JOINTS, 4, 4).transpose(0, 2, 1)   # column-major
        m.setflags(write=False)
        out[name] = m
    return out


def captured_pose(name: str, side: str) -> np.ndarray:
    """(25, 4, 4) joint transforms in the target-ray space of a ``side`` hand (iwer's mirroring)."""
    raw = _raw()
    if name not in raw:
        raise KeyError(f"no captured hand pose {name!r}; poses: {', '.join(raw)}")
    m = raw[name]
    return m.copy() if side == "left" else MIRROR_X @ m @ MIRROR_X


def _slerp(q0: np.ndarray, q1: np.ndarray, s: float) -> np.ndarray:
    dot = float(q0 @ q1)
    if dot < 0:
        q1, dot = -q1, -dot
    if dot > 0.9995:
        q = q0 + s * (q1 - q0)
        return q / np.linalg.norm(q)
    th = np.arccos(dot)
    return (np.sin((1 - s) * th) * q0 + np.sin(s * th) * q1) / np.sin(th)


def blend(a: np.ndarray, b: np.ndarray, s: float) -> np.ndarray:
    """Joint-by-joint blend of two poses (25, 4, 4): positions lerped, rotations slerped (as iwer)."""
    out = np.tile(np.eye(4), (N_JOINTS, 1, 1))
    for j in range(N_JOINTS):
        out[j, :3, 3] = a[j, :3, 3] + s * (b[j, :3, 3] - a[j, :3, 3])
        out[j, :3, :3] = quat_to_mat(_slerp(mat_to_quat(a[j, :3, :3]), mat_to_quat(b[j, :3, :3]), s))
    return out


def shape(weights: dict[str, float], side: str) -> np.ndarray:
    """A pose blended from captured ones, e.g. ``{"relaxed": 0.3, "pinch": 0.7}`` (weights sum to 1):
    successive pairwise blends, so two-pose weights give exactly iwer's own interpolation."""
    items = [(k, float(v)) for k, v in weights.items() if v > 0]
    if not items:
        raise ValueError("shape: give at least one positive weight")
    name, acc = items[0]
    pose = captured_pose(name, side)
    for name, w in items[1:]:
        pose = blend(pose, captured_pose(name, side), w / (acc + w))
        acc += w
    return pose


def place(pose: np.ndarray, wrist_pos_op, palm_rot_op) -> np.ndarray:
    """Joint transforms (25, 4, 4) in the XR reference space so the wrist sits at ``wrist_pos_op`` (3,)
    with palm frame ``palm_rot_op`` (3, 3), both in the operator frame."""
    joint_rot_xr = C_XR_TO_OP.T @ np.asarray(palm_rot_op, float) @ P_JOINT_TO_PALM.T
    wrist = np.eye(4)
    wrist[:3, :3], wrist[:3, 3] = joint_rot_xr, C_XR_TO_OP.T @ np.asarray(wrist_pos_op, float)
    return wrist @ np.linalg.inv(pose[0]) @ pose


def joint_list(placed: np.ndarray) -> list[float]:
    """25 x (x y z qx qy qz qw) as the headset page sends them."""
    out = []
    for m in placed:
        w, x, y, z = mat_to_quat(m[:3, :3])
        out += [*map(float, m[:3, 3]), float(x), float(y), float(z), float(w)]
    return out


def frame_message(seq: int, t: float, hands: dict, head_op=(0.0, 0.0, 1.6), engage: bool = False) -> dict:
    """A protocol-v1 ``frame`` message. ``hands``: side -> placed joints (25, 4, 4) or None (not seen);
    the head looks forward (operator +x) from ``head_op`` (operator frame)."""
    msg_hands = {}
    for side, placed in hands.items():
        if placed is not None:
            msg_hands[side] = {"joints": joint_list(placed), "tracked": [True] * N_JOINTS}
    head = [*map(float, C_XR_TO_OP.T @ np.asarray(head_op, float)), 0.0, 0.0, 0.0, 1.0]
    return {"type": "frame", "v": PROTOCOL_VERSION, "seq": int(seq), "t": float(t), "head": head,
            "hands": msg_hands, "engage": bool(engage)}


def palm_nodes(pose: np.ndarray) -> np.ndarray:
    """The captured pose's 25 joint positions (25, 3) in its own wrist frame (WebXR joint axes)."""
    inv = np.linalg.inv(pose[0])
    return (inv[:3, :3] @ pose[:, :3, 3].T).T + inv[:3, 3]


# (joint, parent joint) per anatomical joint whose angle a captured pose defines, WebXR indices.
ANATOMICAL_JOINTS = {
    "thumb_mcp": (2, 1), "thumb_ip": (3, 2),
    **{f"{f}_{j}": (base + k, base + k - 1) for f, base in (("index", 6), ("middle", 11), ("ring", 16),
                                                            ("little", 21))
       for k, j in enumerate(("mcp", "pip", "dip"))},
}


def joint_angles(pose: np.ndarray) -> dict[str, tuple[float, float]]:
    """Anatomical (flexion, abduction) in radians of a pose's (25, 4, 4) joints: each joint's frame
    relative to its parent's (WebXR axes: -z along the bone, +y out of the back of the hand), the
    bone's direction split into flexion (toward the palm, +) and sideways deviation."""
    out = {}
    for name, (j, parent) in ANATOMICAL_JOINTS.items():
        d = pose[parent, :3, :3].T @ pose[j, :3, :3] @ np.array([0.0, 0.0, -1.0])
        out[name] = (float(np.arctan2(-d[1], -d[2])), float(np.arctan2(d[0], np.hypot(d[1], d[2]))))
    return out
