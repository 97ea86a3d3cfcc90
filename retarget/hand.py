"""Hand solver: fit the robot hand to a human hand by bounded Gauss-Newton with a line search.

Cost over the free joint variables u (coupled joints follow q = C u + c0), p_k(q) the robot keypoints
and t_k the human keypoints, both in the robot palm frame (human ones scaled by the hand scale)::

    sum_k w_k s_d(k) |p_k - t_k|^2                                   positions (contact regime;
                                                                       s = 1 at a digit's base node)
  + sum_b w_b (1 - s_d(b)) |(p_j - p_i) - L_b (t_j - t_i)/|t_j - t_i||^2   bones (proportion regime)
  + sum_f w_f(t) |(p_th - p_f) - (t_th - t_f)|^2                      pinch vectors
  + lambda_t |u - u_prev|^2 + lambda_0 |u - u_rest|^2

A bone term asks each robot bone (i -> j, robot length L_b) to point where the human's does, so a
robot digit longer than the human's (thumb, little finger) keeps the human's shape instead of
curling to shorten itself. ``s_d`` in [0, 1] per digit says how close that digit is to a contact
with the thumb (1 when the human's thumb tip is within ``contact_distance[0]`` of the fingertip, 0
beyond ``[1]``, smoothstep between): closing a pinch hands the digit from bone directions to
positions, whose targets touch when the human's do. With ``bone_weight: 0`` the cost is positions
(every s = 1) plus pinch vectors. The pinch weight grows as the human closes the pinch:
w_f = pinch_weight / (1 + (d_f / pinch_distance)^2).

Each iteration: one FK + analytic Jacobian, a Cholesky solve of the Gauss-Newton normal equations
over the free variables (those at a bound whose gradient pushes outward are held: an active set),
then a backtracking line search along the projection onto the joint box that accepts a point only
if the cost decreases (Armijo); the cost therefore never increases. A solve that cannot descend
from a point that is not stationary reports ``status = "no_descent"``.
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


DIGITS = ((1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16), (17, 18, 19, 20))   # node chains
BONES = tuple((c[i], c[i + 1], d) for d, c in enumerate(DIGITS) for i in range(3))       # (from, to, digit)
ARMIJO = 1e-4              # sufficient-decrease constant of the line search
LINE_SEARCH_STEPS = 6      # halvings before a solve reports that it cannot descend


@dataclass(frozen=True)
class HandSolution:
    q: np.ndarray                  # (n,) all hand joints, in config order
    residual_mm: np.ndarray        # (21,) |robot keypoint - effective target| per node, robot scale
    at_limits: tuple[str, ...]     # joint names within LIMIT_EPS of a bound
    iterations: int
    solve_ms: float
    cost: float = float("nan")     # objective at the answer (<= cost_start)
    cost_start: float = float("nan")   # objective at the warm start
    status: str = "converged"      # converged | iteration_cap | no_descent


def smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


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
        self._digit_of_node = np.array([-1] + [d for d, c in enumerate(DIGITS) for _ in c])
        self._chains = np.array(DIGITS)
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
        nk = self.neutral_keypoints
        self._bone_i, self._bone_j = np.array([b[0] for b in BONES]), np.array([b[1] for b in BONES])
        self._bone_digit = np.array([b[2] for b in BONES])
        self.bone_lengths = np.linalg.norm(nk[self._bone_j] - nk[self._bone_i], axis=1)   # robot, (15,)
        self._bone_rows = np.zeros((len(BONES), N_NODES))
        self._bone_rows[np.arange(len(BONES)), self._bone_j] = 1.0
        self._bone_rows[np.arange(len(BONES)), self._bone_i] = -1.0
        self._bone_w = self.weights[self._bone_j]       # a bone weighs as its distal node
        self._digit_reach = self.bone_lengths.reshape(len(DIGITS), 3).sum(axis=1)   # straight digit, base to tip
        self._p: np.ndarray = np.zeros((0, 3))           # keypoints (world) at the last FK of a solve

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

    # -- the cost ---------------------------------------------------------------------------------
    def pinch_weights(self, target: np.ndarray) -> np.ndarray:
        d = np.linalg.norm(target[TIPS[0]] - target[list(TIPS[1:])], axis=1)
        return self.cfg.pinch_weight / (1.0 + (d / self.cfg.pinch_distance) ** 2)

    def contact(self, target: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """(5,) per digit (thumb first): 1 when the human closes that digit onto the thumb, 0 when
        it is clear of it; the thumb takes the largest of the fingers'. All 1 without bone terms."""
        if self.cfg.bone_weight == 0:
            return np.ones(len(DIGITS))
        near, far = self.cfg.contact_distance
        diff = target[TIPS[0]] - target[self._tips]
        s = smoothstep((far - np.sqrt(np.einsum("ij,ij->i", diff, diff))) / (far - near))
        if mask is not None:
            s = s * mask[TIPS[0]] * mask[self._tips]
        s = np.r_[s.max(), s]
        lo, hi = self.cfg.curl_contact
        if hi > lo:
            # A curled digit (its tip near its base: a grasp) is in contact with what it holds.
            chains = self._chains
            span = np.sqrt(np.sum((target[chains[:, 3]] - target[chains[:, 0]]) ** 2, axis=1))
            curl = 1.0 - span / self._digit_reach
            c = smoothstep((curl - lo) / (hi - lo))
            if mask is not None:
                c = c * mask[chains[:, 0]] * mask[chains[:, 3]]
            s = np.maximum(s, c)
        return s

    def terms(self, target: np.ndarray, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(A (R, K), B (R, 3)): the data cost is |A p - B|^2 (Frobenius) for keypoints p (K, 3) in
        the palm frame. Rows: sqrt(w_k s_d) e_k (positions), sqrt(w_f) (e_thumb_tip - e_tip_f)
        (pinch vectors), sqrt(w_b (1 - s_d)) (e_j - e_i) (bones, with B the robot-length bone
        along the human's)."""
        return self._terms(target, mask)[:2]

    def _terms(self, target, mask):
        """:meth:`terms` and the contact weights (5,) and robot-length bone vectors (15, 3) it used."""
        w = self.weights if mask is None else self.weights * mask
        s = self.contact(target, mask)
        node_s = np.r_[1.0, s[self._digit_of_node[1:]]]
        node_s[self._chains[:, 0]] = 1.0      # digit bases: fixed on the palm, or placed by the palm arch
        diff = target[TIPS[0]] - target[self._tips]
        pinch = self.cfg.pinch_weight / (1.0 + np.einsum("ij,ij->i", diff, diff) / self.cfg.pinch_distance ** 2)
        if mask is not None:
            pinch = pinch * mask[TIPS[0]] * mask[self._tips]
        pos = np.diag(np.sqrt(w * node_s))
        rows = [pos, self._pinch_rows * np.sqrt(pinch)[:, None]]
        cols = [pos @ target, rows[1] @ target]
        bones = None
        if self.cfg.bone_weight > 0:
            bw = self.cfg.bone_weight * self._bone_w * (1.0 - s[self._bone_digit])
            if mask is not None:
                bw = bw * mask[self._bone_i] * mask[self._bone_j]
            v = target[self._bone_j] - target[self._bone_i]
            bones = v * (self.bone_lengths / np.maximum(np.sqrt(np.einsum("ij,ij->i", v, v)), 1e-9))[:, None]
            sw = np.sqrt(bw)[:, None]
            rows.append(self._bone_rows * sw)
            cols.append(sw * bones)
        A, B = np.vstack(rows), np.vstack(cols)
        keep = A.any(axis=1)                  # rows with no weight (an open digit's positions...) cost work only
        return A[keep], B[keep], s, bones

    def term_matrix(self, target: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """A of :meth:`terms`."""
        return self.terms(target, mask)[0]

    def world_terms(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """B of :meth:`terms` for keypoints in the world frame of the private ``MjData``: the palm
        frame is a rigid motion of it, so |A p_world - B_world| = |A p_palm - B|."""
        return B @ self.root_rot.T + A.sum(axis=1)[:, None] * self.root_pos

    def objective(self, u: np.ndarray, target: np.ndarray, mask: np.ndarray | None = None,
                  u_prev: np.ndarray | None = None) -> float:
        """The full cost at u (m,) for a solve warm-started (temporal term) at ``u_prev``."""
        A, B = self.terms(target, mask)
        r = A @ self.keypoints(self.q_of(u)) - B
        prior, reg = self._prior(self.u if u_prev is None else u_prev)
        return float(np.sum(r * r) + reg * np.sum((u - prior) ** 2)) + self._prior_const(u_prev)

    # -- the solve -------------------------------------------------------------------------------
    def solve(self, target: np.ndarray, mask: np.ndarray | None = None, iterations: int | None = None) -> HandSolution:
        """Fit to ``target`` (21, 3) in the palm frame (robot scale); ``mask`` (21,) 0 for missing nodes.

        Works in the world frame of the private ``MjData`` (the palm frame is a fixed rigid motion of
        it), so each iteration is one ``mj_kinematics``, the sparse hinge Jacobian, one (R, K)
        product and a Cholesky solve of the normal equations over the free variables.
        """
        t0 = time.perf_counter()
        cfg = self.cfg
        A, B, contact, bones = self._terms(target, mask)
        Bw = self.world_terms(A, B)
        u_prev, u = self.u.copy(), self.u.copy()
        prior, reg = self._prior(u_prev)
        diag = reg + cfg.damping
        r = self.residual(u, A, Bw)
        f = r @ r + reg * np.sum((u - prior) ** 2)
        f_start, status, it = f, "iteration_cap", 0
        for it in range(1, (iterations or cfg.iterations) + 1):  # noqa: B007 - the count is read after the loop
            Jr = self.residual_jacobian(A)
            g = Jr.T @ r + reg * (u - prior)                   # half the gradient
            free = ~(((u <= self.lo) & (g > 0)) | ((u >= self.hi) & (g < 0)))
            H = Jr.T @ Jr
            H.flat[::u.size + 1] += diag
            d = np.zeros(u.size)
            d[free] = -(_spd_solve(H[np.ix_(free, free)], g[free]) if not free.all() else _spd_solve(H, g))
            if np.max(np.abs(d)) < cfg.tolerance:
                status = "converged"
                break
            alpha, accepted = 1.0, False
            for _ in range(LINE_SEARCH_STEPS):
                u_new = np.minimum(np.maximum(u + alpha * d, self.lo), self.hi)
                r_new = self.residual(u_new, A, Bw)
                f_new = r_new @ r_new + reg * np.sum((u_new - prior) ** 2)
                if f_new <= f + 2.0 * ARMIJO * min(0.0, g @ (u_new - u)):
                    accepted = True
                    break
                alpha *= 0.5
            if not accepted:
                self.residual(u, A, Bw)                         # FK back at the answer
                status = "converged" if np.linalg.norm(g[free]) < 1e-9 else "no_descent"
                break
            step = np.max(np.abs(u_new - u))
            u, r, f = u_new, r_new, f_new
            if step < cfg.tolerance:
                status = "converged"
                break
        c0 = self._prior_const(u_prev)
        return self._finish(u, target, contact, bones, it, t0, f + c0, f_start + c0, status)

    def residual(self, u: np.ndarray, A: np.ndarray, Bw: np.ndarray) -> np.ndarray:
        """Data residuals (3R,) = vec(A p(u) - Bw) in the world frame; leaves the FK at u."""
        self._p = self.chain.fk(self.q_of(u))
        return (A @ self._p - Bw).reshape(-1)

    def residual_jacobian(self, A: np.ndarray) -> np.ndarray:
        """d residual / du (3R, m) at the configuration of the last :meth:`residual`."""
        J = self.chain.jacobian(self._p).reshape(self._p.shape[0], -1)          # (K, 3 n)
        Jr = (A @ J).reshape(A.shape[0] * 3, -1)
        return Jr if self.identity_coupling else Jr @ self.C

    def linearise(self, u: np.ndarray, A: np.ndarray, At: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Data residuals r (3R,) = vec(A p(u) - At) and dr/du (3R, m), world frame.

        ``At`` (R, 3) is :meth:`world_terms` of the cost's B.
        """
        r = self.residual(u, A, At)
        return r, self.residual_jacobian(A)

    def _prior(self, u_prev: np.ndarray) -> tuple[np.ndarray, float]:
        """(point the regularisers pull toward (m,), their total weight): temporal + rest in one term."""
        cfg = self.cfg
        reg = cfg.temporal_weight + cfg.rest_weight
        return (cfg.temporal_weight * u_prev + cfg.rest_weight * self.u_rest) / max(reg, 1e-300), reg

    def _prior_const(self, u_prev) -> float:
        """The constant that makes temporal + rest as one pull toward ``prior`` equal their sum."""
        cfg = self.cfg
        u_prev = self.u if u_prev is None else u_prev
        reg = cfg.temporal_weight + cfg.rest_weight
        if reg <= 0:
            return 0.0
        return float(cfg.temporal_weight * cfg.rest_weight / reg * np.sum((u_prev - self.u_rest) ** 2))

    def effective_targets(self, target: np.ndarray, q: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """(21, 3) the positions the cost asks for at joints q: each digit's robot-length bones laid
        along the human's from the robot's own digit base, blended with ``target`` by contact."""
        _, _, contact, bones = self._terms(target, mask)
        return self._effective(target, self.keypoints(q), contact, bones)

    def _effective(self, target, p, contact, bones) -> np.ndarray:
        if bones is None:
            return target
        chains = self._chains
        laid = p[chains[:, 0]][:, None, :] + np.cumsum(bones.reshape(len(DIGITS), 3, 3), axis=1)   # (5, 3, 3)
        s = contact[:, None, None]
        out = target.copy()
        out[chains[:, 1:]] = s * target[chains[:, 1:]] + (1.0 - s) * laid
        out[chains[:, 0]] = contact[:, None] * target[chains[:, 0]] + (1.0 - contact[:, None]) * p[chains[:, 0]]
        return out

    def _finish(self, u, target, contact, bones, it, t0, cost, cost_start, status) -> HandSolution:
        self.u = u
        q = self.q_of(u)
        p = (self._p - self.root_pos) @ self.root_rot          # the last FK of the solve was at u
        resid = np.sqrt(np.sum((p - self._effective(target, p, contact, bones)) ** 2, axis=1)) * 1e3
        near = (q - self.chain.lower < LIMIT_EPS) | (self.chain.upper - q < LIMIT_EPS)
        at = tuple(self.chain.joint_names[i] for i in np.flatnonzero(near))
        return HandSolution(q, resid, at, it, (time.perf_counter() - t0) * 1e3, cost, cost_start, status)

    def reset(self, q: np.ndarray | None = None) -> None:
        """Warm start from ``q`` (n,) (default: the rest pose)."""
        if q is None:
            self.u = self.u_rest.copy()
        else:
            self.u = np.clip(np.linalg.lstsq(self.C, q - self.c0, rcond=None)[0], self.lo, self.hi)
