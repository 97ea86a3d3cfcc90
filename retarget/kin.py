"""Forward kinematics and analytic Jacobians of a set of points on a MuJoCo model.

A :class:`PointChain` owns a private ``MjData`` so solvers never disturb the simulation. Points are
(body, local offset) pairs, which covers sites (a site is a fixed offset on its body) and bare body
origins, so any embodiment's keypoints can be named in data. The Jacobian uses the exact hinge
formula ``dp/dq_j = a_j x (p - c_j)`` (slide: ``a_j``) with MuJoCo's world axes ``xaxis`` and
anchors ``xanchor`` after ``mj_kinematics``; tests check it against ``mj_jacSite`` and finite
differences.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.core.errors import ConfigError, choices

HINGE, SLIDE = int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)


@dataclass(frozen=True)
class PointSpec:
    """One point: a site, or a body origin plus an offset in the body frame."""

    site: str | None = None
    body: str | None = None
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)


def _resolve_point(model: mujoco.MjModel, spec: PointSpec, where: str) -> tuple[int, np.ndarray, int]:
    """(body id, offset in the body frame, site id or -1 when the point is not exactly a site)."""
    if (spec.site is None) == (spec.body is None):
        raise ConfigError(f"{where}: give exactly one of 'site' or 'body'")
    if spec.site is not None:
        sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SITE, spec.site)
        if sid < 0:
            raise ConfigError(f"{where}: no site {spec.site!r} in the model")
        exact = sid if not np.any(spec.offset) else -1
        return int(model.site_bodyid[sid]), model.site_pos[sid] + np.asarray(spec.offset, float), exact
    bid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, spec.body)
    if bid < 0:
        raise ConfigError(f"{where}: no body {spec.body!r} in the model")
    return bid, np.asarray(spec.offset, float), -1


def joint_ids(model: mujoco.MjModel, names, where: str) -> np.ndarray:
    """Joint ids for ``names``; only hinge and slide joints can be retargeted."""
    out = []
    for name in names:
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        if jid < 0:
            raise ConfigError(f"{where}: no joint {name!r} in the model")
        if int(model.jnt_type[jid]) not in (HINGE, SLIDE):
            raise ConfigError(f"{where}: joint {name!r} must be a hinge or slide joint")
        out.append(jid)
    return np.array(out, dtype=int)


def _ancestors(model: mujoco.MjModel, body: int) -> set[int]:
    out = set()
    while body > 0:
        out.add(body)
        body = int(model.body_parentid[body])
    return out


class PointChain:
    """FK + Jacobian of K points with respect to n chosen joints of ``model``.

    Other joints keep whatever value ``set_fixed`` gave them (default: the model's qpos0).
    """

    def __init__(self, model: mujoco.MjModel, joints, points: list[PointSpec], where: str = "chain"):
        self.model = model
        self.data = mujoco.MjData(model)
        self.joint_names = tuple(joints)
        self.jids = joint_ids(model, joints, where)
        self.qadr = model.jnt_qposadr[self.jids].copy()
        self.is_slide = model.jnt_type[self.jids] == SLIDE
        self.has_slide = bool(self.is_slide.any())
        resolved = [_resolve_point(model, p, f"{where}.points[{i}]") for i, p in enumerate(points)]
        self.bodies = np.array([b for b, _, _ in resolved], dtype=int)
        self.offsets = np.array([o for _, o, _ in resolved]).reshape(-1, 3)
        sites = np.array([s for _, _, s in resolved], dtype=int)
        self.sites = sites if np.all(sites >= 0) else None      # fast path: MuJoCo already computed them
        jbody = model.jnt_bodyid[self.jids]
        self.mask = np.array([[jb in _ancestors(model, b) for jb in jbody] for b in self.bodies], float)
        # (point, joint) pairs that move: the Jacobian is computed only there (~1/6 of a hand's K x n)
        self._kk, self._jj = np.nonzero(self.mask)
        flat = self._kk * 3 * len(self.jids) + self._jj
        self._flat = np.concatenate([flat + c * len(self.jids) for c in range(3)])   # x, y, z rows
        self.lower, self.upper = model.jnt_range[self.jids].T.copy()
        unlimited = ~model.jnt_limited[self.jids].astype(bool)
        self.lower[unlimited], self.upper[unlimited] = -np.pi, np.pi
        mujoco.mj_kinematics(model, self.data)

    def set_fixed(self, qpos_values: dict[str, float]) -> None:
        """Set joints outside the chain (e.g. the arm carrying a hand)."""
        for name, value in qpos_values.items():
            self.data.qpos[self.model.joint(name).qposadr[0]] = value

    def fk(self, q: np.ndarray) -> np.ndarray:
        """World positions (K, 3) of the points at chain joints ``q`` (n,)."""
        self.data.qpos[self.qadr] = q
        mujoco.mj_kinematics(self.model, self.data)
        return self.points()

    def points(self) -> np.ndarray:
        d = self.data
        if self.sites is not None:
            return d.site_xpos[self.sites]
        xmat = d.xmat[self.bodies].reshape(-1, 3, 3)
        return d.xpos[self.bodies] + np.einsum("kij,kj->ki", xmat, self.offsets)

    def jacobian(self, p: np.ndarray, origin=None, rot=None) -> np.ndarray:
        """(K, 3, n) d(points)/dq at the configuration of the last :meth:`fk` call.

        ``p`` (K, 3) are the points in the frame (origin (3,), rot (3, 3)) (default: world), and the
        Jacobian is expressed in that frame too (the cross product commutes with rotations).
        """
        axis = self.data.xaxis[self.jids]                        # (n, 3) world
        anchor = self.data.xanchor[self.jids]
        if rot is not None:
            axis, anchor = axis @ rot, (anchor - origin) @ rot
        n = len(self.jids)
        a, lever = axis[self._jj], p[self._kk] - anchor[self._jj]              # (P, 3) per moving pair
        cross = a[:, [1, 2, 0]] * lever[:, [2, 0, 1]] - a[:, [2, 0, 1]] * lever[:, [1, 2, 0]]
        if self.has_slide:
            slide = self.is_slide[self._jj]
            cross[slide] = a[slide]
        J = np.zeros(p.shape[0] * 3 * n)
        J[self._flat] = cross.T.ravel()                                        # scatter into (K, 3, n)
        return J.reshape(p.shape[0], 3, n)

    def body_frame(self, body: str) -> tuple[np.ndarray, np.ndarray]:
        """World (position (3,), rotation (3, 3)) of a body at the last FK."""
        bid = self.model.body(body).id
        return self.data.xpos[bid].copy(), self.data.xmat[bid].reshape(3, 3).copy()


def require_names(names, valid, what: str, where: str) -> None:
    for name in names:
        if name not in valid:
            raise ConfigError(f"{where}: unknown {what} {name!r}; valid: {choices(valid)}")
