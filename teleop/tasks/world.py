"""Compiled-task bookkeeping: ids precomputed once, and a cheap per-tick contact view.

``TaskWorld`` maps every geom to an *owner*: a task object (index), the table, a hand or the rest
of the robot, so predicates ask "does X touch Y" with a set lookup per tick.
"""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.core.conventions import SIDES
from teleop.robot import ROBOT_BITS
from teleop.tasks.kinds import Shape
from teleop.tasks.spec import TaskSpec

TABLE_TOP = 0.78


@dataclass(frozen=True)
class ObjectIds:
    index: int
    name: str
    body: int
    qadr: int | None          # free joint qpos address (7 values), None for fixtures
    vadr: int | None
    shape: Shape
    joint_qadr: int | None    # main joint (articulated)
    joint_range: tuple[float, float] | None
    geoms: np.ndarray         # (n,) geom ids of the object's whole subtree
    interior_body: int        # the body whose frame the interior is given in (a drawer's), else ``body``


class TaskWorld:
    """Names -> ids for one compiled task model; owners: objects 0..n-1, then the codes below."""

    def __init__(self, spec: TaskSpec, model: mujoco.MjModel, shapes: dict[str, Shape], palm_bodies: dict[str, str]):
        self.spec, self.model = spec, model
        n = len(spec.objects)
        self.TABLE, self.HAND = n, {"left": n + 1, "right": n + 2}
        self.ROBOT, self.FLOOR, self.NONE = n + 3, n + 4, n + 5
        self.n_owner = n + 6
        owner = np.full(model.ngeom, self.NONE, np.int64)
        body_owner = np.full(model.nbody, -1, np.int64)
        for side in SIDES:
            body_owner[model.body(palm_bodies[side]).id] = self.HAND[side]
        self.objects: dict[str, ObjectIds] = {}
        for i, o in enumerate(spec.objects):
            body_owner[model.body(o.name).id] = i
        for b in range(1, model.nbody):       # subtree ownership: inherit from the nearest owned ancestor
            if body_owner[b] < 0 and body_owner[model.body_parentid[b]] >= 0:
                body_owner[b] = body_owner[model.body_parentid[b]]
        for g in range(model.ngeom):
            bo = body_owner[model.geom_bodyid[g]]
            owner[g] = bo if bo >= 0 else (self.ROBOT if model.geom_contype[g] & ROBOT_BITS else self.NONE)
        owner[model.geom("table_top").id] = self.TABLE
        owner[model.geom("floor").id] = self.FLOOR
        self.owner = owner
        for i, o in enumerate(spec.objects):
            self.objects[o.name] = self._ids(i, o.name, shapes[o.name], np.flatnonzero(owner == i))
        self.hand_geoms = {s: np.flatnonzero(owner == self.HAND[s]) for s in SIDES}
        self.colour_geoms = {o.name: self.objects[o.name].geoms for o in spec.objects}
        self.base_rgba = model.geom_rgba.copy()
        self.events: dict = {}               # name -> Event (filled by build_events)
        self.colour_events: list = []
        self.coloured: tuple[str, ...] = ()

    def _ids(self, i: int, name: str, shape: Shape, geoms: np.ndarray) -> ObjectIds:
        m = self.model
        body = m.body(name).id
        jnt = m.body_jntadr[body]
        free = jnt >= 0 and m.jnt_type[jnt] == mujoco.mjtJoint.mjJNT_FREE
        jq, jr = None, None
        if shape.joint:
            j = m.joint(shape.joint).id
            jq, jr = int(m.jnt_qposadr[j]), (float(m.jnt_range[j][0]), float(m.jnt_range[j][1]))
        inter = shape.interior
        ibody = m.body(inter.body).id if inter is not None and inter.body else body
        return ObjectIds(i, name, body, int(m.jnt_qposadr[jnt]) if free else None,
                         int(m.jnt_dofadr[jnt]) if free else None, shape, jq, jr, geoms, ibody)

    def idx(self, name: str) -> int:
        return self.objects[name].index

    # -- cheap geometry helpers ----------------------------------------------------------------
    def pos(self, data: mujoco.MjData, name: str) -> np.ndarray:
        return data.xpos[self.objects[name].body]

    def bottom_z(self, data: mujoco.MjData, name: str) -> float:
        return float(data.xpos[self.objects[name].body][2] - self.objects[name].shape.bottom)

    def joint_fraction(self, data: mujoco.MjData, name: str) -> float:
        o = self.objects[name]
        lo, hi = o.joint_range
        return float((data.qpos[o.joint_qadr] - lo) / (hi - lo))

    def current_colour(self, data: mujoco.MjData, name: str) -> str | None:
        """The logical colour now: the last event with an opinion wins, else the spec colour."""
        colour = self.spec.object(name).colour
        for ev in self.colour_events:
            c = ev.colour_of(data, name)
            if c is not None:
                colour = c
        return colour

    def place(self, data: mujoco.MjData, name: str, pos, yaw: float | None = None, quat=None) -> None:
        """Teleport a free object (position, optional yaw or quaternion) and zero its velocity."""
        o = self.objects[name]
        data.qpos[o.qadr:o.qadr + 3] = pos
        if quat is not None:
            data.qpos[o.qadr + 3:o.qadr + 7] = quat
        elif yaw is not None:
            data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(yaw / 2), 0, 0, np.sin(yaw / 2)]
        data.qvel[o.vadr:o.vadr + 6] = 0


class Frame:
    """One tick's view: the owner pairs in contact (penetration or touching within ``margin``)."""

    __slots__ = ("world", "data", "tick", "pairs")

    def __init__(self, world: TaskWorld, data: mujoco.MjData, tick: int, margin: float = 0.002):
        self.world, self.data, self.tick = world, data, tick
        n = data.ncon
        if n:
            con = data.contact
            geom = con.geom[:n]
            keep = con.dist[:n] < margin
            a, b = world.owner[geom[keep, 0]], world.owner[geom[keep, 1]]
            k = world.n_owner
            self.pairs = set((np.minimum(a, b) * k + np.maximum(a, b)).tolist())
        else:
            self.pairs = set()

    def touching(self, a: int, b: int) -> bool:
        k = self.world.n_owner
        return (min(a, b) * k + max(a, b)) in self.pairs

    def touching_any(self, a: int, others) -> bool:
        return any(self.touching(a, b) for b in others)
