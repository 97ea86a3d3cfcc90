"""Hand solver: fit the robot hand's keypoints to human keypoints by bounded, damped Gauss-Newton.

Cost over the free joint variables u (coupled joints follow q = C u + c0)::

    sum_k w_k |p_k(q) - t_k|^2 + sum_f w_f(t) |(p_th - p_f)(q) - (t_th - t_f)|^2
        + lambda_t |u - u_prev|^2 + lambda_0 |u - u_rest|^2

with p_k the robot keypoints in the robot palm frame and t_k the human keypoints in the same frame
(scaled by the profile's hand scale). The pinch terms (thumb tip to each fingertip) get a weight
that grows as the human closes the pinch: w_f = pinch_weight / (1 + (d_f / pinch_distance)^2).
Each iteration: one FK + analytic Jacobian, one small linear solve, projection onto the joint box.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.config import HandConfig
from retarget.kin import PointChain, joint_ids
from retarget.nodes import TIPS, hand_frame
from retarget.profile import finger_length
from teleop.errors import ConfigError

LIMIT_EPS = 1e-3           # rad: a joint this close to a bound counts as "at limit"


@dataclass(frozen=True)
class HandSolution:
    q: np.ndarray                  # (n,) all hand joints, in config order
    residual_mm: np.ndarray        # (21,) |robot keypoint - target| per node, robot scale
    at_limits: tuple[str, ...]     # joint names within LIMIT_EPS of a bound
    iterations: int
    solve_ms: float


def _coupling(model, cfg: HandConfig, side: str, where: str):
    """(C (n, m), c0 (n,), free indices) from the config's couplings: q_dep = ratio q_lead + offset."""
    names = cfg.joint_names(side)
    index = {n: i for i, n in enumerate(names)}
    deps = {}
    for c in cfg.couplings:
        dep, lead = c["joint"].format(side=side), c["leader"].format(side=side)
        if dep not in index or lead not in index:
            raise ConfigError(f"{where}.couplings: {dep!r} and {lead!r} must both be hand joints")
        deps[index[dep]] = (index[lead], float(c.get("ratio", 1.0)), float(c.get("offset", 0.0)))
    free = [i for i in range(len(names)) if i not in deps]
    col = {i: k for k, i in enumerate(free)}
    C, c0 = np.zeros((len(names), len(free))), np.zeros(len(names))
    for i in free:
        C[i, col[i]] = 1.0
    for i, (lead, ratio, offset) in deps.items():
        if lead in deps:
            raise ConfigError(f"{where}.couplings: leader {names[lead]!r} is itself coupled")
        C[i, col[lead]], c0[i] = ratio, offset
    return C, c0, np.array(free)


def _free_bounds(lower, upper, C, c0):
    """Box on u so every joint (free and coupled) stays within its own range."""
    lo, hi = np.full(C.shape[1], -np.inf), np.full(C.shape[1], np.inf)
    for i in range(C.shape[0]):
        k = np.flatnonzero(C[i])
        if k.size == 0:
            continue
        k, a = k[0], C[i, k[0]]
        b1, b2 = (lower[i] - c0[i]) / a, (upper[i] - c0[i]) / a
        lo[k], hi[k] = max(lo[k], min(b1, b2)), min(hi[k], max(b1, b2))
    if np.any(lo > hi):
        raise ConfigError("hand couplings leave an empty joint range")
    return lo, hi


