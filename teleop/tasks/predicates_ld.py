"""Predicate catalog, part 3: what the limited-demonstration tasks added: resting inside (set down,
optionally lying flat), spanning two supports (a bridge deck), having once rested on a support
(a cube going round the plates), a count of objects on a shelf tier, and sorting apart."""
from __future__ import annotations

import math

import mujoco
import numpy as np

from teleop.tasks.args import Arg
from teleop.tasks.predicate_base import Predicate, in_interior, local, register, tilt
from teleop.tasks.predicates_geom import OnTier, OnTop


def free_spot_inside(goal, name: str, container: str) -> None:
    """Put ``name`` on the container's floor at a spot clear of what is already inside (from the
    walls inward, so several round things pack side by side instead of on top of each other)."""
    w, d = goal.w, goal.data
    mujoco.mj_kinematics(goal.model, d)
    c = w.objects[container]
    inter = c.shape.interior
    mat = d.xmat[c.interior_body].reshape(3, 3)
    floor = d.xpos[c.interior_body] + mat @ np.asarray(inter.floor)
    r = w.objects[name].shape.radius
    others = []
    for n, o in w.objects.items():
        if n not in (name, container) and o.qadr is not None and in_interior(w, d, n, container, 0.01):
            loc = mat.T @ (d.xpos[o.body] - floor)
            others.append((loc[0], loc[1], o.shape.radius))
    hx, hy = inter.half[0] - r, inter.half[1] - r
    best, best_gap = (0.0, 0.0), -np.inf
    if hx > 0 and hy > 0:
        xs, ys = np.arange(-hx, hx + 1e-9, 0.004), np.arange(-hy, hy + 1e-9, 0.004)
        cand = [(x, y) for x in xs for y in ys if not inter.round or x * x + y * y <= hx * hx + 1e-9]
        cand.sort(key=lambda q: (-round(math.hypot(*q), 3), math.atan2(q[1], q[0])))
        for x, y in cand:
            gap = min((math.hypot(x - ox, y - oy) - r - orad for ox, oy, orad in others), default=np.inf)
            if gap >= 0.004:
                best = (x, y)
                break
            if gap > best_gap:
                best, best_gap = (x, y), gap
    height = min(w.objects[name].shape.bottom, inter.half[2]) + 0.002
    goal.move(name, floor + mat @ np.array([best[0], best[1], height]))


@register
class RestsInside(Predicate):
    """The object rests inside the container: centre in its open volume, set down (speed below
    ``speed`` m/s) and tilted at most ``max_tilt`` radians (default: any; a bagel laid flat: 0.35)."""
    type = "rests_inside"
    args = {"object": Arg("object"), "container": Arg("container"), "tol": Arg("float", 0.01),
            "max_tilt": Arg("float", 3.2), "speed": Arg("float", 0.05)}

    def __call__(self, f):
        o = self.w.objects[self.a["object"]]
        return (in_interior(self.w, f.data, o.name, self.a["container"], self.a["tol"])
                and tilt(f.data, o.body) <= self.a["max_tilt"]
                and (o.vadr is None or float(np.linalg.norm(f.data.qvel[o.vadr:o.vadr + 3])) < self.a["speed"]))

    def realize(self, goal):
        name = self.a["object"]
        if tilt(goal.data, self.w.objects[name].body) > self.a["max_tilt"]:
            goal.set_tilt(name, 0.0)
        free_spot_inside(goal, name, self.a["container"])
        goal.stop(name)


def body_box(model, geoms) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half extents, in the body frame, of the box around an object's colliding geoms."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], float)
    for g in geoms:
        if model.geom_contype[g] == 0 and model.geom_conaffinity[g] == 0:
            continue
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.geom_quat[g])
        c, h = model.geom_aabb[g, :3], model.geom_aabb[g, 3:]
        pts = model.geom_pos[g] + (c + signs * h) @ rot.reshape(3, 3).T
        lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
    return (lo + hi) / 2, (hi - lo) / 2


def z_range(data, body: int, box) -> tuple[float, float]:
    """World heights of the lowest and highest points of a body's box (:func:`body_box`) as posed now."""
    centre, half = box
    row = data.xmat[body].reshape(3, 3)[2]
    zc, dz = data.xpos[body][2] + row @ centre, np.abs(row) @ half
    return float(zc - dz), float(zc + dz)


UP_QUAT = {0: (math.cos(-math.pi / 4), 0.0, math.sin(-math.pi / 4), 0.0),    # body x -> up
           1: (math.cos(math.pi / 4), math.sin(math.pi / 4), 0.0, 0.0),     # body y -> up
           2: (1.0, 0.0, 0.0, 0.0)}


