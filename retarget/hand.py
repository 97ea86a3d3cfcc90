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
from scipy.linalg.lapack import dposv

from retarget.config import HandConfig
from retarget.kin import PointChain, joint_ids
from retarget.nodes import N_NODES, TIPS, hand_frame
from retarget.profile import finger_length
from teleop.core.errors import ConfigError

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


def _spd_solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """H^-1 g for a symmetric positive definite H (m, m): LAPACK ``posv`` without numpy's wrapper cost."""
    _, x, info = dposv(H, g, lower=1, overwrite_a=1, overwrite_b=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"hand normal equations not positive definite (posv info {info})")
    return x


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
        self._pinch_rows = np.zeros((len(self._tips), N_NODES))              # thumb tip - each fingertip
        self._pinch_rows[:, TIPS[0]] = 1.0
        self._pinch_rows[np.arange(len(self._tips)), self._tips] = -1.0
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
        self.neutral_keypoints = self.keypoints(self.q_of(zero))
        _, rot = hand_frame(self.neutral_keypoints, self.cfg.chirality(self.side))
        return rot

    # -- the solve -------------------------------------------------------------------------------
    def pinch_weights(self, target: np.ndarray) -> np.ndarray:
        d = np.linalg.norm(target[TIPS[0]] - target[list(TIPS[1:])], axis=1)
        return self.cfg.pinch_weight / (1.0 + (d / self.cfg.pinch_distance) ** 2)

    def term_matrix(self, target: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """A (K + 4, K): rows = sqrt(w_k) e_k, then sqrt(w_f) (e_thumb_tip - e_tip_f).

        The data cost is |A (p - t)|^2 (Frobenius) for points p, targets t (K, 3): every residual
        term from one matrix product instead of stacking keypoint and pinch terms separately.
        """
        w = self.weights if mask is None else self.weights * mask
        pinch = self.pinch_weights(target)
        if mask is not None:
            pinch = pinch * mask[TIPS[0]] * mask[self._tips]
        A = np.vstack([np.diag(np.sqrt(w)), self._pinch_rows * np.sqrt(pinch)[:, None]])
        return A

    def solve(self, target: np.ndarray, mask: np.ndarray | None = None, iterations: int | None = None) -> HandSolution:
        """Fit to ``target`` (21, 3) in the palm frame (robot scale); ``mask`` (21,) 0 for missing nodes.

        Works in the world frame of the private ``MjData`` (the palm frame is a fixed rigid motion of
        it), so each iteration is one ``mj_kinematics``, the sparse hinge Jacobian, one (K+4, K)
        product and a Cholesky solve of the (m, m) normal equations.
        """
        t0 = time.perf_counter()
        cfg = self.cfg
        A = self.term_matrix(target, mask)
        At = A @ (self.root_pos + target @ self.root_rot.T)                 # (K + 4, 3) world-frame terms
        u_prev, u = self.u.copy(), self.u.copy()
        prior, reg = self._prior(u_prev)
        diag = np.full(u.size, reg + cfg.damping)
        it = 0
        for it in range(1, (iterations or cfg.iterations) + 1):  # noqa: B007 - the count is read after the loop
            r, Jr = self.linearise(u, A, At)
            g = Jr.T @ r + reg * (u - prior)
            H = Jr.T @ Jr
            H.flat[::u.size + 1] += diag
            step = _spd_solve(H, g)
            u_new = np.minimum(np.maximum(u - step, self.lo), self.hi)
            done = np.max(np.abs(u_new - u)) < cfg.tolerance
            u = u_new
            if done:
                break
        return self._finish(u, target, it, t0)

    def linearise(self, u: np.ndarray, A: np.ndarray, At: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Data residuals r (3(K+4),) = vec(A p(u) - At) and dr/du (3(K+4), m), world frame.

        ``At`` (K + 4, 3) is A times the targets in the world frame of the private ``MjData``.
        """
        p = self.chain.fk(self.q_of(u))
        J = self.chain.jacobian(p).reshape(p.shape[0], -1)                  # (K, 3 n)
        r = (A @ p - At).reshape(-1)
        Jr = (A @ J).reshape(r.size, -1)
        return r, (Jr if self.identity_coupling else Jr @ self.C)

    def _prior(self, u_prev: np.ndarray) -> tuple[np.ndarray, float]:
        """(point the regularisers pull toward (m,), their total weight): temporal + rest in one term."""
        cfg = self.cfg
        reg = cfg.temporal_weight + cfg.rest_weight
        return (cfg.temporal_weight * u_prev + cfg.rest_weight * self.u_rest) / max(reg, 1e-300), reg

    def _finish(self, u, target, it, t0) -> HandSolution:
        self.u = u
        q = self.q_of(u)
        resid = np.linalg.norm(self.keypoints(q) - target, axis=1) * 1e3
        near = (q - self.chain.lower < LIMIT_EPS) | (self.chain.upper - q < LIMIT_EPS)
        at = tuple(self.chain.joint_names[i] for i in np.flatnonzero(near))
        return HandSolution(q, resid, at, it, (time.perf_counter() - t0) * 1e3)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Warm start from ``q`` (n,) (default: the rest pose)."""
        if q is None:
            self.u = self.u_rest.copy()
        else:
            self.u = np.clip(np.linalg.lstsq(self.C, q - self.c0, rcond=None)[0], self.lo, self.hi)
