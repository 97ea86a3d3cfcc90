"""Side-by-side hand retargeting: our :class:`HandSolver` against dex-retargeting's position optimizer.

Both get the same targets (T, 21, 3): the human keypoints of a stream, expressed in the robot's palm
frame and scaled exactly as the bimanual retargeter does, and both start from the same joints.
dex-retargeting runs on a URDF exported from our model (:mod:`retarget.urdf`, same joint limits),
its position optimizer over all 20 non-wrist keypoints with its default loss (Huber, delta 2 cm) and
its default temporal term; its output low-pass filter is off so both report the optimizer's own
answer. Errors are measured identically for both: our FK of each solution against our FK of the
true joints. dex-retargeting is optional (the ``bench`` extra): :func:`dex_available` says if present.
"""
from __future__ import annotations

import importlib.util
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from retarget.filters import OneEuro
from retarget.hand import HandSolver
from retarget.urdf import hand_urdf
from teleop.robot import default_control_hz


@dataclass(frozen=True)
class StreamRun:
    q: np.ndarray          # (T, n) joint solutions, config order
    ms: np.ndarray         # (T,) wall time per frame


def dex_available() -> bool:
    return importlib.util.find_spec("dex_retargeting") is not None


def run_ours(solver: HandSolver, targets: np.ndarray, q0: np.ndarray, prefilter: OneEuro | None = None,
             dt: float | None = None) -> StreamRun:
    """Our solver over targets (T, 21, 3), warm-started from q0 (n,); optionally behind our input
    filter (as in :class:`~retarget.bimanual.BimanualRetargeter`), whose time is then included.
    ``dt``: the filter's step, one control tick (None: the shipped robot's control rate)."""
    dt = 1.0 / default_control_hz() if dt is None else dt
    solver.reset(q0)
    if prefilter is not None:
        prefilter.reset()
    qs, ms = [], []
    for t in targets:
        t0 = time.perf_counter()
        qs.append(solver.solve(t if prefilter is None else prefilter(t, dt)).q)
        ms.append((time.perf_counter() - t0) * 1e3)
    return StreamRun(np.array(qs), np.array(ms))


class DexHand:
    """dex-retargeting's position optimizer on the URDF of one of our hands."""

    def __init__(self, solver: HandSolver, workdir: str | Path | None = None):
        from dex_retargeting.retargeting_config import RetargetingConfig

        workdir = Path(workdir or tempfile.mkdtemp(prefix="retarget-urdf-"))
        self.urdf = hand_urdf(solver.chain.model, solver.cfg, solver.side, workdir / f"{solver.side}_hand.urdf")
        self.nodes = np.arange(1, len(self.urdf.keypoint_links))     # the wrist is the root: constant
        cfg = RetargetingConfig(type="position", urdf_path=str(self.urdf.path),
                                target_joint_names=list(self.urdf.free_joints),
                                target_link_names=[self.urdf.keypoint_links[i] for i in self.nodes],
                                target_link_human_indices=self.nodes.copy(), low_pass_alpha=-1.0)
        self.seq = cfg.build()
        pin_names = list(self.seq.joint_names)
        self.to_pin = np.array([pin_names.index(n) for n in self.urdf.joint_names])

    def reset(self, q0: np.ndarray) -> None:
        full = np.zeros(len(self.seq.joint_names))
        full[self.to_pin] = q0
        self.seq.set_qpos(full)

    def solve(self, target: np.ndarray) -> np.ndarray:
        """Joints (n,) in our config order for one target (21, 3) in the palm frame."""
        return np.asarray(self.seq.retarget(target[self.nodes]), float)[self.to_pin]


def run_dex(dex: DexHand, targets: np.ndarray, q0: np.ndarray) -> StreamRun:
    dex.reset(q0)
    qs, ms = [], []
    for t in targets:
        t0 = time.perf_counter()
        qs.append(dex.solve(t))
        ms.append((time.perf_counter() - t0) * 1e3)
    return StreamRun(np.array(qs), np.array(ms))


def keypoint_error_mm(solver: HandSolver, q_true: np.ndarray, q_got: np.ndarray) -> np.ndarray:
    """(T, 20) distances of the non-wrist keypoints (our FK) between two joint streams (T, n)."""
    return np.array([np.linalg.norm(solver.keypoints(a)[1:] - solver.keypoints(b)[1:], axis=1)
                     for a, b in zip(q_true, q_got)]) * 1e3


def jitter(q: np.ndarray, q_true: np.ndarray, dt: float) -> float:
    """RMS acceleration (rad/s^2) added on top of the true motion, over frames and joints."""
    extra = np.diff(q, 2, axis=0) - np.diff(q_true, 2, axis=0)
    return float(np.sqrt(np.mean(extra ** 2))) / dt ** 2
