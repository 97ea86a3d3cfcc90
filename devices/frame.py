"""``OperatorFrame``: everything any operator device produces, in one device-neutral shape.

Operator frame: metres, x forward (away from the operator), y left, z up. Quaternions are
(w, x, y, z). Hand keypoints use the glove node representation (21 nodes):

    0 wrist; 1-4 thumb cmc, mcp, ip, tip; 5-8 index mcp, pip, dip, tip; 9-12 middle;
    13-16 ring; 17-20 little (mcp, pip, dip, tip)

Wrist orientation is the palm frame: z from the wrist toward the fingers, x out of the palm
side, y = z cross x (toward the thumb on a right hand, away from it on a left hand: the left
hand is the mirror image, as on the robot).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from teleop.core.conventions import NUM_NODES, SIDES
from teleop.core.errors import TeleopError, choices

IDENTITY_QUAT = (1.0, 0.0, 0.0, 0.0)


class FrameError(TeleopError):
    """An OperatorFrame / HandFrame was built from arrays of the wrong shape or bad values."""


def as_array(value, shape: tuple[int, ...], what: str, dtype=np.float64) -> np.ndarray:
    """``value`` as a read-only array of ``shape`` with finite entries, else a ``FrameError``."""
    arr = np.array(value, dtype=dtype)
    if arr.shape != shape:
        raise FrameError(f"{what}: expected shape {shape}, got {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise FrameError(f"{what}: contains NaN or infinite values")
    arr.setflags(write=False)
    return arr


def as_unit_quat(value, what: str, tol: float = 1e-3) -> np.ndarray:
    """A (4,) wxyz quaternion of unit norm (within ``tol``; renormalised), else ``FrameError``."""
    q = np.array(value, dtype=np.float64)
    if q.shape != (4,) or not np.all(np.isfinite(q)):
        raise FrameError(f"{what}: expected 4 finite numbers (w, x, y, z), got {q!r}")
    norm = float(np.linalg.norm(q))
    if abs(norm - 1.0) > tol:
        raise FrameError(f"{what}: quaternion norm {norm:.4f} is not 1 (tolerance {tol})")
    q = q / norm
    q.setflags(write=False)
    return q


@dataclass(frozen=True)
class Pose:
    """Rigid pose: ``position`` (3,) metres, ``quat`` (4,) wxyz unit, in the operator frame."""
    position: np.ndarray
    quat: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "position", as_array(self.position, (3,), "pose position"))
        object.__setattr__(self, "quat", as_unit_quat(self.quat, "pose quaternion"))

    @staticmethod
    def identity() -> Pose:
        return Pose(np.zeros(3), np.array(IDENTITY_QUAT))


@dataclass(frozen=True)
class HandFrame:
    """One hand. ``keypoints`` (21, 3) and ``tracked`` (21,) bool follow ``teleop.core.conventions.NODE_NAMES``.

    ``wrist_tracked`` is False when the wrist pose is a nominal placeholder (a glove without a
    tracker). ``raw`` keeps the device's own joints (glove: (20,) angles; WebXR: (25, 7) poses
    x y z qw qx qy qz in the operator frame) or None.
    """
    wrist: Pose
    keypoints: np.ndarray
    tracked: np.ndarray
    wrist_tracked: bool = True
    raw: np.ndarray | None = None

    def __post_init__(self):
        if not isinstance(self.wrist, Pose):
            raise FrameError(f"hand wrist must be a Pose, got {type(self.wrist).__name__}")
        object.__setattr__(self, "keypoints", as_array(self.keypoints, (NUM_NODES, 3), "keypoints"))
        tracked = np.array(self.tracked)
        if tracked.shape != (NUM_NODES,) or tracked.dtype != bool:
            raise FrameError(f"tracked: expected ({NUM_NODES},) bool, got {tracked.shape} {tracked.dtype}")
        tracked.setflags(write=False)
        object.__setattr__(self, "tracked", tracked)
        object.__setattr__(self, "wrist_tracked", bool(self.wrist_tracked))
        if self.raw is not None:
            raw = np.array(self.raw, dtype=np.float64)
            if not np.all(np.isfinite(raw)):
                raise FrameError("raw device joints contain NaN or infinite values")
            raw.setflags(write=False)
            object.__setattr__(self, "raw", raw)

    @property
    def tracked_fraction(self) -> float:
        return float(np.count_nonzero(self.tracked)) / NUM_NODES

    def pinch_distance(self) -> float:
        """Thumb tip to index tip distance (m); the engage gesture uses it."""
        return float(np.linalg.norm(self.keypoints[4] - self.keypoints[8]))


@dataclass(frozen=True)
class OperatorFrame:
    """One sample from an operator device.

    ``timestamp``: device clock (s); ``received``: ``time.monotonic()`` on arrival (s);
    ``sequence``: the device's counter; ``left`` / ``right``: a ``HandFrame`` or None when the
    device did not see that hand; ``head``: head ``Pose`` or None; ``engage``: the device's
    engage request (glove button; level signal); ``device``: registry name of the source.
    """
    timestamp: float
    received: float
    sequence: int
    left: HandFrame | None
    right: HandFrame | None
    head: Pose | None = None
    engage: bool = False
    device: str = ""
    extras: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        for name in ("timestamp", "received"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                raise FrameError(f"{name}: expected a finite number of seconds, got {value!r}")
        if not isinstance(self.sequence, (int, np.integer)) or self.sequence < 0:
            raise FrameError(f"sequence: expected a non-negative int, got {self.sequence!r}")
        for side in SIDES:
            hand = getattr(self, side)
            if hand is not None and not isinstance(hand, HandFrame):
                raise FrameError(f"{side}: expected HandFrame or None, got {type(hand).__name__}")
        if self.head is not None and not isinstance(self.head, Pose):
            raise FrameError(f"head: expected Pose or None, got {type(self.head).__name__}")
        object.__setattr__(self, "engage", bool(self.engage))

    def hand(self, side: str) -> HandFrame | None:
        if side not in SIDES:
            raise FrameError(f"unknown hand side {side!r}; valid: {choices(SIDES)}")
        return getattr(self, side)

    def age(self, now: float) -> float:
        """Seconds since arrival, given ``now`` = ``time.monotonic()``."""
        return now - self.received
