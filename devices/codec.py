"""OperatorFrame <-> flat float64 vector, for take files and the replay device.

Columns (198): timestamp, received, sequence, engage, head present, head position (3), head quat (4),
then per hand (left, right): present, wrist_tracked, wrist position (3), wrist quat (4),
keypoints (21 x 3), tracked (21). Absent parts are zeros with their "present" flag 0. Raw device
joints are not kept (device-specific); everything the retargeter reads is.
"""
from __future__ import annotations

import numpy as np

from devices.frame import SIDES, FrameError, HandFrame, OperatorFrame, Pose
from teleop.core.conventions import NODE_NAMES

_HAND_COLUMNS = ("present", "wrist_tracked", "wrist_x", "wrist_y", "wrist_z", "wrist_qw", "wrist_qx", "wrist_qy",
                 "wrist_qz", *(f"{n}_{a}" for n in NODE_NAMES for a in "xyz"), *(f"{n}_tracked" for n in NODE_NAMES))
FRAME_COLUMNS: tuple[str, ...] = (
    "timestamp", "received", "sequence", "engage", "head_present", "head_x", "head_y", "head_z",
    "head_qw", "head_qx", "head_qy", "head_qz", *(f"{s}_{c}" for s in SIDES for c in _HAND_COLUMNS))
_HEAD = 12
_HAND = len(_HAND_COLUMNS)


def _pose(pose: Pose | None) -> list[float]:
    if pose is None:
        return [0.0] * 8
    return [1.0, *pose.position, *pose.quat]


def _hand(hand: HandFrame | None) -> np.ndarray:
    out = np.zeros(_HAND)
    if hand is not None:
        out[0], out[1] = 1.0, float(hand.wrist_tracked)
        out[2:9] = [*hand.wrist.position, *hand.wrist.quat]
        out[9:9 + 63] = hand.keypoints.ravel()
        out[72:93] = hand.tracked
    return out


def frame_to_vector(frame: OperatorFrame | None) -> np.ndarray:
    """(198,) float64; all zeros for no frame."""
    if frame is None:
        return np.zeros(len(FRAME_COLUMNS))
    head = [frame.timestamp, frame.received, float(frame.sequence), float(frame.engage), *_pose(frame.head)]
    return np.concatenate([head, _hand(frame.left), _hand(frame.right)])


def _hand_from(vec: np.ndarray) -> HandFrame | None:
    if vec[0] < 0.5:
        return None
    return HandFrame(Pose(vec[2:5], vec[5:9]), vec[9:72].reshape(21, 3), vec[72:93] > 0.5,
                     wrist_tracked=bool(vec[1] > 0.5))


def vector_to_frame(vec: np.ndarray, device: str = "replay") -> OperatorFrame | None:
    """Inverse of :func:`frame_to_vector`; None for an all-zero (no frame) row."""
    vec = np.asarray(vec, dtype=np.float64)
    if vec.shape != (len(FRAME_COLUMNS),):
        raise FrameError(f"frame vector: expected ({len(FRAME_COLUMNS)},), got {vec.shape}")
    if not vec.any():
        return None
    head = Pose(vec[5:8], vec[8:12]) if vec[4] > 0.5 else None
    return OperatorFrame(timestamp=float(vec[0]), received=float(vec[1]), sequence=int(vec[2]),
                         left=_hand_from(vec[_HEAD:_HEAD + _HAND]), right=_hand_from(vec[_HEAD + _HAND:]),
                         head=head, engage=bool(vec[3] > 0.5), device=device)
