"""Arm solver: SLSQP over the first joints, the last two (wrist) joints in closed form.

For joints x = q[:n] (the wrist joints held at their last values) SLSQP minimises::

    f(x) = w_p |p(x) - p*|^2 + w_o (3 - tr(R*^T R(x))) + w_s |x - x_prev|^2 + w_n |x - x_rest|^2

with p, R the end-effector (palm) position and rotation. Analytic gradient from the hinge
Jacobian: df/dx_i = 2 w_p Jp_i . e - w_o w_i . v + 2 w_s (x_i - x_prev_i) + 2 w_n (x_i - x_rest_i),
where the posture term (small) only settles the arm's redundancy toward the rest posture (the
elbow stays where a person expects it, away from the table), w_i is the joint's
world axis and v = vex-like (M12 - M21, M20 - M02, M01 - M10) of M = R R*^T. Then the two wrist
joints are solved in closed form (two Paden-Kahan subproblem-1 rotations) so the palm orientation
best matches R*, and the two steps alternate ``alternations`` times. Unreachable targets simply
leave a residual: SLSQP returns the closest reachable pose within the joint box.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.config import ArmConfig
from retarget.kin import PointChain, PointSpec
from retarget.slsqp import minimize_linear

LIMIT_EPS = 1e-3


@dataclass(frozen=True)
class ArmSolution:
    q: np.ndarray                   # (7,) arm joints in config order
    pos_err_mm: float
    rot_err_deg: float
    at_limits: tuple[str, ...]
    iterations: int                 # SLSQP iterations summed over the alternations
    solve_ms: float


def _cross(a, b) -> np.ndarray:
    """a x b for 3-vectors: np.cross costs ~10 us of axis handling per call, this ~1 us."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues: rotation matrix (3, 3) of ``angle`` about unit ``axis`` (3,)."""
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


def rotation_angle(axis: np.ndarray, u: np.ndarray, v: np.ndarray) -> float:
    """Angle about unit ``axis`` that best turns ``u`` onto ``v`` (Paden-Kahan subproblem 1)."""
    up, vp = u - axis * (axis @ u), v - axis * (axis @ v)
    return float(np.arctan2(axis @ _cross(up, vp), up @ vp))


def _angle_dist(a: float, b: float) -> float:
    return abs((a - b + np.pi) % (2 * np.pi) - np.pi)


def orientation_error_deg(R: np.ndarray, R_star: np.ndarray) -> float:
    c = np.clip((np.trace(R_star.T @ R) - 1) / 2, -1.0, 1.0)
    return float(np.degrees(np.arccos(c)))


