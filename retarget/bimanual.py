"""Both arms and both hands: human operator input -> joint targets in action order, plus health.

Per side, per tick:
  1. hand frame from the keypoints (or the device's palm rotation), mapped to the robot palm frame;
  2. arm target: shoulder-anchored Procrustes scaling of the shoulder -> wrist vector by
     robot arm length / operator arm length, anchored at the robot shoulder; palm rotation as is;
  3. hand target: keypoints in the palm frame times robot hand length / operator hand length;
  4. arm solve (SLSQP + closed-form wrist), hand solve (bounded Gauss-Newton).
A side whose input is invalid or whose solve fails keeps its last good targets, logs a warning and
reports ``held`` with the reason; a side without input reports ``no_input`` and holds too.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from retarget.arm import ArmSolver, LinearConstraints
from retarget.config import RetargetConfig
from retarget.filters import OneEuro, RotationOneEuro
from retarget.hand import HandSolver
from retarget.separation import SideProxies, min_distance, surface_distances
from retarget.nodes import N_NODES, SIDES, RetargetInputError, palm_rotation, validate_nodes
from retarget.profile import DEFAULT_PROFILE, OperatorProfile, yaw_frame
from teleop.core.errors import TeleopError

log = logging.getLogger("retarget")
SEPARATION_PUSH = 0.02        # m per tick a pair already inside the margin must open up by, at least
SEPARATION_SLACK = 0.1        # m added to every joint's lever (the levers are measured at the last joints)
STATUS_ORDER = ("ok", "degraded", "no_input", "held")       # worst last


@dataclass(frozen=True)
class HandInput:
    """One tracked human hand in the operator frame (z up, x forward, y left), metres."""

    keypoints: np.ndarray                  # (21, 3) node order (retarget.nodes.NODE_NAMES)
    tracked: np.ndarray | None = None      # (21,) bool; None = all tracked
    palm_rot: np.ndarray | None = None     # (3, 3) palm frame (x out of palm, z to fingers); None = from keypoints


@dataclass(frozen=True)
class OperatorInput:
    head_pos: np.ndarray                   # (3,)
    head_rot: np.ndarray                   # (3, 3) columns = head x (forward), y (left), z (up)
    hands: dict                            # side -> HandInput or None (not tracked)
    time: float | None = None              # s, capture time (any epoch); None = one control tick after the last


@dataclass(frozen=True)
class SideHealth:
    status: str                            # ok | degraded | no_input | held
    message: str
    residual_mm: np.ndarray                # (21,) hand keypoint residuals (robot scale); NaN if held
    arm_pos_err_mm: float
    arm_rot_err_deg: float
    at_limits: tuple[str, ...]
    arm_ms: float
    hand_ms: float
    arm_target: tuple | None = None        # (position (3,), rotation (3, 3)) the arm solver was given
    hand_status: str = ""                  # the hand solver's status (converged | iteration_cap | no_descent)
    arm_limited: bool = False              # the arm's step was held back this tick (trust region, reconfiguring)


@dataclass(frozen=True)
class RetargetResult:
    targets: np.ndarray                    # (58,) joint targets in scene.layout.action_joints order
    sides: dict                            # side -> SideHealth
    status: str                            # the worst side status
    solve_ms: float


class RetargetShapeError(RetargetInputError):
    """An input array of the wrong shape: a programming error, never treated as a tracking glitch."""


def _check_shape(name: str, x, shape) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.shape != shape:
        raise RetargetShapeError(f"{name} must have shape {shape}, got {x.shape}")
    return x


class BimanualRetargeter:
    """Build with ``RetargetConfig.build(scene, profile)``; call :meth:`step` once per control tick."""

    def __init__(self, scene, cfg: RetargetConfig, profile: OperatorProfile | None = None):
        self.cfg, self.profile = cfg, profile or DEFAULT_PROFILE
        layout, model = scene.layout, scene.model
        ready = layout.ready_qpos(scene.params)
        index = {n: i for i, n in enumerate(layout.action_joints)}
        self.rot = np.asarray(cfg.operator_rotation, float)
        self.offset = np.asarray(cfg.workspace_offset, float)
        self.arms, self.hands, self.idx, self.filters = {}, {}, {}, {}
        self.dt = scene.control_dt
        self._last_time: float | None = None
        self.last = np.array([ready.get(n, 0.0) for n in layout.action_joints])
        hand_model = cfg.hand.load_model(model)
        for side in SIDES:
            arm_names = cfg.arm.joint_names(side)
            self.arms[side] = ArmSolver(model, cfg.arm, side, np.array([ready.get(n, 0.0) for n in arm_names]))
            self.hands[side] = HandSolver(hand_model, cfg.hand, side)
            hand_names = self.hands[side].chain.joint_names
            missing = [n for n in (*arm_names, *hand_names) if n not in index]
            if missing:
                raise TeleopError(f"{cfg.source}: joints not in the scene's action joints: {missing[:3]}")
            self.idx[side] = (np.array([index[n] for n in arm_names]), np.array([index[n] for n in hand_names]))
            self.hands[side].reset(self.last[self.idx[side][1]])
            self.filters[side] = (OneEuro(cfg.hand_filter), OneEuro(cfg.wrist_filter),
                                  RotationOneEuro(cfg.rotation_filter, cfg.filter_radius))
        self.proxies = None
        self._sep_cache: dict[str, tuple[tuple[np.ndarray, np.ndarray], float, np.ndarray]] = {}
        if cfg.separation.enabled:
            same_model = hand_model is model       # the hand's joints move the proxies too
            self.proxies = {side: SideProxies(model, cfg.separation, cfg.arm.joint_names(side),
                                              self.hands[side].chain.joint_names if same_model else (), side)
                            for side in SIDES}

    def reset(self, q) -> None:
        """Start a new episode from joint vector ``q`` (58,) in action order: every solver's warm
        start and smoothness reference, every input filter and the input clock, as if new."""
        q = np.asarray(q, np.float64)
        if q.shape != self.last.shape:
            raise RetargetShapeError(f"reset: q must have shape {self.last.shape}, got {q.shape}")
        self.last = q.copy()
        self._last_time = None
        for side in SIDES:
            arm_i, hand_i = self.idx[side]
            self.arms[side].reset(self.last[arm_i])
            self.hands[side].reset(self.last[hand_i])
            for f in self.filters[side]:
                f.reset()

    # -- mapping ---------------------------------------------------------------------------------
    def arm_scale(self) -> float:
        return self.cfg.arm.arm_length / self.profile.arm_length

    def hand_scale(self, side: str) -> float:
        return self.hands[side].hand_length / self.profile.hand_length

    def operator_wrist(self, side: str, robot_wrist, head_pos, head_rot) -> np.ndarray:
        """Where the operator's wrist (3,) must be for this retargeter to put the robot's wrist at
        ``robot_wrist`` (3,): the exact inverse of the shoulder-anchored scaling in targets_for."""
        shoulder = np.asarray(head_pos, float) + yaw_frame(head_rot) @ self.profile.shoulder(side)
        return shoulder + self.rot.T @ (np.asarray(robot_wrist) - self.arms[side].shoulder - self.offset) \
            / self.arm_scale()

    def targets_for(self, side: str, inp: OperatorInput, hand: HandInput):
        """(palm position (3,), palm rotation (3, 3)) in robot world, hand keypoints (21, 3) in the palm frame."""
        kp = _check_shape(f"{side} keypoints", hand.keypoints, (N_NODES, 3))
        mask = validate_nodes(kp, hand.tracked)
        if hand.palm_rot is not None:
            rot_h = _check_shape(f"{side} palm_rot", hand.palm_rot, (3, 3))
        else:
            rot_h = palm_rotation(kp, self.hands[side].neutral_keypoints)   # robot palm frame on the human hand
        wrist = kp[0]
        shoulder = inp.head_pos + yaw_frame(inp.head_rot) @ self.profile.shoulder(side)
        p_star = self.arms[side].shoulder + self.arm_scale() * (self.rot @ (wrist - shoulder)) + self.offset
        local = np.where(mask[:, None] > 0, (kp - wrist) @ rot_h, 0.0) * self.hand_scale(side)
        return p_star, self.rot @ rot_h, local, mask

    # -- the tick --------------------------------------------------------------------------------
    def step(self, inp: OperatorInput, max_step: dict | None = None, start: np.ndarray | None = None) -> RetargetResult:
        """One control tick. ``max_step`` {side: rad}: those arms move at most that far this tick;
        ``start`` (58,): their warm start is these joints (the action actually applied). An engage
        eases in through the retargeter this way, so the path stays continuous and apart."""
        t0 = time.perf_counter()
        max_step = max_step or {}
        if start is not None:
            start = _check_shape("start", start, self.last.shape)
            for side in max_step:
                arm_i = self.idx[side][0]
                self.arms[side].q = start[arm_i].copy()
                self.last[arm_i] = start[arm_i]
        _check_shape("head_pos", inp.head_pos, (3,))
        _check_shape("head_rot", inp.head_rot, (3, 3))
        unknown = set(inp.hands) - set(SIDES)
        if unknown:
            raise RetargetInputError(f"unknown hand side {sorted(unknown)[0]!r}; valid: 'left' or 'right'")
        dt = self._tick_dt(inp.time)
        out = self.last.copy()
        sides = {side: self._side(side, inp, inp.hands.get(side), out, dt, max_step.get(side)) for side in SIDES}
        self.last = out
        status = max((h.status for h in sides.values()), key=STATUS_ORDER.index)
        return RetargetResult(out, sides, status, (time.perf_counter() - t0) * 1e3)

    def _tick_dt(self, t: float | None) -> float:
        """Seconds since the last input (the filters' sample time); a control tick without timestamps."""
        last, self._last_time = self._last_time, t
        if t is None or last is None or not np.isfinite(t) or not t > last:
            return self.dt
        return float(t - last)

    def filtered_targets(self, side: str, p_star, r_star, local, mask, dt: float):
        """The targets of :meth:`targets_for` through the side's One-Euro input filters."""
        f_hand, f_pos, f_rot = self.filters[side]
        tracked = None if mask.all() else mask
        return f_pos(p_star[None], dt)[0], f_rot(r_star, dt), f_hand(local, dt, tracked)

    def separation_constraints(self, side: str, out: np.ndarray, hand_q: np.ndarray | None = None
                               ) -> LinearConstraints | None:
        """Linearised separation constraints for ``side``'s arm (its hand at ``hand_q``, default its
        last targets) against the other side as ``out`` (58,) has it now; None when no pair is
        within the activation distance."""
        if self.proxies is None:
            return None
        cfg = self.cfg.separation
        other = "right" if side == "left" else "left"
        own, them = self.proxies[side], self.proxies[other]
        q0 = self.arms[side].q.copy()
        sb = them.segments(out[self.idx[other][0]], out[self.idx[other][1]])
        sa = own.segments(q0, out[self.idx[side][1]] if hand_q is None else hand_q)
        reach_a, reach_b = own.radius.max() + cfg.activation, them.radius.max()
        lo_a, hi_a = np.minimum(*sa).min(0) - reach_a, np.maximum(*sa).max(0) + reach_a
        lo_b, hi_b = np.minimum(*sb).min(0) - reach_b, np.maximum(*sb).max(0) + reach_b
        levers = own.levers()                          # per arm joint: farthest capsule point from its axis
        self._sep_cache[side] = (sb, cfg.activation, levers)   # the other side as it stands, a lower bound
        if np.any(hi_a < lo_b) or np.any(hi_b < lo_a):
            return None                                 # bounding boxes apart: nothing near
        i, _, s, n, d = surface_distances(sa, own.radius, sb, them.radius, within=cfg.activation)
        self._sep_cache[side] = (sb, min(cfg.activation, float(d.min()) if d.size else np.inf), levers)
        act = d < cfg.activation
        if not act.any():
            return None
        Ja, Jb = own.end_jacobians()
        i, s, n, d = i[act], s[act], n[act], d[act]       # every near pair: the nearest one changes as they move
        Jc = (1.0 - s)[:, None, None] * Ja[i] + s[:, None, None] * Jb[i]               # (P, 3, 7)
        G = np.einsum("pk,pkj->pj", n, Jc)
        # Keep the margin; a pair already inside it need only open up by PUSH per tick (feasible
        # within the trust region) instead of all at once.
        h = d - np.minimum(cfg.margin, d + SEPARATION_PUSH)
        return LinearConstraints(G, h, q0)

    def keep_apart(self, side: str, arm_q: np.ndarray, hand_q: np.ndarray, out: np.ndarray):
        """The guarantee under the linearised constraints: the exact separation from the other side
        (as ``out`` has it now) must not fall below min(margin, what it was). Otherwise the arm's
        step from its last targets is shortened (halving, down to no step, and then the hand holds
        too). Returns (arm joints, hand joints, message or "")."""
        if self.proxies is None:
            return arm_q, hand_q, ""
        cfg = self.cfg.separation
        other = "right" if side == "left" else "left"
        own, them = self.proxies[side], self.proxies[other]
        arm_prev, hand_prev = out[self.idx[side][0]], out[self.idx[side][1]]
        cached = self._sep_cache.pop(side, None)
        if cached is not None:
            sb, bound, levers = cached
            # The constraints saw this hand at the arm's last joints >= bound away. Turning joint j
            # by dq_j moves no capsule point farther than lever_j |dq_j| (lever_j: its farthest
            # point from the joint's axis, plus slack for the arm's own motion along the way).
            moved = float(np.abs(arm_q - arm_prev) @ (levers + SEPARATION_SLACK))
            if bound - moved >= cfg.margin:
                return arm_q, hand_q, ""
        else:
            sb = them.segments(out[self.idx[other][0]], out[self.idx[other][1]])

        def dist(qa, qh):
            d = surface_distances(own.segments(qa, qh), own.radius, sb, them.radius, within=cfg.margin)[4]
            return float(d.min()) if d.size else np.inf

        d_new = dist(arm_q, hand_q)
        if d_new >= cfg.margin:
            return arm_q, hand_q, ""
        floor = min(cfg.margin, dist(arm_prev, hand_prev)) - 1e-4
        if d_new >= floor:
            return arm_q, hand_q, ""
        for alpha in (0.5, 0.25, 0.125, 0.0):
            qa = arm_prev + alpha * (arm_q - arm_prev)
            if dist(qa, hand_q) >= floor:
                self.arms[side].q = qa.copy()
                return qa, hand_q, f"arm step shortened to {alpha:.0%}: the other arm is {floor * 1e3:.0f} mm away"
        self.arms[side].q = arm_prev.copy()
        self.hands[side].reset(hand_prev)
        return arm_prev.copy(), hand_prev.copy(), "arm and hand held: the other side is at the separation margin"

    def separation(self, q=None) -> float:
        """Smallest surface distance (m) between the two sides' proxies at joints ``q`` (58,) (default:
        the last targets); inf without proxies."""
        if self.proxies is None:
            return float("inf")
        q = self.last if q is None else np.asarray(q, float)
        (la, lh), (ra, rh) = self.idx["left"], self.idx["right"]
        return min_distance(self.proxies["left"], q[la], q[lh], self.proxies["right"], q[ra], q[rh])

    def _held(self, side: str, status: str, message: str) -> SideHealth:
        arm_i, hand_i = self.idx[side]
        for f in self.filters[side]:
            f.reset()                                        # restart from the next input, not stale state
        self.arms[side].reset(self.last[arm_i])              # warm start stays at the held pose
        self.hands[side].reset(self.last[hand_i])
        if status == "held":
            log.warning("retarget %s side held at last good targets: %s", side, message)
        return SideHealth(status, message, np.full(N_NODES, np.nan), np.nan, np.nan, (), 0.0, 0.0)

    def _side(self, side: str, inp: OperatorInput, hand: HandInput | None, out: np.ndarray, dt: float,
              max_step: float | None = None) -> SideHealth:
        if hand is None:
            return self._held(side, "no_input", "hand not tracked")
        try:
            p_star, r_star, local, mask = self.targets_for(side, inp, hand)
            p_star, r_star, local = self.filtered_targets(side, p_star, r_star, local, mask, dt)
            sol = self.hands[side].solve(local, mask)      # first: the arm keeps the new hand clear
            arm = self.arms[side].solve(p_star, r_star, self.separation_constraints(side, out, sol.q), max_step)
            arm_q, hand_q, kept = self.keep_apart(side, arm.q, sol.q, out)
            if not (np.all(np.isfinite(arm.q)) and np.all(np.isfinite(sol.q))):
                raise FloatingPointError("non-finite joint targets")
        except RetargetShapeError:
            raise                                        # a programming error, not a tracking glitch
        except (TeleopError, FloatingPointError, np.linalg.LinAlgError, ValueError) as exc:
            return self._held(side, "held", f"{type(exc).__name__}: {exc}")
        arm_i, hand_i = self.idx[side]
        out[arm_i], out[hand_i] = arm_q, hand_q
        tracked = sol.residual_mm[mask > 0]
        problems = [kept] if kept else []
        if np.median(tracked) > self.cfg.residual_warn_mm:
            problems.append(f"median hand residual {np.median(tracked):.1f} mm")
        if arm.status in ("failed", "reconfiguring"):
            problems.append(f"arm {arm.status}: {arm.message}")
        if sol.status == "no_descent":
            problems.append("hand solver found no descent from the warm start (kept it)")
        return SideHealth("degraded" if problems else "ok", "; ".join(problems),
                          np.where(mask > 0, sol.residual_mm, np.nan), arm.pos_err_mm, arm.rot_err_deg,
                          arm.at_limits + sol.at_limits, arm.solve_ms, sol.solve_ms, (p_star, r_star), sol.status,
                          arm.limited or bool(kept))
