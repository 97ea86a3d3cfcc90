"""Headset -> server messages (JSON text): validation and WebXR -> operator frame conversion.

A frame message (protocol version 1)::

    {"type": "frame", "v": 1, "seq": 12, "t": 1234.5,          # t: XR display time, seconds
     "head": [x, y, z, qx, qy, qz, qw] | null,                 # viewer pose, WebXR reference space
     "hands": {"left": {"joints": [175 numbers: 25 x (x y z qx qy qz qw)],
                        "tracked": [25 bools], "emulated": [25 bools]}, "right": ...},
     "engage": false}

Other messages: ``{"type": "ack", "what": "scene"|"poses"|"hud", "seq": n, "count": n}``,
``{"type": "hello", "v": 1, "agent": "..."}`` and an operator action (a HUD button pinched)
``{"type": "action", "name": "accept", "arg": null}`` with ``name`` one of
``teleop.core.conventions.OPERATOR_ACTIONS`` and ``arg`` null, a number or a short text.
Anything else is dropped with a counted reason.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from devices.frame import NUM_NODES, SIDES, HandFrame, OperatorFrame, Pose
from teleop.core.conventions import OPERATOR_ACTIONS
from teleop.core.errors import TeleopError, choices
from teleop.core.geometry import mat_to_quat

PROTOCOL_VERSION = 1
NUM_JOINTS = 25
MAX_MESSAGE_BYTES = 1 << 20
MAX_POSITION = 10.0             # m from the reference-space origin
QUAT_TOLERANCE = 0.05
MAX_INT_DIGITS = 15             # every integer of the protocol fits; 10**400 would overflow a float
# Why a message was dropped (docs/headset.md). The server adds "not_active" (a message from a
# connection that is no longer the headset in use) and "internal" (a bug, logged rate-limited).
DROP_REASONS = ("binary", "too_large", "json", "nonfinite", "type", "schema", "range", "quaternion", "action")
MAX_ACTION_ARG_CHARS = 200      # a reject reason with details; anything longer is not a person's text

# WebXR (x right, y up, -z forward) -> operator (x forward, y left, z up): op = C @ xr.
C_XR_TO_OP = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
# WebXR joint axes (-z along the bone, +y out of the back of the hand) -> palm frame
# (z toward the fingers, x out of the palm side, y toward the thumb on a right hand).
P_JOINT_TO_PALM = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])


class MessageError(TeleopError):
    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class Ack:
    what: str
    seq: int
    count: int


def select_nodes(joints: np.ndarray) -> np.ndarray:
    """The 21 glove nodes from the 25 WebXR joints, by selection. ``joints`` (25, ...).

    Wrist; thumb metacarpal (CMC), proximal (MCP), distal (IP), tip; then per finger the
    proximal phalanx joint (at the MCP knuckle), intermediate (PIP), distal (DIP) and tip. The
    finger metacarpal joints (inside the palm) are skipped. Swap this function for a richer map.
    """
    return joints[NODE_FROM_JOINT]


NODE_FROM_JOINT = np.array([0, 1, 2, 3, 4, 6, 7, 8, 9, 11, 12, 13, 14, 16, 17, 18, 19,
                            21, 22, 23, 24])
assert NODE_FROM_JOINT.size == NUM_NODES


def _reject_constant(name: str):
    raise MessageError("nonfinite", f"JSON literal {name}")


def _bounded_int(text: str) -> int:
    # Checked on the digits before conversion: a huge integer is refused in O(length), and it
    # never reaches numpy (OverflowError) or math.isfinite (OverflowError) further down.
    if len(text) - text.startswith("-") > MAX_INT_DIGITS:
        raise MessageError("range", f"integer with {len(text)} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def load_json(text) -> dict:
    """Parse a websocket message into a dict, or raise ``MessageError``."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise MessageError("binary", "binary messages are not part of the protocol")
    if len(text) > MAX_MESSAGE_BYTES:
        raise MessageError("too_large", f"{len(text)} bytes > {MAX_MESSAGE_BYTES}")
    try:
        msg = json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int)
    except (ValueError, RecursionError) as exc:
        raise MessageError("json", str(exc)[:80]) from None
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise MessageError("type", "expected an object with a string 'type'")
    return msg


