"""A synthetic operator that is a person: human arms and a human hand skeleton, seen by a headset.

Unlike :mod:`teleop.control.synthetic.human` (robot motion mirrored back through the exact inverse
of the retargeter's scaling, for tests that need ground-truth joints), nothing here knows the
robot. The body is the operator profile's (shoulders, upper arm, forearm); each arm is a 7-joint
human chain with human joint ranges; each hand is a 25-joint skeleton whose shapes are hands
captured from a person (iwer's ``relaxed``, ``pinch``, ``point``), a fist made of captured digits,
and per-digit blends of them (joint rotations slerped, bones lerped), clamped to human joint ranges.
Frames leave as the headset's WebXR ``frame`` messages (:mod:`teleop.control.synthetic.webxr_hand`)
and come back through ``parse_frame``, so they take the real device -> engage -> retarget path.

Operator frame: x forward, y left, z up (metres); the head looks along +x.

Arm angles (rad), both sides alike (the left arm is the mirror image):
  0 shoulder flexion (raise the arm forward-up), 1 shoulder horizontal abduction (swing it out to
  the side; negative crosses the body), 2 shoulder rotation (about the upper arm), 3 elbow flexion,
  4 forearm supination (0 = palm down), 5 wrist flexion (toward the palm), 6 wrist ulnar deviation.
All zero: arm straight forward at shoulder height, palm down, fingers forward. Shoulder flexion
-90 deg with the elbow at 90 deg: upper arm hanging, forearm forward, palm down.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from devices.webxr.messages import parse_frame
from devices.frame import OperatorFrame
from retarget.nodes import webxr_to_nodes
from retarget.profile import DEFAULT_PROFILE, OperatorProfile, finger_length
from teleop.control.synthetic import webxr_hand as wh
from teleop.control.synthetic.motion import min_jerk
from teleop.core.conventions import SIDES
from teleop.core.geometry import mat_to_quat, quat_to_mat

ARM_JOINTS = ("shoulder_flexion", "shoulder_abduction", "shoulder_rotation", "elbow_flexion",
              "supination", "wrist_flexion", "wrist_deviation")
# Active ranges of motion of an adult arm (degrees; AAOS / Norkin & White figures, rounded), in the
# angles above: shoulder flexion 0 is the arm forward (anatomical 90), so -140 .. 80 is anatomical
# extension 50 .. flexion 170; supination 0 is palm down (anatomical pronation 80-90).
ARM_RANGES_DEG = np.array([(-140, 80), (-45, 120), (-70, 90), (0, 145), (-10, 170), (-70, 75), (-20, 30)], float)
ARM_RANGES = np.radians(ARM_RANGES_DEG)
PALM_DOWN = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])   # palm frame columns x, y, z
PARENT = (-1, 0, 1, 2, 3, 0, 5, 6, 7, 8, 0, 10, 11, 12, 13, 0, 15, 16, 17, 18, 0, 20, 21, 22, 23)
DIGIT_JOINTS = ((1, 2, 3, 4), (5, 6, 7, 8, 9), (10, 11, 12, 13, 14), (15, 16, 17, 18, 19), (20, 21, 22, 23, 24))
DIGITS = ("thumb", "index", "middle", "ring", "little")
# Human hand: active flexion ranges (degrees, + toward the palm) of the anatomical joints, and the
# sideways range at the finger MCPs (Hume et al. 1990; hyperextension as in a relaxed, loose hand).
HAND_FLEXION_DEG = {"thumb_mcp": (-20, 60), "thumb_ip": (-25, 80), "mcp": (-25, 90), "pip": (-5, 110),
                    "dip": (-20, 80)}
MCP_SIDEWAYS_DEG = (-25.0, 25.0)
# Hand shapes: the three captured poses, and a fist made of captured digits (the point pose with its
# index finger curled as its middle finger is).
SHAPES = (*wh.POSE_NAMES, "fist")


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1.0, 0], [-s, 0, c]])


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


@dataclass(frozen=True)
class HumanArm:
    """One human arm of the operator ``profile``: angles (7,) -> elbow, wrist and palm frame."""

    side: str
    profile: OperatorProfile = DEFAULT_PROFILE
    head: tuple = (0.0, 0.0, 1.6)

    @property
    def shoulder(self) -> np.ndarray:
        return np.asarray(self.head, float) + self.profile.shoulder(self.side)

    def clip(self, angles) -> np.ndarray:
        return np.clip(np.asarray(angles, float), ARM_RANGES[:, 0], ARM_RANGES[:, 1])

    def fk(self, angles) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(elbow (3,), wrist (3,), palm rotation (3, 3)) in the operator frame; angles are clipped
        to the human ranges first."""
        a = self.clip(angles)
        m = 1.0 if self.side == "left" else -1.0                 # outward = +y on the left
        upper = _rz(m * a[1]) @ _ry(-a[0]) @ _rx(m * a[2])
        elbow = self.shoulder + upper @ [self.profile.upper_arm, 0.0, 0.0]
        fore = upper @ _ry(-a[3])
        wrist = elbow + fore @ [self.profile.forearm, 0.0, 0.0]
        hand = fore @ _rx(-m * a[4]) @ _ry(a[5]) @ _rz(m * a[6])
        return elbow, wrist, hand @ PALM_DOWN

    def reach(self, angles) -> float:
        """Shoulder -> wrist distance as a fraction of the full arm length."""
        return float(np.linalg.norm(self.fk(angles)[1] - self.shoulder) / self.profile.arm_length)

    def ik(self, wrist, palm=None, start=None, palm_weight: float = 0.002) -> np.ndarray:
        """Arm angles (7,) within the human ranges that put the wrist at ``wrist`` (3,) (operator
        frame) and, if given, the palm frame near ``palm`` (3, 3); a small pull toward ``start``
        (default the neutral posture) picks the comfortable one of the many."""
        from scipy.optimize import least_squares

        start = NEUTRAL_ARM if start is None else np.asarray(start, float)
        wrist = np.asarray(wrist, float)

        def residual(a):
            _, w, r = self.fk(a)
            out = [w - wrist, 0.01 * (a - start)]
            if palm is not None:
                out.insert(1, np.sqrt(palm_weight) * (r - palm).ravel())
            return np.concatenate(out)

        lo, hi = ARM_RANGES[:, 0], ARM_RANGES[:, 1]
        res = least_squares(residual, np.clip(start, lo + 1e-9, hi - 1e-9), bounds=(lo, hi), xtol=1e-12, ftol=1e-12)
        return res.x

    @staticmethod
    def elbow_for_reach(fraction: float, profile: OperatorProfile = DEFAULT_PROFILE) -> float:
        """The elbow flexion (rad) that puts the wrist at ``fraction`` of the arm's full reach."""
        u, f = profile.upper_arm, profile.forearm
        d = fraction * (u + f)
        return float(np.pi - np.arccos(np.clip((u * u + f * f - d * d) / (2 * u * f), -1.0, 1.0)))


