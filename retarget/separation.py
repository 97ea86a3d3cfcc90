"""Keeping the two arms apart: capsule proxies of each arm + hand, and linearised separation
constraints for the arm solver.

Each side is a set of capsules (segments with a radius) that cover its collision geometry: every
collision geom in the subtree of ``root_body`` (the arm from the elbow out, the palm, every finger
segment; capsules as they are, a box or cylinder inside its enclosing capsule, a sphere as a point
with its radius), with the hand at its last solution, plus any ``capsules`` the config adds. Before
one arm is solved, every
(own proxy, other side's proxy) pair closer than ``activation`` becomes one linear inequality on
the arm joints q (7,)::

    d(q0) + n^T J_c(q0) (q - q0) >= margin

with d the surface distance of the pair at the warm start q0, c the closest point on the own
capsule's axis, n the unit vector from the other's closest point to c and J_c the point Jacobian
(for a point at fraction s of a segment p1 -> p2: (1 - s) J_p1 + s J_p2; the closest point's own
motion along the segment does not change the distance to first order). SLSQP keeps them as hard
constraints, and the trust region keeps the linearisation honest. The other side is held where it
is this tick: the left arm is solved against the right arm's last targets, the right against the
left's new ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from retarget.kin import PointChain, PointSpec
from teleop.core.errors import ConfigError


@dataclass(frozen=True)
class SeparationConfig:
    root_body: str = ""                # its subtree's collision geoms are the proxies ("" with no capsules: off)
    margin: float = 0.035              # m: surface distance the commanded poses keep
    activation: float = 0.10           # m: pairs nearer than this get a constraint
    capsules: tuple = ()               # extra ({from: point, to: point, radius: m}, ...); point = {body|site, offset}
    where: str = "separation"

    def __post_init__(self):
        if not (0 <= self.margin < self.activation):
            raise ConfigError(f"{self.where}: need 0 <= margin < activation, got {self.margin}, {self.activation}")
        for i, c in enumerate(self.capsules):
            if not isinstance(c, dict) or set(c) - {"from", "to", "radius"} or "radius" not in c:
                raise ConfigError(f"{self.where}.capsules[{i}]: need 'from', 'to' and 'radius'")

    @property
    def enabled(self) -> bool:
        return bool(self.root_body) or bool(self.capsules)


def _spec(point: dict, side: str, where: str) -> PointSpec:
    if not isinstance(point, dict) or set(point) - {"body", "site", "offset"}:
        raise ConfigError(f"{where}: a point is {{body: name}} or {{site: name}} with an optional offset")
    fmt = lambda v: v.format(side=side) if isinstance(v, str) else v  # noqa: E731
    return PointSpec(site=fmt(point.get("site")), body=fmt(point.get("body")),
                     offset=tuple(point.get("offset", (0.0, 0.0, 0.0))))


def geom_capsules(model: mujoco.MjModel, root: str, where: str) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    """(body name, end a, end b (body frame), radius) of a capsule covering every collision geom in
    the subtree of body ``root``."""
    try:
        rid = model.body(root).id
    except KeyError:
        raise ConfigError(f"{where}.root_body: no body {root!r} in the model") from None
    out = []
    for g in range(model.ngeom):
        b = int(model.geom_bodyid[g])
        a = b
        while a > 0 and a != rid:
            a = int(model.body_parentid[a])
        if a != rid or not (model.geom_contype[g] or model.geom_conaffinity[g]):
            continue
        flat = np.zeros(9)
        mujoco.mju_quat2Mat(flat, model.geom_quat[g])
        R, pos, size = flat.reshape(3, 3), model.geom_pos[g], model.geom_size[g]
        kind = int(model.geom_type[g])
        if kind in (int(mujoco.mjtGeom.mjGEOM_CAPSULE), int(mujoco.mjtGeom.mjGEOM_CYLINDER)):
            axis, half, radius = R[:, 2], size[1], size[0]
        elif kind == int(mujoco.mjtGeom.mjGEOM_SPHERE):
            axis, half, radius = R[:, 2], 0.0, size[0]
        elif kind == int(mujoco.mjtGeom.mjGEOM_BOX):
            k = int(np.argmax(size[:3]))
            others = [i for i in range(3) if i != k]
            axis, half, radius = R[:, k], size[k], float(np.hypot(*size[others]))
        else:
            raise ConfigError(f"{where}: geom {model.geom(g).name or g} of body {model.body(b).name!r} is "
                              f"neither a capsule, cylinder, sphere nor box")
        out.append((model.body(b).name, pos - half * axis, pos + half * axis, float(radius)))
    return out


class SideProxies:
    """One side's capsules as a function of its arm joints (hand joints held where they are set)."""

    def __init__(self, model: mujoco.MjModel, cfg: SeparationConfig, arm_joints, hand_joints, side: str):
        specs, radii = [], []
        if cfg.root_body:
            for body, a, b, r in geom_capsules(model, cfg.root_body.format(side=side), cfg.where):
                specs += [PointSpec(body=body, offset=tuple(a)), PointSpec(body=body, offset=tuple(b))]
                radii.append(r)
        for i, c in enumerate(cfg.capsules):
            where = f"{cfg.where}.capsules[{i}]"
            specs += [_spec(c["from"], side, where), _spec(c["to"], side, where)]
            radii.append(float(c["radius"]))
        self.chain = PointChain(model, arm_joints, specs, f"{cfg.where}[{side}]")
        self.hand_qadr = np.array([model.joint(n).qposadr[0] for n in hand_joints], dtype=int)
        self.a, self.b = np.arange(0, len(specs), 2), np.arange(1, len(specs), 2)
        self.radius = np.array(radii)
        self._p: np.ndarray = np.zeros((0, 3))

    def segments(self, q_arm: np.ndarray, q_hand: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """World segment ends (S, 3), (S, 3) at these joints; leaves the FK there (for jacobian)."""
        if q_hand is not None and self.hand_qadr.size:
            self.chain.data.qpos[self.hand_qadr] = q_hand
        p = self.chain.fk(q_arm).copy()
        self._p = p
        return p[self.a], p[self.b]

    def levers(self) -> np.ndarray:
        """(7,) per arm joint, the farthest capsule end from its axis at the last :meth:`segments`."""
        d = self.chain.data
        axis, anchor = d.xaxis[self.chain.jids], d.xanchor[self.chain.jids]            # (7, 3)
        rel = self._p[None, :, :] - anchor[:, None, :]                                 # (7, P, 3)
        along = np.einsum("jpk,jk->jp", rel, axis)
        perp = np.sum(rel * rel, axis=2) - along ** 2
        return np.sqrt(np.maximum(perp, 0.0)).max(axis=1) + self.radius.max()

    def end_jacobians(self) -> tuple[np.ndarray, np.ndarray]:
        """d(segment ends)/d(arm joints) (S, 3, 7) each, at the last :meth:`segments`."""
        J = self.chain.jacobian(self._p)
        return J[self.a], J[self.b]


def closest_points(p1, q1, p2, q2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest points of segment pairs p1->q1 and p2->q2 (N, 3) each: (s (N,), t (N,), distance (N,))
    with the points p1 + s (q1 - p1) and p2 + t (q2 - p2); a segment may be a point.
    Ericson, Real-Time Collision Detection, 5.1.9, vectorised."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e = np.sum(d1 * d1, 1), np.sum(d2 * d2, 1)
    b, c, f = np.sum(d1 * d2, 1), np.sum(d1 * r, 1), np.sum(d2 * r, 1)
    eps = 1e-12
    pa, pe = a <= eps, e <= eps                        # degenerate (a point)
    sa, se = np.where(pa, 1.0, a), np.where(pe, 1.0, e)
    denom = a * e - b * b
    s = np.where(denom > eps, np.clip((b * f - c * e) / np.where(denom > eps, denom, 1.0), 0, 1), 0.0)
    t = (b * s + f) / se
    low, high = t < 0, t > 1
    t = np.clip(t, 0, 1)
    s = np.where(low, np.clip(-c / sa, 0, 1), np.where(high, np.clip((b - c) / sa, 0, 1), s))
    # one or both a point
    s = np.where(pe & ~pa, np.clip(-c / sa, 0, 1), s)
    t = np.where(pe, 0.0, t)
    t = np.where(pa & ~pe, np.clip(f / se, 0, 1), t)
    s = np.where(pa, 0.0, s)
    c1 = p1 + s[:, None] * d1
    c2 = p2 + t[:, None] * d2
    return s, t, np.linalg.norm(c1 - c2, axis=1)


def surface_distances(own: tuple, own_r, other: tuple, other_r, within: float = np.inf):
    """Pairs (own i, other j) whose bounding spheres come within ``within`` (all by default):
    (i (P,), j (P,), s (P,), unit normal from other to own (P, 3), surface distance (P,))."""
    mid_a, mid_b = (own[0] + own[1]) / 2, (other[0] + other[1]) / 2
    ra = own_r + np.sqrt(np.sum((own[1] - own[0]) ** 2, 1)) / 2
    rb = other_r + np.sqrt(np.sum((other[1] - other[0]) ** 2, 1)) / 2
    gap = np.sqrt(np.sum((mid_a[:, None] - mid_b[None]) ** 2, 2)) - ra[:, None] - rb[None]
    i, j = np.nonzero(gap < within)
    s, t, d = closest_points(own[0][i], own[1][i], other[0][j], other[1][j])
    c1 = own[0][i] + s[:, None] * (own[1][i] - own[0][i])
    c2 = other[0][j] + t[:, None] * (other[1][j] - other[0][j])
    normal = (c1 - c2) / np.maximum(d, 1e-9)[:, None]
    return i, j, s, normal, d - own_r[i] - other_r[j]


def min_distance(a: SideProxies, qa_arm, qa_hand, b: SideProxies, qb_arm, qb_hand) -> float:
    """Smallest surface distance between the two sides' proxies (m)."""
    sa, sb = a.segments(qa_arm, qa_hand), b.segments(qb_arm, qb_hand)
    return float(surface_distances(sa, a.radius, sb, b.radius)[4].min())
