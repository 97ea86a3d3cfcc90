"""Robot-space plans -> what a person's hands would do: OperatorFrames with tremor and dropouts.

The robot palm pose maps back to the operator's wrist through the exact inverse of the
retargeter's shoulder-anchored scaling; hand keypoints are the robot hand's keypoints for the
planned grip (forward kinematics in the palm frame) scaled to the operator's hand size.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from devices.frame import SIDES, HandFrame, OperatorFrame, Pose
from teleop.core.errors import ConfigError
from teleop.core.geometry import mat_to_quat
from teleop.core.yamlio import load_yaml
from teleop.control.operator_map import DEFAULT_HEAD, operator_wrists
from teleop.control.synthetic.motion import Timeline

GRASPS_FILE = Path(__file__).with_name("grasps.yaml")
MIRROR = np.array([1.0, -1.0, 1.0])


@dataclass(frozen=True)
class HumanNoise:
    tremor_mm: float = 0.4           # physiological tremor amplitude (8-12 Hz)
    keypoint_mm: float = 0.5         # per-node tracking noise
    dropout_per_s: float = 0.03      # how often a hand's tracking drops out
    dropout_s: tuple[float, float] = (0.15, 0.4)


def load_grasps(scene, path: Path = GRASPS_FILE) -> dict[str, np.ndarray]:
    """Grasp name -> (22,) hand joint values in the hand's action order (same for both sides)."""
    shapes = load_yaml(path, "grasp shapes")
    joints = scene.layout.hands["right"].joints
    out = {}
    for name, values in shapes.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: {name}: a grasp is a mapping of joint name -> angle (rad), got {values!r}")
        q = np.zeros(len(joints))
        for i, joint in enumerate(joints):
            local = joint.removeprefix("right_")
            digit, _, rest = local.partition("_")
            q[i] = values.get(local, values.get(rest, 0.0) if digit != "thumb" else 0.0)
        out[name] = q
    return out


class HandShapes:
    """Robot hand keypoints (21, 3) in the palm frame for a grasp shape and grip value."""

    def __init__(self, scene, grasps: dict[str, np.ndarray]):
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        self.grasps = grasps
        layout = scene.layout
        hand = layout.hands["right"]
        self.qadr = np.array([self.model.joint(n).qposadr[0] for n in hand.joints])
        self.sites = np.array([self.model.site(n).id for n in hand.keypoints])
        self.palm = self.model.body(hand.palm_body).id
        self._cache: dict[tuple[str, float], np.ndarray] = {}

    def joints(self, grasp: str, grip: float) -> np.ndarray:
        return self.grasps["open"] + grip * (self.grasps[grasp] - self.grasps["open"])

    def local(self, grasp: str, grip: float) -> np.ndarray:
        key = (grasp, round(float(grip), 4))
        if key not in self._cache:
            self.data.qpos[self.qadr] = self.joints(grasp, grip)
            mujoco.mj_kinematics(self.model, self.data)
            rot, origin = self.data.xmat[self.palm].reshape(3, 3), self.data.xpos[self.palm]
            self._cache[key] = (self.data.site_xpos[self.sites] - origin) @ rot
        return self._cache[key]

    def side_local(self, side: str, grasp: str, grip: float) -> np.ndarray:
        """Keypoints in ``side``'s palm frame: the left hand is the y-mirror of the right."""
        local = self.local(grasp, grip)
        return local * MIRROR if side == "left" else local

    def tip(self, side: str, grasp: str, finger: str, node: str = "tip", grip: float = 1.0) -> np.ndarray:
        """A digit's node (palm frame, (3,)) in a hand shape: e.g. the middle finger's MCP when open."""
        digit = {"thumb": 1, "index": 5, "middle": 9, "ring": 13, "little": 17}[finger]
        nodes = ("cmc", "mcp", "ip", "tip") if finger == "thumb" else ("mcp", "pip", "dip", "tip")
        return self.side_local(side, grasp, grip)[digit + nodes.index(node)]


class HumanStream:
    """``frame_at(t, sequence)``: the operator's frame at ``t`` seconds into the plan."""

    def __init__(self, retargeter, shapes: HandShapes, timelines: dict[str, Timeline], rng: np.random.Generator,
                 noise: HumanNoise = HumanNoise()):
        self.rt, self.shapes, self.timelines, self.noise = retargeter, shapes, timelines, noise
        self.duration = max(t.duration for t in timelines.values())
        self._tremor = {s: (rng.uniform(8, 12, 3), rng.uniform(0, 2 * np.pi, 3)) for s in SIDES}
        self._rng_seed = int(rng.integers(2**31))
        self.dropouts = {s: self._dropouts(rng) for s in SIDES}

    def _dropouts(self, rng) -> list[tuple[float, float]]:
        out, t = [], 2.0                      # never in the first seconds: the engage happens there
        while self.noise.dropout_per_s > 0:
            t += rng.exponential(1.0 / self.noise.dropout_per_s)
            if t > self.duration - 1.0:
                break
            out.append((t, t + rng.uniform(*self.noise.dropout_s)))
        return out

    def _hand(self, side: str, t: float, rng) -> HandFrame | None:
        if any(a <= t < b for a, b in self.dropouts[side]):
            return None
        pos, rot, grip, grasp = self.timelines[side].sample(t)
        wrist = operator_wrists(self.rt, {side: pos}, None)[side]
        freqs, phases = self._tremor[side]
        wrist = wrist + self.noise.tremor_mm * 1e-3 * np.sin(2 * np.pi * freqs * t + phases)
        human_rot = self.rt.rot.T @ rot
        local = self.shapes.side_local(side, grasp, grip) / self.rt.hand_scale(side)
        keypoints = wrist + local @ human_rot.T
        keypoints = keypoints + rng.normal(0.0, self.noise.keypoint_mm * 1e-3, keypoints.shape)
        keypoints[0] = wrist
        return HandFrame(Pose(wrist, mat_to_quat(human_rot)), keypoints, np.ones(21, bool))

    def frame_at(self, t: float, sequence: int, received: float, engage: bool = True) -> OperatorFrame:
        rng = np.random.default_rng([self._rng_seed, sequence])     # per-frame noise, reproducible
        hands = {s: self._hand(s, t, rng) for s in SIDES}
        return OperatorFrame(timestamp=t, received=received, sequence=sequence, left=hands["left"],
                             right=hands["right"], head=Pose(DEFAULT_HEAD, (1.0, 0.0, 0.0, 0.0)), engage=engage,
                             device="synthetic")