def _numbers(value, n: int, what: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != n:
        raise MessageError("schema", f"{what}: expected a list of {n} numbers")
    if not all(type(v) in (int, float) for v in value):
        raise MessageError("schema", f"{what}: expected numbers")
    arr = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise MessageError("nonfinite", what)
    return arr


def _bools(value, n: int, what: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != n or not all(type(v) is bool for v in value):
        raise MessageError("schema", f"{what}: expected a list of {n} booleans")
    return np.asarray(value, dtype=bool)


def _poses(flat: np.ndarray, what: str, valid: np.ndarray) -> np.ndarray:
    """(n, 7) WebXR x y z qx qy qz qw checked for range and unit quaternions where ``valid``."""
    poses = flat.reshape(-1, 7)
    if np.any(np.abs(poses[valid, :3]) > MAX_POSITION):
        raise MessageError("range", f"{what}: position beyond {MAX_POSITION} m")
    norms = np.linalg.norm(poses[valid, 3:], axis=1)
    if np.any(np.abs(norms - 1.0) > QUAT_TOLERANCE):
        raise MessageError("quaternion", f"{what}: quaternion norm not 1")
    return poses


Q_XR_TO_OP = mat_to_quat(C_XR_TO_OP)
Q_JOINT_TO_PALM = mat_to_quat(P_JOINT_TO_PALM)
Q_OP_TO_XR = Q_XR_TO_OP * np.array([1.0, -1.0, -1.0, -1.0])


def quat_mul_batch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of wxyz quaternions, broadcast over leading axes: (..., 4)."""
    aw, ax, ay, az = np.moveaxis(np.asarray(a), -1, 0)
    bw, bx, by, bz = np.moveaxis(np.asarray(b), -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


def xr_quats(xyzw: np.ndarray) -> np.ndarray:
    """WebXR (x, y, z, w) orientations (..., 4) -> operator-frame wxyz (C R), normalised."""
    q = quat_mul_batch(Q_XR_TO_OP, xyzw[..., [3, 0, 1, 2]])
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def convert_pose(xr_pose: np.ndarray, local_quat: np.ndarray) -> Pose:
    """A WebXR pose (7,) into the operator frame; ``local_quat`` re-expresses the body's axes."""
    return Pose(C_XR_TO_OP @ xr_pose[:3], quat_mul_batch(xr_quats(xr_pose[3:]), local_quat))


def _hand(side: str, msg) -> HandFrame | None:
    if not isinstance(msg, dict):
        raise MessageError("schema", f"hands.{side}: expected an object")
    present = _bools(msg.get("tracked"), NUM_JOINTS, f"hands.{side}.tracked")
    emulated = _bools(msg.get("emulated", [False] * NUM_JOINTS), NUM_JOINTS, f"hands.{side}.emulated")
    xr = _poses(_numbers(msg.get("joints"), NUM_JOINTS * 7, f"hands.{side}.joints"),
                f"hands.{side}.joints", present)
    if not present[0]:
        return None                       # no wrist: the hand is not usable this frame
    raw = np.zeros((NUM_JOINTS, 7))
    raw[:, :3] = xr[:, :3] @ C_XR_TO_OP.T
    raw[:, 3] = 1.0
    raw[present, 3:] = xr_quats(xr[present, 3:])
    wrist = convert_pose(xr[0], Q_JOINT_TO_PALM)
    # A joint counts as tracked when the API gave a pose that is not an emulated estimate.
    tracked = select_nodes(present & ~emulated)
    keypoints = select_nodes(raw[:, :3]).copy()
    keypoints[~select_nodes(present)] = wrist.position     # placeholders, flagged untracked
    return HandFrame(wrist, keypoints, tracked, bool(present[0] and not emulated[0]), raw)


def _time(msg) -> tuple[int, float]:
    seq, t = msg.get("seq"), msg.get("t")
    if type(seq) is not int or seq < 0 or type(t) not in (int, float) or not math.isfinite(t):
        raise MessageError("schema", "seq must be an int >= 0 and t a finite number")
    if msg.get("v") != PROTOCOL_VERSION:
        raise MessageError("schema", f"protocol version {msg.get('v')!r}, expected {PROTOCOL_VERSION}")
    return seq, float(t)


def parse_frame(msg: dict, received: float, device: str = "webxr") -> OperatorFrame:
    seq, t = _time(msg)
    hands = msg.get("hands")
    if not isinstance(hands, dict) or not set(hands) <= set(SIDES):
        raise MessageError("schema", "hands: expected an object with 'left' / 'right'")
    head = None
    if msg.get("head") is not None:
        xr_head = _poses(_numbers(msg["head"], 7, "head"), "head", np.ones(1, bool))[0]
        head = convert_pose(xr_head, Q_OP_TO_XR)
    engage = msg.get("engage", False)
    if type(engage) is not bool:
        raise MessageError("schema", "engage: expected a boolean")
    parsed = {side: _hand(side, hands[side]) for side in hands if hands[side] is not None}
    return OperatorFrame(t, received, seq, parsed.get("left"), parsed.get("right"), head, engage, device)


def parse_ack(msg: dict) -> Ack:
    what, seq, count = msg.get("what"), msg.get("seq"), msg.get("count", 0)
    if what not in ("scene", "poses", "hud") or type(seq) is not int or type(count) is not int:
        raise MessageError("schema", "ack: expected what in scene/poses/hud and int seq/count")
    return Ack(what, seq, count)


def parse_action(msg: dict) -> tuple[str, object]:
    """An operator action message -> ``(name, arg)``; ``MessageError("action", ...)`` names the
    field that is wrong and what it may be (the server logs it: the page's author reads it)."""
    name, arg = msg.get("name"), msg.get("arg")
    if not isinstance(name, str) or name not in OPERATOR_ACTIONS:
        shown = repr(name)[:40] if name is not None else "missing"
        raise MessageError("action", f"action.name {shown} is not an operator action; "
                                     f"valid: {choices(OPERATOR_ACTIONS)}")
    if arg is None or type(arg) is int:
        return name, arg
    if type(arg) is float:
        if not math.isfinite(arg):
            raise MessageError("action", f"action.arg of {name!r} must be finite")
        return name, arg
    if isinstance(arg, str) and len(arg) <= MAX_ACTION_ARG_CHARS:
        return name, arg
    raise MessageError("action", f"action.arg of {name!r} must be null, a number or a text of at most "
                                 f"{MAX_ACTION_ARG_CHARS} characters, got {type(arg).__name__}")
