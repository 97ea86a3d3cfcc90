"""Arm solver: SLSQP over all joints in a per-tick trust region, the wrist predicted in closed form.

For joints q (7,) SLSQP minimises::

    f(q) = w_p |p(q) - p*|^2 + w_o (3 - tr(R*^T R(q))) + w_s |q - q_prev|^2 + w_n |q - q_rest|^2
           + w_l sum_i (max(0, m - (q_i - lo_i))^2 + max(0, m - (hi_i - q_i))^2)

with p, R the end-effector (palm) position and rotation, subject to the joint limits intersected
with a trust region ``|q - q_prev| <= max_step`` (no joint moves more than that in one tick, so a
smooth input gives a continuous output) and, when another arm is near, linearised separation
constraints (``constraints=``). The posture term settles the redundancy toward the rest posture;
the limit term (margin m) keeps joints off their limits when the redundancy allows, so a warm
start does not sit on a limit it cannot leave. Analytic gradient from the hinge Jacobian:
df/dq_i = 2 w_p Jp_i . e - w_o w_i . v + 2 w_s (q_i - q_prev_i) + 2 w_n (q_i - q_rest_i) + limit term,
w_i the joint's world axis and v = (M12 - M21, M20 - M02, M01 - M10) of M = R R*^T.

The last two (wrist) joints are first predicted in closed form (two Paden-Kahan subproblem-1
rotations) for the palm orientation R*, each angle unwrapped against its previous value (the
2*pi-equivalent nearest to it, then clipped to the joint range: never a flip to the far limit).

Escape from local minima: when the warm-started answer misses the position by more than
``escape_error_mm``, a few more starts are solved (the rest posture, the answer with its limit-bound
joints reflected into their range, a fixed spread of postures; two per tick, round robin); one that
is much better becomes a goal the arm then moves to at ``max_step`` per tick (status
``reconfiguring``), re-solved every tick as the target moves. Unreachable targets leave a residual.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.config import ArmConfig
from retarget.kin import PointChain, PointSpec
from retarget.slsqp import minimize_linear
from teleop.core.errors import ConfigError

LIMIT_EPS = 1e-3


@dataclass(frozen=True)
class ArmSolution:
    q: np.ndarray                   # (7,) arm joints in config order
    pos_err_mm: float
    rot_err_deg: float
    at_limits: tuple[str, ...]
    iterations: int                 # SLSQP iterations summed over this tick's solves
    solve_ms: float
    status: str = "ok"              # ok | iteration_cap | reconfiguring | failed
    message: str = ""               # why, when not ok
    limited: bool = False           # the trust region held a joint back this tick (or reconfiguring)


@dataclass(frozen=True)
class LinearConstraints:
    """Rows ``G (k, 7)`` and ``h (k,)`` of ``G (q - q0) + h >= 0`` around the joints ``q0`` (7,)."""

    G: np.ndarray
    h: np.ndarray
    q0: np.ndarray


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


def _halton(i: int, base: int) -> float:
    """The i-th element of the van der Corput sequence in ``base`` (one axis of a Halton set)."""
    f, r = 1.0, 0.0
    while i > 0:
        f /= base
        r += f * (i % base)
        i //= base
    return r


def orientation_error_deg(R: np.ndarray, R_star: np.ndarray) -> float:
    c = np.clip((np.trace(R_star.T @ R) - 1) / 2, -1.0, 1.0)
    return float(np.degrees(np.arccos(c)))


SLSQP_MODES = {0: "converged", 9: "iteration cap"}
NULL_LEVER = 0.3           # m: palm rotation counted as the motion of a point this far out
BRANCH_GAIN = 1.0          # rad^2 nearer the rest posture another configuration family must be to move to it
PREDICT_DEG = 1.0          # the palm target turned less than this since the last tick: SLSQP alone follows
GOAL_TICKS = 75            # a goal not reached in 3 s (the target keeps moving off) is dropped


class ArmSolver:
    """One arm of one embodiment; warm-started from its previous solution."""

    def __init__(self, model: mujoco.MjModel, cfg: ArmConfig, side: str, q_init: np.ndarray | None = None):
        self.cfg, self.side = cfg, side
        names = cfg.joint_names(side)
        self.chain = PointChain(model, names, [PointSpec(site=cfg.ee_site.format(side=side))], f"arm[{side}]")
        self.site = model.site(cfg.ee_site.format(side=side)).id
        if not self.chain.mask.all():
            raise ConfigError(f"arm[{side}]: {cfg.ee_site.format(side=side)!r} must be moved by every arm joint")
        self.n = cfg.n_solved
        self.nq = len(names)
        self.lower, self.upper = self.chain.lower.copy(), self.chain.upper.copy()
        self._lim_lo, self._lim_hi = self.lower + cfg.limit_margin, self.upper - cfg.limit_margin
        self.q = np.clip(np.zeros(self.nq) if q_init is None else np.asarray(q_init, float), self.lower, self.upper)
        self.rest = self.q.copy()                 # the posture the redundancy is settled toward
        self.chain.fk(self.q)
        self.shoulder = self.chain.body_frame(cfg.shoulder_body.format(side=side))[0]
        self._key: bytes | None = None                          # the point _val was computed at
        self._val: tuple[float, np.ndarray] = (0.0, np.zeros(0))
        self._args: tuple | None = None                         # the solve's (p_star, R_star, x_prev)
        self.direct_slsqp = True           # False: through scipy.optimize.minimize (same SLSQP, slower)
        self.goal: np.ndarray | None = None      # a better configuration the arm is moving to
        self._last_target: tuple[np.ndarray, np.ndarray] | None = None
        self._seed_turn = 0
        self._goal_ticks = 0
        self._step = cfg.max_step
        self.seeds = self._seed_library()

    # -- kinematics -----------------------------------------------------------------------------
    def pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-effector (position (3,), rotation (3, 3)) at arm joints q (7,)."""
        p = self.chain.fk(q)[0]
        return p, self.chain.data.site_xmat[self.site].reshape(3, 3).copy()

    def _jacobians(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position (3, 7), rotation (3, 7)) Jacobians of the palm at point p after the last FK:
        every arm joint moves the palm, so the hinge formula a_j x (p - c_j) needs no mask."""
        d = self.chain.data
        a, lever = d.xaxis[self.chain.jids], p - d.xanchor[self.chain.jids]
        Jp = a[:, [1, 2, 0]] * lever[:, [2, 0, 1]] - a[:, [2, 0, 1]] * lever[:, [1, 2, 0]]
        return Jp.T, a.T

    def _limit_term(self, q: np.ndarray) -> tuple[float, np.ndarray]:
        d = np.maximum(0.0, self._lim_lo - q) - np.maximum(0.0, q - self._lim_hi)   # inside the margins
        return float(d @ d), -2.0 * d

    def _eval(self, x, p_star, R_star, x_prev):
        """Cost and gradient at joints x (7,), cached because SLSQP asks for them separately.
        ``x_prev`` None: no smoothness term (a search from a start that is not the last answer)."""
        key = x.tobytes()
        if key == self._key:
            return self._val
        cfg = self.cfg
        p, R = self.pose(x)
        Jp, Jr = self._jacobians(p)
        e, M, dr = p - p_star, R @ R_star.T, x - self.rest
        dx = np.zeros(self.nq) if x_prev is None else x - x_prev
        v = np.array([M[1, 2] - M[2, 1], M[2, 0] - M[0, 2], M[0, 1] - M[1, 0]])
        lim, dlim = self._limit_term(x)
        f = cfg.position_weight * e @ e + cfg.orientation_weight * (3.0 - np.trace(M)) \
            + cfg.smoothness_weight * dx @ dx + cfg.posture_weight * dr @ dr + cfg.limit_weight * lim
        g = 2 * cfg.position_weight * Jp.T @ e - cfg.orientation_weight * Jr.T @ v + 2 * cfg.smoothness_weight * dx \
            + 2 * cfg.posture_weight * dr + cfg.limit_weight * dlim
        self._key, self._val = key, (f, g)
        return f, g

    def cost(self, x, p_star, R_star, x_prev) -> float:
        self._key = None
        return self._eval(np.asarray(x, float), p_star, R_star, x_prev)[0]

    def gradient(self, x, p_star, R_star, x_prev) -> np.ndarray:
        self._key = None
        return self._eval(np.asarray(x, float), p_star, R_star, x_prev)[1]

    def wrist_closed_form(self, x: np.ndarray, R_star: np.ndarray, q_prev: np.ndarray) -> np.ndarray:
        """The last two joints (2,) that best orient the palm as ``R_star`` given joints x (n,),
        each the 2*pi-equivalent nearest its value in ``q_prev`` (7,), clipped to its range."""
        q0 = np.concatenate([x[:self.n], [0.0, 0.0]])
        _, R0 = self.pose(q0)
        a6, a7 = (self.chain.data.xaxis[self.chain.jids[self.n + i]].copy() for i in (0, 1))
        G = R_star @ R0.T                          # = Rot(a6, q6) Rot(a7, q7)
        q6 = rotation_angle(a6, a7, G @ a7)
        u = _cross(a7, (1.0, 0.0, 0.0) if abs(a7[0]) < 0.9 else (0.0, 1.0, 0.0))
        q7 = rotation_angle(a7, u, rotation(a6, -q6) @ G @ u)
        return np.array([self._unwrap(q6, self.n, q_prev[self.n]), self._unwrap(q7, self.n + 1, q_prev[self.n + 1])])

    def _unwrap(self, angle: float, i: int, prev: float) -> float:
        """The 2*pi-equivalent of ``angle`` nearest ``prev``, clipped to joint i's range.

        Continuity first: an equivalent inside the range but more than pi away would be a flip of
        the wrist (the old rule, which turned the wrist 5.6 rad in one tick on a steady reach).
        """
        near = prev + (angle - prev + np.pi) % (2 * np.pi) - np.pi
        return float(np.clip(near, self.lower[i], self.upper[i]))

    # -- the solve ------------------------------------------------------------------------------
    def _preconditioner(self, x0) -> np.ndarray:
        """S (7, 7) with S^T H S = I for the Gauss-Newton Hessian H at x0.

        SLSQP starts its quasi-Newton model from the identity; in z = S^-1 (x - x0) that identity
        is already the right curvature, so the first step is a Gauss-Newton step and a warm-started
        tick converges in two or three iterations instead of ten.
        """
        cfg = self.cfg
        if self._args is not None:
            self._eval(x0, *self._args)              # FK at x0, and SLSQP's first evaluation cached
        else:
            self.pose(x0)
        Jp, Jr = self._jacobians(self.chain.data.site_xpos[self.site].copy())
        H = 2 * cfg.position_weight * Jp.T @ Jp + 2 * cfg.orientation_weight * Jr.T @ Jr
        H += (2 * cfg.smoothness_weight + 2 * cfg.posture_weight + 1e-6) * np.eye(self.nq)
        return np.linalg.inv(np.linalg.cholesky(H)).T

    def _slsqp(self, x0, p_star, R_star, x_prev, lo, hi, constraints: LinearConstraints | None, max_iter: int):
        """One SLSQP solve from x0 inside the box [lo, hi] (and ``constraints``), in preconditioned
        coordinates. Returns (x, iterations, SciPy mode); x never costs more than x0."""
        self._key, self._args = None, (p_star, R_star, x_prev)
        S = self._preconditioner(x0)
        rows, bounds = [S, -S], [x0 - lo, hi - x0]
        if constraints is not None and constraints.G.size:
            rows.append(constraints.G @ S)
            bounds.append(constraints.h + constraints.G @ (x0 - constraints.q0))
        A, b = np.vstack(rows), np.concatenate(bounds)

        def fun(z):
            f, g = self._eval(x0 + S @ z, p_star, R_star, x_prev)
            return f, S.T @ g

        res = minimize_linear(fun, np.zeros(self.nq), A, b, max_iter, self.cfg.ftol, self.direct_slsqp)
        x = np.clip(x0 + S @ res.x, lo, hi)
        if not np.all(np.isfinite(x)):
            return x0.copy(), res.nit, res.mode if res.mode not in (0, 9) else -1
        # Feasibility first (the separation rows), then cost: never return worse than the start.
        viol = lambda v: float(np.max(-(A @ np.linalg.solve(S, v - x0) + b), initial=0.0))  # noqa: E731
        v_x, v_0 = viol(x), viol(x0)
        if v_x > v_0 + 1e-9 or (v_x >= v_0 - 1e-9 and
                                self.cost(x, p_star, R_star, x_prev) > self.cost(x0, p_star, R_star, x_prev)):
            return x0.copy(), res.nit, res.mode if res.mode not in (0, 9) else -1
        return x, res.nit, res.mode

    def _seed_library(self) -> list[np.ndarray]:
        """Starts for the configuration searches, deterministic: the rest posture, then a Halton
        sequence over the joint box (well spread, no random numbers: same input, same answer)."""
        lo, hi = self.lower, self.upper
        primes = (2, 3, 5, 7, 11, 13, 17, 19, 23)[:self.nq]
        out = [self.rest.copy()]
        for i in range(1, self.cfg.search_starts):
            out.append(lo + (hi - lo) * np.array([_halton(i, b) for b in primes]))
        return out

    def _reflected(self, q: np.ndarray) -> list[np.ndarray]:
        """``q`` with its limit-bound joints reflected into their range (a joint on a limit it
        should leave), or nothing when no joint is near a limit."""
        lo, hi = self.lower, self.upper
        near = (q - lo < 0.05 * (hi - lo)) | (hi - q < 0.05 * (hi - lo))
        return [np.where(near, np.clip(lo + hi - q, lo, hi), q)] if near.any() else []

    def solve(self, p_star: np.ndarray, R_star: np.ndarray, constraints: LinearConstraints | None = None,
              max_step: float | None = None) -> ArmSolution:
        """Joints (7,) that bring the end-effector to (p_star (3,), R_star (3, 3)) or as near as
        reachable; ``max_step`` (rad) narrows this tick's trust region (an engage easing in)."""
        t0 = time.perf_counter()
        cfg = self.cfg
        q_prev = self.q.copy()
        last = self._last_target
        jumped = self._jumped(q_prev, p_star, R_star)
        near = constraints is not None and constraints.G.size > 0
        # Near the other arm the separation rows are linearised: small steps keep them honest.
        self._step = min(cfg.max_step_near if near else cfg.max_step, np.inf if max_step is None else max_step)
        step = np.full(self.nq, self._step)
        lo, hi = np.maximum(self.lower, q_prev - step), np.minimum(self.upper, q_prev + step)
        x0 = q_prev.copy()
        if last is None or orientation_error_deg(last[1], R_star) > PREDICT_DEG:
            x0[self.n:] = np.clip(self.wrist_closed_form(q_prev, R_star, q_prev), lo[self.n:], hi[self.n:])
        q, iters, mode = self._slsqp(x0, p_star, R_star, q_prev, lo, hi, constraints, cfg.max_iter)
        status = "ok" if mode == 0 else ("iteration_cap" if mode == 9 else "failed")
        message = "" if mode in (0, 9) else f"SLSQP exit mode {mode}: kept the best of start and answer"
        q = self._self_motion(q, lo, hi, constraints)
        if constraints is not None and constraints.G.size:
            self.goal = None                  # near the other arm: no configuration changes
        else:
            if jumped and cfg.search_starts > 0:
                iters += self._branch_search(q, p_star, R_star)
            q, iters, status, message = self._escape(q, q_prev, p_star, R_star, iters, status, message)
        if not np.all(np.isfinite(q)):
            raise FloatingPointError(f"arm[{self.side}] solve produced non-finite joints")
        self.q = q
        p, R = self.pose(q)
        near = (q - self.lower < LIMIT_EPS) | (self.upper - q < LIMIT_EPS)
        at = tuple(self.chain.joint_names[i] for i in np.flatnonzero(near))
        limited = status == "reconfiguring" or bool(np.any(np.abs(q - q_prev) >= self._step - 1e-9))
        return ArmSolution(q, float(np.linalg.norm(p - p_star) * 1e3), orientation_error_deg(R, R_star), at, iters,
                           (time.perf_counter() - t0) * 1e3, status, message, limited)

    def _self_motion(self, q: np.ndarray, lo: np.ndarray, hi: np.ndarray, constraints=None) -> np.ndarray:
        """A step along the arm's self-motion (the null space of the palm pose Jacobian) toward the
        rest posture: the palm stays put (to first order), the elbow moves, so the arm drifts back
        into the configuration family it started in, and off limits it was pushed onto, while the
        redundancy allows (gradient projection, Liegeois 1977)."""
        cfg = self.cfg
        if cfg.null_step <= 0 or (constraints is not None and constraints.G.size):
            return q                          # near the other arm: the elbow stays where the constraints put it
        p, _ = self.pose(q)
        Jp, Jr = self._jacobians(p)
        J = np.vstack([Jp, NULL_LEVER * Jr])                         # (6, 7): metres and ~metres
        _, sv, Vt = np.linalg.svd(J)
        basis = Vt[np.count_nonzero(sv > 1e-6 * sv[0]):]             # null space rows (k, 7)
        if basis.size == 0:
            return q
        d = -basis.T @ (basis @ (q - self.rest))
        big = np.max(np.abs(d))
        if big < 1e-9:
            return q
        return np.clip(q + d * min(cfg.null_step / big, 1.0), lo, hi)

    # -- configuration searches -----------------------------------------------------------------
    def _errors(self, q, p_star, R_star) -> tuple[float, float]:
        p, R = self.pose(q)
        return float(np.linalg.norm(p - p_star) * 1e3), orientation_error_deg(R, R_star)

    def _jumped(self, q_prev, p_star, R_star) -> bool:
        """The target jumped since the last solve (the first after a reset, an engage, a step in a
        test) and is far from where the arm is: which configuration family the arm should be in
        is then worth a look. A target that moves smoothly never counts, however far the arm lags."""
        last, self._last_target = self._last_target, (p_star.copy(), R_star.copy())
        if last is not None:
            moved = np.linalg.norm(p_star - last[0]) * 1e3
            if moved <= self.cfg.jump_mm and orientation_error_deg(last[1], R_star) <= self.cfg.jump_deg:
                return False
        e, r = self._errors(q_prev, p_star, R_star)
        return e > self.cfg.jump_mm or r > self.cfg.jump_deg

    def _free_solve(self, start, p_star, R_star, max_iter):
        """SLSQP from ``start`` within the joint limits only (no trust region, no smoothness)."""
        return self._slsqp(start, p_star, R_star, None, self.lower, self.upper, None, max_iter)[:2]

    def _branch_search(self, q, p_star, R_star) -> int:
        """After a jump: solve from every start of the library; among the answers that reach the
        target about as well as the best of them (5 mm, 5 deg; the local answer q included), the one
        nearest the rest posture becomes the goal: the configuration family the ready pose is in,
        which has room for a person's wrist motions. Returns the SLSQP iterations spent."""
        cands, iters = [q], 0
        local, nit = self._free_solve(q, p_star, R_star, self.cfg.escape_max_iter)   # where the walk goes
        cands.append(local)
        iters += nit
        for start in self.seeds:
            x, nit = self._free_solve(start, p_star, R_star, self.cfg.escape_max_iter)
            cands.append(x)
            iters += nit
        errs = [self._errors(x, p_star, R_star) for x in cands]
        best_e = min(e for e, _ in errs)
        near = [(x, r) for x, (e, r) in zip(cands, errs) if e <= best_e + 5.0]
        best_r = min(r for _, r in near)
        good = [x for x, r in near if r <= best_r + 5.0]
        # The walk's own basin unless another family is clearly nearer the rest posture.
        rest_d = lambda x: float(np.sum((x - self.rest) ** 2))  # noqa: E731
        pick = min(good, key=rest_d)
        if any(x is local or x is q for x in good) and rest_d(pick) > rest_d(local) - BRANCH_GAIN:
            pick = q
        self.goal = None if pick is q else pick
        self._goal_ticks = 0
        return iters

    def _escape(self, q, q_prev, p_star, R_star, iters, status, message):
        """Keep moving to the goal, or when the local answer misses by more than
        ``escape_error_mm``, look for a nearby configuration that reaches (one start per tick)."""
        cfg = self.cfg
        err, rot = self._errors(q, p_star, R_star)
        lagging = bool(np.any(np.abs(q - q_prev) >= self._step - 1e-9))    # still on its way: not stuck
        if self.goal is None and err > cfg.escape_error_mm and cfg.escape_starts_per_tick > 0 and not lagging:
            starts = self._reflected(q) + self.seeds
            for k in range(cfg.escape_starts_per_tick):
                x, nit = self._free_solve(starts[(self._seed_turn + k) % len(starts)], p_star, R_star,
                                          cfg.escape_max_iter)
                iters += nit
                e, _ = self._errors(x, p_star, R_star)
                if e < 0.5 * err and np.max(np.abs(x - q_prev)) <= cfg.escape_max_move:
                    self.goal, self._goal_ticks = x, 0
                    break
            self._seed_turn = (self._seed_turn + cfg.escape_starts_per_tick) % len(starts)
        if self.goal is None:
            return q, iters, status, message
        self._goal_ticks += 1
        if self._goal_ticks > GOAL_TICKS:
            self.goal = None                               # chasing a target that keeps moving off: stop
            return q, iters, status, message
        g, nit = self._free_solve(self.goal, p_star, R_star, cfg.max_iter)   # follow the moving target
        iters += nit
        e, r = self._errors(g, p_star, R_star)
        if e > err + 2.0 or r > rot + 2.0:                # the local answer is as good now: drop the goal
            self.goal = None
            return q, iters, status, message
        if np.all(np.abs(g - q_prev) <= self._step):
            self.goal = None
            return g, iters, status, message
        self.goal = g
        return q_prev + np.clip(g - q_prev, -self._step, self._step), iters, "reconfiguring", \
            f"moving to a configuration that reaches the target ({err:.0f} mm off from here)"

    def reset(self, q: np.ndarray) -> None:
        """Warm start and smoothness reference at ``q`` (7,); forgets any cached evaluation or goal."""
        self.q = np.clip(np.asarray(q, float), self.lower, self.upper)
        self._key = None
        self.goal = None
        self._last_target = None
        self._seed_turn = 0