@register
class StandsOn(Predicate):
    """The object stands on end on the support's top (a pier on a bridge's base): its longest side
    within ``max_tilt`` radians of vertical (either end up), its centre over the support's top and
    its lowest point on it."""
    type = "stands_on"
    args = {"object": Arg("object"), "support": Arg("object"), "max_tilt": Arg("float", 0.35),
            "tol": Arg("float", 0.02)}

    def __init__(self, world, a):
        super().__init__(world, a)
        o = world.objects[a["object"]]
        self.box = body_box(world.model, o.geoms)
        self.axis = int(np.argmax(self.box[1]))

    def _top(self, data) -> float:
        s = self.w.objects[self.a["support"]]
        return float(data.xpos[s.body][2] + s.shape.top)

    def __call__(self, f):
        o, s = self.w.objects[self.a["object"]], self.w.objects[self.a["support"]]
        up = abs(float(f.data.xmat[o.body].reshape(3, 3)[2, self.axis]))
        if up < math.cos(self.a["max_tilt"]):
            return False
        p = local(self.w, f.data, f.data.xpos[o.body], s.name)
        tol = self.a["tol"]
        hx, hy = s.shape.top_half
        low = z_range(f.data, o.body, self.box)[0] - self._top(f.data)
        return abs(p[0]) <= hx + tol and abs(p[1]) <= hy + tol and -tol <= low <= tol

    def realize(self, goal):
        """On end at the first free spot along the support's long side: near one end, the other, the middle."""
        w, d, name = self.w, goal.data, self.a["object"]
        o, s = w.objects[name], w.objects[self.a["support"]]
        d.qpos[o.qadr + 3:o.qadr + 7] = UP_QUAT[self.axis]
        hx, hy = s.shape.top_half
        mat = d.xmat[s.body].reshape(3, 3)
        top = d.xpos[s.body] + mat @ np.array([0.0, 0.0, s.shape.top])
        others = [n for n, x in w.objects.items() if n != name and x.qadr is not None]
        spots = [mat @ (np.array([0, f * hy, 0]) if hy >= hx else np.array([f * hx, 0, 0])) for f in (0.55, -0.55, 0)]
        spot = next((top + v for v in spots
                     if all(np.hypot(*(w.pos(d, n)[:2] - (top + v)[:2])) >= o.shape.radius + w.objects[n].shape.radius
                            + 0.004 for n in others)), top)
        goal.move(name, spot)
        low = z_range(d, o.body, self.box)[0]
        goal.move(name, spot + np.array([0, 0, top[2] - low + 0.001]))
        goal.stop(name)


@register
class Bridges(Predicate):
    """The object lies across the supports (a deck on two piers): it touches every one of them and
    neither the table nor a hand."""
    type = "bridges"
    args = {"object": Arg("object"), "supports": Arg("objects")}

    def __call__(self, f):
        i = self.w.idx(self.a["object"])
        return (all(f.touching(i, self.w.idx(s)) for s in self.a["supports"])
                and not f.touching(i, self.w.TABLE) and not f.touching_any(i, self.w.HAND.values()))

    def realize(self, goal):
        """Centred between the supports, its long side along the line through them, resting on the
        highest support top (1 mm into it, so the contacts register)."""
        w, d, name = self.w, goal.data, self.a["object"]
        o = w.objects[name]
        ps = np.array([d.xpos[w.objects[s].body] for s in self.a["supports"]])
        top = max(z_range(d, w.objects[s].body, body_box(w.model, w.objects[s].geoms))[1] for s in self.a["supports"])
        c = ps.mean(axis=0)
        dx, dy = ps[-1][:2] - ps[0][:2]
        hx, hy = o.shape.top_half
        yaw = math.atan2(dy, dx) - (math.pi / 2 if hy > hx else 0.0)
        d.qpos[o.qadr + 3:o.qadr + 7] = [math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
        goal.move(name, (c[0], c[1], top + o.shape.bottom - 0.001))
        goal.stop(name)


@register
class BeenOn(Predicate):
    """History: the object has rested on the support's top at some tick since reset (``on_top``)."""
    type = "been_on"
    args = {"object": Arg("object"), "support": Arg("object"), "tol": Arg("float", 0.02)}

    def __init__(self, world, a):
        super().__init__(world, a)
        self.on = OnTop(world, a)

    def reset(self, data):
        self.seen = False

    def __call__(self, f):
        self.seen = self.seen or self.on(f)
        return self.seen

    def realize(self, goal):
        self.on.realize(goal)
        goal.commit()


@register
class OnTierCount(Predicate):
    """At least ``n`` of the objects rest on tier ``tier`` of a tiered shelf (``on_tier``), e.g. one
    orange on the upper tier and, in another subtask, the other on the lower one."""
    type = "on_tier_count"
    args = {"objects": Arg("objects"), "shelf": Arg("object"), "tier": Arg("int"), "n": Arg("int", 1),
            "tol": Arg("float", 0.02)}

    def _on(self, o: str, tier: int) -> OnTier:
        return OnTier(self.w, {"object": o, "shelf": self.a["shelf"], "tier": tier, "tol": self.a["tol"]})

    def count(self, data) -> int:
        return sum(self._on(o, self.a["tier"]).on(data, o, self.a["tier"]) for o in self.a["objects"])

    def __call__(self, f):
        return self.count(f.data) >= self.a["n"]

    def realize(self, goal):
        """Onto the tier: first the objects on no tier of the shelf, then ones on other tiers."""
        anywhere = self._on(self.a["objects"][0], -1)
        objs = sorted(self.a["objects"], key=lambda o: any(anywhere.on(goal.data, o, k)
                                                           for k in anywhere._tiers()))
        for o in objs:
            if self.count(goal.data) >= self.a["n"]:
                break
            if not self._on(o, self.a["tier"]).on(goal.data, o, self.a["tier"]):
                self._on(o, self.a["tier"]).realize(goal)


@register
class InsideApart(Predicate):
    """The object is inside one of the containers that holds none of ``apart_from`` (sorting: a
    pepper in a bowl without onions)."""
    type = "inside_apart"
    args = {"object": Arg("object"), "containers": Arg("objects"), "apart_from": Arg("objects"),
            "tol": Arg("float", 0.01)}

    def _clean(self, data, c: str) -> bool:
        return not any(in_interior(self.w, data, o, c, self.a["tol"]) for o in self.a["apart_from"])

    def __call__(self, f):
        return any(in_interior(self.w, f.data, self.a["object"], c, self.a["tol"]) and self._clean(f.data, c)
                   for c in self.a["containers"])

    def realize(self, goal):
        c = next((c for c in self.a["containers"] if self._clean(goal.data, c)), self.a["containers"][0])
        free_spot_inside(goal, self.a["object"], c)