def _flexion(local: np.ndarray) -> tuple[float, float]:
    d = local @ np.array([0.0, 0.0, -1.0])
    return float(np.arctan2(-d[1], -d[2])), float(np.arctan2(d[0], np.hypot(d[1], d[2])))


def _joint_kind(j: int) -> str | None:
    names = {2: "thumb_mcp", 3: "thumb_ip"}
    if j in names:
        return names[j]
    for chain in DIGIT_JOINTS[1:]:
        if j in chain[1:4]:
            return ("mcp", "pip", "dip")[chain.index(j) - 1]
    return None


class HumanHand:
    """A hand skeleton built from captured hands: each shape a per-digit blend of the captured
    poses' joint rotations (relative to the parent joint) and bones, clamped to human ranges.

    ``scale`` resizes the whole hand (a person with a bigger or smaller hand)."""

    def __init__(self, side: str, scale: float = 1.0):
        self.side, self.scale = side, float(scale)
        poses = {name: wh.captured_pose(name, side) for name in wh.POSE_NAMES}
        self.locals = {name: self._locals(pose) for name, pose in poses.items()}
        self.offsets = {name: self._offsets(pose) * self.scale for name, pose in poses.items()}
        fist = self.locals["point"].copy()              # the captured point pose, its index finger
        fist[6:10] = self.locals["point"][11:15]        # curled as its middle finger is
        self.locals["fist"], self.offsets["fist"] = fist, self.offsets["point"]
        self._cache: dict = {}

    @staticmethod
    def _offsets(pose: np.ndarray) -> np.ndarray:
        """Each joint's position (25, 3) in its parent joint's frame (the bones; the wrist: 0)."""
        out = np.zeros((wh.N_JOINTS, 3))
        for j, p in enumerate(PARENT):
            if p >= 0:
                out[j] = pose[p, :3, :3].T @ (pose[j, :3, 3] - pose[p, :3, 3])
        return out

    @staticmethod
    def _locals(pose: np.ndarray) -> np.ndarray:
        """Joint quaternions (25, 4) relative to each parent joint (the wrist: identity)."""
        out = np.tile([1.0, 0.0, 0.0, 0.0], (wh.N_JOINTS, 1))
        for j, p in enumerate(PARENT):
            if p >= 0:
                out[j] = mat_to_quat(pose[p, :3, :3].T @ pose[j, :3, :3])
        return out

    @property
    def length(self) -> float:
        """Wrist -> middle MCP -> PIP -> DIP -> tip (the profile's ``hand_length``)."""
        return finger_length(webxr_to_nodes(self.pose(relaxed_shape())[:, :3, 3]))

    def local_rotations(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(joint rotations (25, 3, 3), bones (25, 3)) for per-digit weights (5, 4) over
        :data:`SHAPES`: rotations slerped, bones lerped (the captures differ by millimetres where a
        joint centre sits, e.g. the thumb's base moves 14 mm between relaxed and pinch)."""
        weights = np.asarray(weights, float).reshape(len(DIGITS), len(SHAPES))
        out, bones = np.tile(np.eye(3), (wh.N_JOINTS, 1, 1)), np.zeros((wh.N_JOINTS, 3))
        for d, joints in enumerate(DIGIT_JOINTS):
            w = weights[d]
            if w.sum() <= 0:
                raise ValueError(f"hand shape: {DIGITS[d]} has no positive weight")
            for j in joints:
                q, acc = None, 0.0
                for k, name in enumerate(SHAPES):
                    if w[k] <= 0:
                        continue
                    qk = self.locals[name][j]
                    q = qk if q is None else wh._slerp(q, qk, w[k] / (acc + w[k]))
                    acc += w[k]
                    bones[j] += w[k] * self.offsets[name][j]
                bones[j] /= acc
                out[j] = self._clamped(j, quat_to_mat(q))
        return out, bones

    def _clamped(self, j: int, local: np.ndarray) -> np.ndarray:
        """``local`` with its flexion (and MCP sideways angle) inside the human range."""
        kind = _joint_kind(j)
        if kind is None:
            return local
        flex, side = _flexion(local)
        lo, hi = np.radians(HAND_FLEXION_DEG[kind])
        if flex < lo or flex > hi:
            local = _rx(-(np.clip(flex, lo, hi) - flex)) @ local
        if kind == "mcp":
            lo, hi = np.radians(MCP_SIDEWAYS_DEG)
            if side < lo or side > hi:
                local = _ry(-(np.clip(side, lo, hi) - side)) @ local
        return local

    def angles(self, weights) -> dict[str, tuple[float, float]]:
        """Anatomical (flexion, sideways) angles of the shape (as :func:`webxr_hand.joint_angles`)."""
        return wh.joint_angles(self.pose(weights))

    def pose(self, weights) -> np.ndarray:
        """(25, 4, 4) joint transforms in the wrist joint's frame for per-digit weights (5, 4)."""
        key = np.asarray(weights, float).round(6).tobytes()
        if key in self._cache:
            return self._cache[key]
        local, bones = self.local_rotations(weights)
        out = np.tile(np.eye(4), (wh.N_JOINTS, 1, 1))
        for j, p in enumerate(PARENT):
            if p >= 0:
                out[j, :3, :3] = out[p, :3, :3] @ local[j]
                out[j, :3, 3] = out[p, :3, 3] + out[p, :3, :3] @ bones[j]
        if len(self._cache) > 512:
            self._cache.clear()
        self._cache[key] = out
        return out


def shape_weights(**digits) -> np.ndarray:
    """Per-digit weights (5, 4) over :data:`SHAPES`: ``shape_weights(all="relaxed", index="point")`` or mixtures, e.g.
    ``thumb={"relaxed": 0.5, "pinch": 0.5}``. Digits not named take ``all`` (default relaxed)."""
    def row(v):
        v = {v: 1.0} if isinstance(v, str) else v
        return np.array([float(v.get(n, 0.0)) for n in SHAPES])
    base = row(digits.pop("all", "relaxed"))
    out = np.tile(base, (len(DIGITS), 1))
    for name, v in digits.items():
        out[DIGITS.index(name)] = row(v)
    return out


def relaxed_shape() -> np.ndarray:
    return shape_weights()


def pinch_shape(closure: float = 1.0) -> np.ndarray:
    """iwer's pinch blend: ``closure`` 0 relaxed .. 1 thumb and index tips touching."""
    c = float(np.clip(closure, 0.0, 1.0))
    return shape_weights(all={"relaxed": 1.0 - c, "pinch": c} if c < 1 else "pinch")


def point_shape() -> np.ndarray:
    return shape_weights(all="point")


def fist_shape(closure: float = 1.0) -> np.ndarray:
    """From relaxed (0) to a fist (1): all four fingers curled as the captured ``point`` pose curls
    its middle finger, the thumb as in ``point``."""
    c = float(np.clip(closure, 0.0, 1.0))
    return shape_weights(all={"relaxed": 1.0 - c, "fist": c} if c < 1 else "fist")


@dataclass
class HandState:
    """One hand at one instant: arm angles (7,), shape weights (5, 4), whether the headset sees it."""

    arm: np.ndarray
    shape: np.ndarray = field(default_factory=relaxed_shape)
    tracked: bool = True


class HumanOperator:
    """The operator's body: arms + hands -> WebXR frame messages -> :class:`OperatorFrame`."""

    def __init__(self, profile: OperatorProfile | None = None, head=(0.0, 0.0, 1.6), hand_scale: float = 1.0,
                 keypoint_noise_mm: float = 0.0, tremor_mm: float = 0.0, seed: int = 0):
        self.hands = {s: HumanHand(s, hand_scale) for s in SIDES}
        base = profile or DEFAULT_PROFILE
        self.profile = dataclasses.replace(base, name="person", hand_length=self.hands["right"].length) \
            if profile is None else profile
        self.head = tuple(float(v) for v in head)
        self.arms = {s: HumanArm(s, self.profile, self.head) for s in SIDES}
        self.noise_m, self.tremor_m, self.seed = keypoint_noise_mm * 1e-3, tremor_mm * 1e-3, int(seed)
        rng = np.random.default_rng([self.seed, 1])
        self._tremor = {s: (rng.uniform(8, 12, 3), rng.uniform(0, 2 * np.pi, 3)) for s in SIDES}

    def placed(self, side: str, state: HandState, t: float = 0.0) -> np.ndarray:
        """(25, 4, 4) joints of one hand in the XR reference space."""
        _, wrist, palm = self.arms[side].fk(state.arm)
        if self.tremor_m > 0:
            freqs, phases = self._tremor[side]
            wrist = wrist + self.tremor_m * np.sin(2 * np.pi * freqs * t + phases)
        return wh.place(self.hands[side].pose(state.shape), wrist, palm)

    def message(self, seq: int, t: float, states: dict, engage: bool = True) -> dict:
        hands = {}
        rng = np.random.default_rng([self.seed, int(seq)]) if self.noise_m > 0 else None
        for side in SIDES:
            st = states.get(side)
            if st is None or not st.tracked:
                hands[side] = None
                continue
            placed = self.placed(side, st, t)
            if rng is not None:
                placed = placed.copy()
                placed[:, :3, 3] += rng.normal(0.0, self.noise_m, (wh.N_JOINTS, 3))
            hands[side] = placed
        return wh.frame_message(seq, t, hands, self.head, engage)

    def frame(self, seq: int, t: float, states: dict, received: float | None = None,
              engage: bool = True) -> OperatorFrame:
        """The operator frame the headset server would make of this instant."""
        return parse_frame(self.message(seq, t, states, engage), t if received is None else received)


@dataclass(frozen=True)
class Key:
    t: float
    arm: tuple                       # 7 arm angles (rad)
    shape: np.ndarray | None = None  # (5, 4) shape weights; None: keep the previous
    tracked: bool = True             # the headset sees this hand from this key on


class Motion:
    """Per-side keyframes, minimum-jerk between them in joint space (arm angles and shape weights);
    ``tracked`` switches at its key. ``states(t)`` -> {side: HandState}."""

    def __init__(self, keys: dict[str, list[Key]]):
        self.keys = {}
        for side, ks in keys.items():
            ks = sorted(ks, key=lambda k: k.t)
            filled, shape = [], relaxed_shape()
            for k in ks:
                shape = shape if k.shape is None else np.asarray(k.shape, float)
                filled.append(Key(k.t, tuple(k.arm), shape, k.tracked))
            self.keys[side] = filled
        self.duration = max(ks[-1].t for ks in self.keys.values())

    def state(self, side: str, t: float) -> HandState:
        ks = self.keys[side]
        times = [k.t for k in ks]
        i = int(np.searchsorted(times, t, side="right")) - 1
        if i < 0:
            k = ks[0]
            return HandState(np.array(k.arm), k.shape, k.tracked)
        if i >= len(ks) - 1:
            k = ks[-1]
            return HandState(np.array(k.arm), k.shape, k.tracked)
        a, b = ks[i], ks[i + 1]
        s = float(min_jerk(np.array((t - a.t) / max(b.t - a.t, 1e-9))))
        arm = np.asarray(a.arm) + s * (np.asarray(b.arm) - np.asarray(a.arm))
        return HandState(arm, a.shape + s * (b.shape - a.shape), a.tracked)

    def states(self, t: float) -> dict:
        return {side: self.state(side, t) for side in self.keys}


# Hands over the table: upper arm 40 deg below horizontal, forearm 20 deg above, palm down with the
# fingers tipped 10 deg down (wrist flexed 30 deg).
NEUTRAL_ARM = np.radians([-40.0, 10.0, 0.0, 60.0, 0.0, 30.0, 0.0])


def arm(flexion=-40.0, abduction=10.0, rotation=0.0, elbow=60.0, supination=0.0, wrist_flexion=30.0,
        deviation=0.0) -> tuple:
    """Arm angles (7,) in radians from degrees by name, defaults the neutral teleop posture."""
    return tuple(np.radians([flexion, abduction, rotation, elbow, supination, wrist_flexion, deviation]))


def reach_elbow_deg(fraction: float, profile: OperatorProfile = DEFAULT_PROFILE) -> float:
    return float(np.degrees(HumanArm.elbow_for_reach(fraction, profile)))


def device_stream(operator: HumanOperator, motion: Motion, engage_at: float = 0.0):
    """A ``stream(t, sequence, received) -> OperatorFrame`` for :class:`devices.synthetic.SyntheticOperator`."""
    def stream(t: float, sequence: int, received: float) -> OperatorFrame:
        return operator.frame(sequence, t, motion.states(t), received, engage=t >= engage_at)
    return stream


def session_motion(seconds: float = 20.0) -> Motion:
    """A person's 20 s at the table (benchmarks): both arms reach sideways, up and forward to 97 %
    of their reach, sweep the wrist (flexion, deviation, forearm turn), while the hands run through
    relaxed, half and full pinch, point and a fist. The two sides are mirror images, half a phase apart."""
    e97 = reach_elbow_deg(0.97)
    arms = [arm(), arm(0, 90, 0, e97), arm(), arm(80, 10, 0, e97), arm(), arm(0, 0, 0, e97), arm(),
            arm(wrist_flexion=70), arm(wrist_flexion=-10), arm(deviation=25), arm(deviation=-15),
            arm(supination=120), arm()]
    shapes = [relaxed_shape(), pinch_shape(0.5), pinch_shape(), relaxed_shape(), point_shape(), fist_shape(0.6),
              fist_shape(), relaxed_shape()]
    keys = {}
    for k, side in enumerate(SIDES):
        ks, t, i = [Key(0.0, arms[0], shapes[0]), Key(1.0, arms[0], shapes[0])], 1.0, 0
        step = (seconds - 1.0) / (len(arms) - 1)
        while t + step <= seconds + 1e-9:
            t += step
            i += 1
            ks.append(Key(t, arms[(i + k) % len(arms)] if i < len(arms) else arms[0],
                          shapes[(i + 3 * k) % len(shapes)]))
        keys[side] = ks
    return Motion(keys)
