"""The calibration wizard's maths, without Qt: the poses the operator holds, capturing a held pose
from a connected device, and fitting + saving the operator profile.

Used by the window's wizard (``ui/calibration.py``) and by ``teleop calibrate``. A capture averages
every frame that arrives during a short hold window, so one jittery frame does not become the
operator's arm length, and refuses a hold that was not still or lost a hand: a bad sample would
silently scale every later take.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from devices.base import Device, DeviceError
from devices.frame import SIDES, OperatorFrame
from retarget import CalibrationSample, OperatorProfile, calibrate
from retarget.profile import POSES, yaw_frame
from teleop.control.operator_map import DEFAULT_HEAD
from teleop.core.errors import TeleopError
from teleop.core.geometry import quat_to_mat


@dataclass(frozen=True)
class Step:
    """One pose the operator holds: ``pose`` is a key of ``retarget.profile.POSES``."""

    pose: str
    prompt: str


STEPS: tuple[Step, ...] = (
    Step("t_pose", "Stand straight, arms straight out to the sides (a T), palms down, and hold still."),
    Step("arms_forward", "Arms straight out in front, palms down, and hold still."))

HOLD_SECONDS = 1.0
MIN_FRAMES = 3                 # fewer frames in a hold than this is a device that stopped, not a hold
MAX_WOBBLE = 0.03              # m: a wrist farther than this from its mean during the hold was moving
ARM_RANGE = (0.35, 0.95)       # m shoulder -> wrist: outside, the poses were not the ones asked for
SHOULDER_SPAN = (0.15, 0.70)   # m between the fitted shoulders
MAX_RESIDUAL = 0.06            # m RMS of the straight-arm model over the samples (bent arms, wrong pose)


class CalibrationError(TeleopError):
    """A pose could not be captured or the fitted profile is not a plausible person."""


def sample_from_frame(pose: str, frame: OperatorFrame | None) -> CalibrationSample:
    """A calibration sample from one frame; both hands must be seen with tracked wrists (a glove
    without a wrist tracker reports a nominal wrist, which says nothing about the arm)."""
    if frame is None:
        raise CalibrationError("no frame from the device: both hands must be tracked to capture a pose")
    for side in SIDES:
        hand = frame.hand(side)
        if hand is None:
            raise CalibrationError(f"the {side} hand is not tracked: both hands must be tracked to capture a pose")
        if not hand.wrist_tracked:
            raise CalibrationError(f"the {side} wrist is not tracked (no wrist tracker?): "
                                   f"calibration needs both wrist positions")
    head_pos = frame.head.position if frame.head is not None else DEFAULT_HEAD
    head_rot = quat_to_mat(frame.head.quat) if frame.head is not None else np.eye(3)
    wrists = {s: np.array(frame.hand(s).wrist.position, float) for s in SIDES}
    hands = {s: np.array(frame.hand(s).keypoints, float) for s in SIDES}
    return CalibrationSample(pose, np.array(head_pos, float), np.array(head_rot, float), wrists, hands=hands)


def _mean_rotation(rotations: list[np.ndarray]) -> np.ndarray:
    """The rotation nearest the element-wise mean (the mean of rotations is not one)."""
    u, _, vt = np.linalg.svd(np.mean(rotations, axis=0))
    return u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt


def average(pose: str, samples: list[CalibrationSample], max_wobble: float = MAX_WOBBLE) -> CalibrationSample:
    """One sample from the samples of a hold; refuses a hold in which a wrist moved."""
    for side in SIDES:
        wrists = np.array([s.wrists[side] for s in samples])
        wobble = float(np.max(np.linalg.norm(wrists - wrists.mean(axis=0), axis=1)))
        if wobble > max_wobble:
            raise CalibrationError(f"hold still: the {side} wrist moved {100 * wobble:.1f} cm during the hold "
                                   f"(at most {100 * max_wobble:.0f} cm)")
    return CalibrationSample(
        pose, np.mean([s.head_pos for s in samples], axis=0), _mean_rotation([s.head_rot for s in samples]),
        {side: np.mean([s.wrists[side] for s in samples], axis=0) for side in SIDES},
        hands={side: np.mean([s.hands[side] for s in samples], axis=0) for side in SIDES})


def capture(device: Device, pose: str, hold: float = HOLD_SECONDS, *, max_wobble: float = MAX_WOBBLE,
            clock: Callable[[], float] = time.monotonic, poll: float = 0.005) -> CalibrationSample:
    """Average the frames ``device`` delivers during the next ``hold`` seconds into one sample."""
    if not hold > 0:
        raise CalibrationError(f"the hold must be > 0 seconds, got {hold!r}")
    samples, last_index = [], device.read().index      # only frames that arrive during the hold
    deadline = clock() + hold
    while clock() < deadline:
        reading = device.read()
        if reading.index != last_index and reading.frame is not None:
            last_index = reading.index
            samples.append(sample_from_frame(pose, reading.frame))
        time.sleep(poll)
    if len(samples) < MIN_FRAMES:
        raise DeviceError(f"only {len(samples)} frame(s) during the {hold:g} s hold from "
                          f"{device.connection_info().summary}: is the device still sending?")
    return average(pose, samples, max_wobble)


def wait_for_frame(device: Device, timeout: float, name: str = "device",
                   clock: Callable[[], float] = time.monotonic) -> None:
    """Block until the device has delivered a frame, or fail naming it and where it listens."""
    deadline = clock() + timeout
    while device.read().frame is None:
        if clock() >= deadline:
            raise DeviceError(f"{name}: no frames within {timeout:g} s ({device.connection_info().summary}); "
                              f"is it running and sending to this address?")
        time.sleep(0.01)


def residual(profile: OperatorProfile, samples: list[CalibrationSample]) -> float:
    """RMS distance (m) between each wrist and where straight arms of the profile would put it."""
    errors = []
    for s in samples:
        for side in SIDES:
            local = yaw_frame(s.head_rot).T @ (np.asarray(s.wrists[side], float) - s.head_pos)
            model = profile.shoulder(side) + profile.arm_length * np.asarray(POSES[s.pose][side], float)
            errors.append(np.linalg.norm(local - model))
    return float(np.sqrt(np.mean(np.square(errors))))


def check_plausible(profile: OperatorProfile, samples: list[CalibrationSample]) -> None:
    """Refuse a fit that is not a person holding the asked poses (wrong pose, swapped hands)."""
    lo, hi = ARM_RANGE
    if not lo <= profile.arm_length <= hi:
        raise CalibrationError(f"implausible fit: arm length {profile.arm_length:.3f} m is outside "
                               f"[{lo}, {hi}] m; hold the poses with straight arms and try again")
    span = float(profile.shoulder("left")[1] - profile.shoulder("right")[1])
    if not SHOULDER_SPAN[0] <= span <= SHOULDER_SPAN[1]:
        raise CalibrationError(f"implausible fit: the shoulders are {span:.3f} m apart (expected "
                               f"{SHOULDER_SPAN[0]}..{SHOULDER_SPAN[1]} m; left and right swapped?)")
    rms = residual(profile, samples)
    if rms > MAX_RESIDUAL:
        raise CalibrationError(f"implausible fit: the wrists are {100 * rms:.1f} cm RMS from straight arms "
                               f"(at most {100 * MAX_RESIDUAL:.0f} cm); hold each pose as asked and try again")


def fit_and_save(samples: list[CalibrationSample], path: str | Path, name: str | None = None) -> OperatorProfile:
    """Fit the profile (``retarget.calibrate``), check it is plausible, save it as YAML at ``path``."""
    path = Path(path)
    profile = calibrate(samples, name=name or path.stem)
    check_plausible(profile, samples)
    path.parent.mkdir(parents=True, exist_ok=True)
    profile.save(path)
    return profile
