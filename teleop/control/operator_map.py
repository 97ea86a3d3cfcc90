"""Device frames -> retargeter input, and the inverse wrist map the engage clutch anchors on."""
from __future__ import annotations

import numpy as np

from devices.frame import SIDES, OperatorFrame
from retarget import HandInput, OperatorInput
from teleop.core.geometry import quat_to_mat

DEFAULT_HEAD = np.array([0.0, 0.0, 1.60])     # a seated operator's head, when a device has none


def operator_input(frame: OperatorFrame) -> OperatorInput:
    """The retargeter's input for one frame: head pose and each tracked hand (palm rotation from
    the device's wrist quaternion when the wrist is tracked, else estimated from the keypoints)."""
    head_pos, head_rot = DEFAULT_HEAD, np.eye(3)
    if frame.head is not None:
        head_pos, head_rot = frame.head.position, quat_to_mat(frame.head.quat)
    hands = {}
    for side in SIDES:
        hand = frame.hand(side)
        if hand is None:
            hands[side] = None
            continue
        palm_rot = quat_to_mat(hand.wrist.quat) if hand.wrist_tracked else None
        hands[side] = HandInput(np.asarray(hand.keypoints), np.asarray(hand.tracked), palm_rot)
    return OperatorInput(np.asarray(head_pos, float), head_rot, hands)


def operator_wrists(retargeter, robot_wrists: dict[str, np.ndarray], frame: OperatorFrame | None) -> dict:
    """Where each operator wrist must be (operator frame) for the retargeter to put the robot's
    wrist where it is now: the exact inverse of its shoulder-anchored scaling."""
    head_pos, head_rot = DEFAULT_HEAD, np.eye(3)
    if frame is not None and frame.head is not None:
        head_pos, head_rot = frame.head.position, quat_to_mat(frame.head.quat)
    return {side: retargeter.operator_wrist(side, p, head_pos, head_rot) for side, p in robot_wrists.items()}