class HandSolver:
    """One hand of one embodiment; ``solve`` is warm-started from the previous solution."""

    def __init__(self, model: mujoco.MjModel, cfg: HandConfig, side: str):
        where = f"hand[{side}]"
        self.cfg, self.side = cfg, side
        self.chain = PointChain(model, cfg.joint_names(side), cfg.point_specs(side), where)
        self.chain.set_fixed({k.format(side=side): v for k, v in cfg.fixed.items()})
        joint_ids(model, [k.format(side=side) for k in cfg.fixed], f"{where}.fixed")
        self.C, self.c0, _ = _coupling(model, cfg, side, where)
        self.identity_coupling = self.C.shape[0] == self.C.shape[1] and np.array_equal(self.C, np.eye(len(self.C)))
        self.lo, self.hi = _free_bounds(self.chain.lower, self.chain.upper, self.C, self.c0)
        self.weights = cfg.keypoint_weight_vector()
        self._tips = np.array(TIPS[1:])
        rest = np.array([cfg.rest.get(n.removeprefix(f"{side}_"), 0.0) for n in self.chain.joint_names])
        self.u_rest = np.clip(np.linalg.lstsq(self.C, rest - self.c0, rcond=None)[0], self.lo, self.hi)
        self.u = self.u_rest.copy()
        self._root(cfg.root_body.format(side=side))
        self.neutral_frame = self._neutral_frame()
        zero = np.clip(np.zeros_like(self.u), self.lo, self.hi)
        self.hand_length = finger_length(self.keypoints(self.q_of(zero)))   # for the profile's hand scale

    # -- kinematics in the palm frame ------------------------------------------------------------
    def _root(self, body: str) -> None:
        self.chain.fk(self.q_of(self.u))
        self.root_pos, self.root_rot = self.chain.body_frame(body)

    def q_of(self, u: np.ndarray) -> np.ndarray:
        return self.C @ u + self.c0

    def keypoints(self, q: np.ndarray) -> np.ndarray:
        """Robot keypoints (21, 3) in the palm (root body) frame at hand joints q (n,)."""
        return (self.chain.fk(q) - self.root_pos) @ self.root_rot

    def keypoint_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(keypoints (21, 3), d keypoints / d u (21, 3, m)) in the palm frame."""
        local = (self.chain.fk(q) - self.root_pos) @ self.root_rot
        J = self.chain.jacobian(local, self.root_pos, self.root_rot)
        return local, (J if self.identity_coupling else J @ self.C)

    def _neutral_frame(self) -> np.ndarray:
        """Rotation (3, 3) of the keypoint-derived hand frame in the palm frame, at zero joints.

        Human keypoints are expressed in the keypoint-derived frame; this constant maps that frame
        to the robot's palm frame, so no hand needs a hand-written frame convention.
        """
        zero = np.clip(np.zeros_like(self.u), self.lo, self.hi)
        _, rot = hand_frame(self.keypoints(self.q_of(zero)), self.cfg.chirality(self.side))
        return rot

    # -- the solve -------------------------------------------------------------------------------
    def _residuals(self, p, J, target, w_sqrt, pinch_sqrt):
        """Stacked weighted residuals (3K + 12,) and their Jacobian (3K + 12, m)."""
        th, tips = TIPS[0], self._tips
        r_kp = (w_sqrt[:, None] * (p - target)).ravel()
        J_kp = (w_sqrt[:, None, None] * J).reshape(-1, J.shape[2])
        r_p = (pinch_sqrt[:, None] * ((p[th] - p[tips]) - (target[th] - target[tips]))).ravel()
        J_p = (pinch_sqrt[:, None, None] * (J[th] - J[tips])).reshape(-1, J.shape[2])
        return np.concatenate([r_kp, r_p]), np.concatenate([J_kp, J_p])

    def pinch_weights(self, target: np.ndarray) -> np.ndarray:
        d = np.linalg.norm(target[TIPS[0]] - target[list(TIPS[1:])], axis=1)
        return self.cfg.pinch_weight / (1.0 + (d / self.cfg.pinch_distance) ** 2)

    def solve(self, target: np.ndarray, mask: np.ndarray | None = None, iterations: int | None = None) -> HandSolution:
        """Fit to ``target`` (21, 3) in the palm frame (robot scale); ``mask`` (21,) 0 for missing nodes."""
        t0 = time.perf_counter()
        cfg = self.cfg
        w = self.weights if mask is None else self.weights * mask
        w_sqrt, pinch_sqrt = np.sqrt(w), np.sqrt(self.pinch_weights(target))
        if mask is not None:
            pinch_sqrt = pinch_sqrt * mask[TIPS[0]] * mask[list(TIPS[1:])]
        u_prev, u = self.u.copy(), self.u.copy()
        reg = cfg.temporal_weight + cfg.rest_weight
        eye = np.eye(u.size)
        it = 0
        for it in range(1, (iterations or cfg.iterations) + 1):
            p, J = self.keypoint_jacobian(self.q_of(u))
            r, Jr = self._residuals(p, J, target, w_sqrt, pinch_sqrt)
            g = Jr.T @ r + cfg.temporal_weight * (u - u_prev) + cfg.rest_weight * (u - self.u_rest)
            H = Jr.T @ Jr + (reg + cfg.damping) * eye
            step = np.linalg.solve(H, -g)
            u_new = np.clip(u + step, self.lo, self.hi)
            done = np.max(np.abs(u_new - u)) < cfg.tolerance
            u = u_new
            if done:
                break
        self.u = u
        q = self.q_of(u)
        resid = np.linalg.norm(self.keypoints(q) - target, axis=1) * 1e3
        names = self.chain.joint_names
        lower, upper = self.chain.lower, self.chain.upper
        at = tuple(n for n, v, lo, hi in zip(names, q, lower, upper) if v - lo < LIMIT_EPS or hi - v < LIMIT_EPS)
        return HandSolution(q, resid, at, it, (time.perf_counter() - t0) * 1e3)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Warm start from ``q`` (n,) (default: the rest pose)."""
        self.u = self.u_rest.copy() if q is None else np.clip(np.linalg.lstsq(self.C, q - self.c0, rcond=None)[0], self.lo, self.hi)