class ArmSolver:
    """One arm of one embodiment; warm-started from its previous solution."""

    def __init__(self, model: mujoco.MjModel, cfg: ArmConfig, side: str, q_init: np.ndarray | None = None):
        self.cfg, self.side = cfg, side
        names = cfg.joint_names(side)
        self.chain = PointChain(model, names, [PointSpec(site=cfg.ee_site.format(side=side))], f"arm[{side}]")
        self.site = model.site(cfg.ee_site.format(side=side)).id
        self.n = cfg.n_solved
        self.bounds = list(zip(self.chain.lower[:self.n], self.chain.upper[:self.n]))
        self.q = np.clip(np.zeros(len(names)) if q_init is None else np.asarray(q_init, float),
                         self.chain.lower, self.chain.upper)
        self.rest = self.q[:self.n].copy()        # the posture the redundancy is settled toward
        self.chain.fk(self.q)
        self.shoulder = self.chain.body_frame(cfg.shoulder_body.format(side=side))[0]
        self._key: bytes | None = None                          # the point _val was computed at
        self._val: tuple[float, np.ndarray] = (0.0, np.zeros(0))
        self.direct_slsqp = True           # False: through scipy.optimize.minimize (same SLSQP, slower)

    # -- kinematics -----------------------------------------------------------------------------
    def pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-effector (position (3,), rotation (3, 3)) at arm joints q (7,)."""
        p = self.chain.fk(q)[0]
        return p, self.chain.data.site_xmat[self.site].reshape(3, 3).copy()

    def _eval(self, x, q_wrist, p_star, R_star, x_prev):
        """Cost and gradient at x (n,), cached because SLSQP asks for them separately."""
        key = x.tobytes()
        if key == self._key:
            return self._val
        cfg = self.cfg
        q = np.concatenate([x, q_wrist])
        p, R = self.pose(q)
        Jp = self.chain.jacobian(p[None])[0][:, :self.n]                 # (3, n)
        Jr = (self.chain.data.xaxis[self.chain.jids] * self.chain.mask[0][:, None]).T[:, :self.n]
        e, M, dx, dr = p - p_star, R @ R_star.T, x - x_prev, x - self.rest
        v = np.array([M[1, 2] - M[2, 1], M[2, 0] - M[0, 2], M[0, 1] - M[1, 0]])
        f = cfg.position_weight * e @ e + cfg.orientation_weight * (3.0 - np.trace(M)) \
            + cfg.smoothness_weight * dx @ dx + cfg.posture_weight * dr @ dr
        g = 2 * cfg.position_weight * Jp.T @ e - cfg.orientation_weight * Jr.T @ v + 2 * cfg.smoothness_weight * dx \
            + 2 * cfg.posture_weight * dr
        self._key, self._val = key, (f, g)
        return f, g

    def cost(self, x, q_wrist, p_star, R_star, x_prev) -> float:
        self._key = None
        return self._eval(np.asarray(x, float), q_wrist, p_star, R_star, x_prev)[0]

    def gradient(self, x, q_wrist, p_star, R_star, x_prev) -> np.ndarray:
        self._key = None
        return self._eval(np.asarray(x, float), q_wrist, p_star, R_star, x_prev)[1]

    def wrist_closed_form(self, x: np.ndarray, R_star: np.ndarray, q_prev: np.ndarray) -> np.ndarray:
        """The last two joints (2,) that best orient the palm as ``R_star`` given joints x (n,)."""
        q0 = np.concatenate([x, [0.0, 0.0]])
        _, R0 = self.pose(q0)
        a6, a7 = (self.chain.data.xaxis[self.chain.jids[self.n + i]].copy() for i in (0, 1))
        G = R_star @ R0.T                          # = Rot(a6, q6) Rot(a7, q7)
        q6 = rotation_angle(a6, a7, G @ a7)
        u = _cross(a7, (1.0, 0.0, 0.0) if abs(a7[0]) < 0.9 else (0.0, 1.0, 0.0))
        q7 = rotation_angle(a7, u, rotation(a6, -q6) @ G @ u)
        return np.array([self._wrap(q6, self.n, q_prev[self.n]), self._wrap(q7, self.n + 1, q_prev[self.n + 1])])

    def _wrap(self, angle: float, i: int, prev: float) -> float:
        """The 2*pi-equivalent of ``angle`` inside joint i's range closest to ``prev``, else clipped."""
        lo, hi = self.chain.lower[i], self.chain.upper[i]
        cands = [angle + 2 * np.pi * k for k in (-2, -1, 0, 1, 2)]
        inside = [c for c in cands if lo <= c <= hi]
        if inside:
            return min(inside, key=lambda c: abs(c - prev))
        return lo if _angle_dist(angle, lo) <= _angle_dist(angle, hi) else hi

    # -- the solve ------------------------------------------------------------------------------
    def _preconditioner(self, x0, wrist) -> np.ndarray:
        """S (n, n) with S^T H S = I for the Gauss-Newton Hessian H at x0.

        SLSQP starts its quasi-Newton model from the identity; in z = S^-1 (x - x0) that identity
        is already the right curvature, so the first step is a Gauss-Newton step and a warm-started
        tick converges in two or three iterations instead of ten.
        """
        cfg = self.cfg
        p, _ = self.pose(np.concatenate([x0, wrist]))
        Jp = self.chain.jacobian(p[None])[0][:, :self.n]
        Jr = (self.chain.data.xaxis[self.chain.jids] * self.chain.mask[0][:, None]).T[:, :self.n]
        H = 2 * cfg.position_weight * Jp.T @ Jp + 2 * cfg.orientation_weight * Jr.T @ Jr
        H += (2 * cfg.smoothness_weight + 2 * cfg.posture_weight + 1e-6) * np.eye(self.n)
        return np.linalg.inv(np.linalg.cholesky(H)).T

    def _slsqp(self, x0, wrist, p_star, R_star, x_prev):
        """One bounded SLSQP solve of the first n joints, in preconditioned coordinates."""
        S = self._preconditioner(x0, wrist)
        lo, hi = self.chain.lower[:self.n], self.chain.upper[:self.n]
        A = np.vstack([S, -S])
        b = np.concatenate([x0 - lo, hi - x0])

        def fun(z):
            f, g = self._eval(x0 + S @ z, wrist, p_star, R_star, x_prev)
            return f, S.T @ g

        res = minimize_linear(fun, np.zeros(self.n), A, b, self.cfg.max_iter, self.cfg.ftol, self.direct_slsqp)
        return np.clip(x0 + S @ res.x, lo, hi), res.nit

    def solve(self, p_star: np.ndarray, R_star: np.ndarray) -> ArmSolution:
        """Joints (7,) that bring the end-effector to (p_star (3,), R_star (3, 3)) or as near as reachable."""
        t0 = time.perf_counter()
        q_prev, q = self.q.copy(), self.q.copy()
        x_prev, iters = q_prev[:self.n], 0
        q[self.n:] = self.wrist_closed_form(q[:self.n], R_star, q_prev)   # predict the wrist first
        for _ in range(self.cfg.alternations):
            self._key = None
            x, nit = self._slsqp(q[:self.n], q[self.n:].copy(), p_star, R_star, x_prev)
            iters += nit
            q = np.concatenate([x, self.wrist_closed_form(x, R_star, q_prev)])
        if not np.all(np.isfinite(q)):
            raise FloatingPointError(f"arm[{self.side}] solve produced non-finite joints")
        self.q = q
        p, R = self.pose(q)
        lo, hi = self.chain.lower, self.chain.upper
        near = (q - lo < LIMIT_EPS) | (hi - q < LIMIT_EPS)
        at = tuple(self.chain.joint_names[i] for i in np.flatnonzero(near))
        return ArmSolution(q, float(np.linalg.norm(p - p_star) * 1e3), orientation_error_deg(R, R_star), at, iters,
                           (time.perf_counter() - t0) * 1e3)

    def reset(self, q: np.ndarray) -> None:
        """Warm start and smoothness reference at ``q`` (7,); forgets any cached evaluation."""
        self.q = np.clip(np.asarray(q, float), self.chain.lower, self.chain.upper)
        self._key = None
