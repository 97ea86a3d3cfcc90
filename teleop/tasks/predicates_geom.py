"""Predicate catalog, part 1: geometric predicates (inside, on top, stacked, tilted, ...)."""
from __future__ import annotations

import numpy as np

from teleop.tasks.args import Arg
from teleop.tasks.predicate_base import Predicate, in_interior, interior_local, local, register, tilt
from teleop.tasks.world import TABLE_TOP


@register
class Lifted(Predicate):
    """The object's bottom is ``height`` above where it rested at reset and it does not touch the table."""
    type = "lifted"
    args = {"object": Arg("object"), "height": Arg("float", 0.04)}

    def reset(self, data):
        self.rest = self.w.bottom_z(data, self.a["object"])

    def __call__(self, f):
        o = self.a["object"]
        return (self.w.bottom_z(f.data, o) >= self.rest + self.a["height"]
                and not f.touching(self.w.idx(o), self.w.TABLE))

    def realize(self, goal):
        goal.lift(self.a["object"], self.a["height"] + 0.05)


@register
class Inside(Predicate):
    """The object's centre is within the container's open volume (container frame, +tol)."""
    type = "inside"
    args = {"object": Arg("object"), "container": Arg("container"), "tol": Arg("float", 0.01)}

    def __call__(self, f):
        return in_interior(self.w, f.data, self.a["object"], self.a["container"], self.a["tol"])

    def realize(self, goal):
        goal.put_inside(self.a["object"], self.a["container"])


@register
class AllInside(Predicate):
    """Every listed object is inside the container."""
    type = "all_inside"
    args = {"objects": Arg("objects"), "container": Arg("container"), "tol": Arg("float", 0.01)}

    def __call__(self, f):
        return all(in_interior(self.w, f.data, o, self.a["container"], self.a["tol"]) for o in self.a["objects"])

    def realize(self, goal):
        for o in self.a["objects"]:        # one per tick, so insertion order is well defined
            goal.put_inside(o, self.a["container"])
            goal.commit()


@register
class CountInside(Predicate):
    """Exactly ``n`` of the listed objects are inside the container."""
    type = "count_inside"
    args = {"objects": Arg("objects"), "container": Arg("container"), "n": Arg("int"), "tol": Arg("float", 0.01)}

    def __call__(self, f):
        c = sum(in_interior(self.w, f.data, o, self.a["container"], self.a["tol"]) for o in self.a["objects"])
        return c == self.a["n"]

    def realize(self, goal):
        for o in self.a["objects"][: self.a["n"]]:
            goal.put_inside(o, self.a["container"])


@register
class Inserted(Predicate):
    """Inside the receptacle and sunk at least ``depth`` below its rim (slots, racks, bottles)."""
    type = "inserted"
    args = {"object": Arg("object"), "container": Arg("container"), "depth": Arg("float", 0.01),
            "tol": Arg("float", 0.01)}

    def __call__(self, f):
        o, c = self.a["object"], self.a["container"]
        if not in_interior(self.w, f.data, o, c, self.a["tol"]):
            return False
        inter = self.w.objects[c].shape.interior
        z = interior_local(self.w, f.data, f.data.xpos[self.w.objects[o].body], c)[2]
        return z <= 2 * inter.half[2] - self.a["depth"]

    def realize(self, goal):
        goal.put_inside(self.a["object"], self.a["container"])


@register
class OnTop(Predicate):
    """The object rests on the support's top surface: xy within its footprint, bottom at its height."""
    type = "on_top"
    args = {"object": Arg("object"), "support": Arg("object"), "tol": Arg("float", 0.02)}

    def __call__(self, f):
        o, s = self.w.objects[self.a["object"]], self.w.objects[self.a["support"]]
        p = local(self.w, f.data, f.data.xpos[o.body], s.name)
        tol = self.a["tol"]
        hx, hy = s.shape.top_half
        bottom = p[2] - o.shape.bottom
        return abs(p[0]) <= hx + tol and abs(p[1]) <= hy + tol and -tol <= bottom - s.shape.top <= tol + 0.01

    def realize(self, goal):
        goal.put_on(self.a["object"], self.a["support"])


@register
class OnTable(Predicate):
    """The object rests on the table top within the workspace."""
    type = "on_table"
    args = {"object": Arg("object"), "tol": Arg("float", 0.015)}

    def __call__(self, f):
        o = self.a["object"]
        x, y, _ = self.w.pos(f.data, o)
        return abs(self.w.bottom_z(f.data, o) - TABLE_TOP) <= self.a["tol"] and 0.2 <= x <= 0.9 and abs(y) <= 0.55

    def realize(self, goal):
        goal.put_on_table(self.a["object"])


@register
class InRegion(Predicate):
    """The object's centre is within an axis-aligned xy box on the table (world frame)."""
    type = "in_region"
    args = {"object": Arg("object"), "x": Arg("float"), "y": Arg("float"), "half_x": Arg("float", 0.05),
            "half_y": Arg("float", 0.05)}

    def __call__(self, f):
        x, y, _ = self.w.pos(f.data, self.a["object"])
        return abs(x - self.a["x"]) <= self.a["half_x"] and abs(y - self.a["y"]) <= self.a["half_y"]

    def realize(self, goal):
        goal.put_on_table(self.a["object"], (self.a["x"], self.a["y"]))


@register
class Near(Predicate):
    """Centres closer than ``distance``."""
    type = "near"
    args = {"object": Arg("object"), "target": Arg("object"), "distance": Arg("float", 0.1)}

    def __call__(self, f):
        d = self.w.pos(f.data, self.a["object"]) - self.w.pos(f.data, self.a["target"])
        return float(d @ d) <= self.a["distance"] ** 2

    def realize(self, goal):
        t = self.w.pos(goal.data, self.a["target"])
        goal.put_on_table(self.a["object"], (t[0] - 0.6 * self.a["distance"], t[1]))


@register
class Upright(Predicate):
    """The object's z axis is within ``max_tilt`` radians of vertical."""
    type = "upright"
    args = {"object": Arg("object"), "max_tilt": Arg("float", 0.35)}

    def __call__(self, f):
        return tilt(f.data, self.w.objects[self.a["object"]].body) <= self.a["max_tilt"]

    def realize(self, goal):
        goal.set_tilt(self.a["object"], 0.0)


@register
class Tilted(Predicate):
    """The object's z axis is at least ``min_tilt`` radians from vertical (e.g. plates standing in a rack)."""
    type = "tilted"
    args = {"object": Arg("object"), "min_tilt": Arg("float", 1.0)}

    def __call__(self, f):
        return tilt(f.data, self.w.objects[self.a["object"]].body) >= self.a["min_tilt"]

    def realize(self, goal):
        goal.set_tilt(self.a["object"], np.pi / 2)


@register
class Stacked(Predicate):
    """Each object rests on the one before it (bottom first)."""
    type = "stacked"
    args = {"objects": Arg("objects"), "tol": Arg("float", 0.02)}

    def __call__(self, f):
        objs = self.a["objects"]
        for below, above in zip(objs, objs[1:]):
            b, t = self.w.objects[below], self.w.objects[above]
            pb, pt = f.data.xpos[b.body], f.data.xpos[t.body]
            gap = (pt[2] - t.shape.bottom) - (pb[2] + b.shape.top)
            if np.hypot(*(pt[:2] - pb[:2])) > b.shape.radius or abs(gap) > self.a["tol"]:
                return False
        return True

    def realize(self, goal):
        for below, above in zip(self.a["objects"], self.a["objects"][1:]):
            goal.put_on(above, below)


@register
class Threaded(Predicate):
    """The object (a ring) sits around the rod: centres within ``tol`` in xy, below the rod's top."""
    type = "threaded"
    args = {"object": Arg("object"), "rod": Arg("object"), "tol": Arg("float", 0.015)}

    def __call__(self, f):
        p, r = self.w.pos(f.data, self.a["object"]), self.w.pos(f.data, self.a["rod"])
        top = r[2] + self.w.objects[self.a["rod"]].shape.top
        return np.hypot(p[0] - r[0], p[1] - r[1]) <= self.a["tol"] and p[2] < top

    def realize(self, goal):
        r = self.w.pos(goal.data, self.a["rod"])
        goal.move(self.a["object"], (r[0], r[1], TABLE_TOP + self.w.objects[self.a["object"]].shape.bottom))


@register
class Above(Predicate):
    """The object is over the target's footprint and at least ``height`` above the target's top."""
    type = "above"
    args = {"object": Arg("object"), "target": Arg("object"), "height": Arg("float", 0.03)}

    def __call__(self, f):
        p, t = self.w.pos(f.data, self.a["object"]), self.w.objects[self.a["target"]]
        q = f.data.xpos[t.body]
        return np.hypot(p[0] - q[0], p[1] - q[1]) <= t.shape.radius and p[2] >= q[2] + t.shape.top + self.a["height"]

    def realize(self, goal):
        t = self.w.objects[self.a["target"]]
        q = goal.data.xpos[t.body]
        goal.move(self.a["object"], (q[0], q[1], q[2] + t.shape.top + self.a["height"] + 0.05))


@register
class Not(Predicate):
    """Negation of another predicate (its realize is a no-op: the start state usually satisfies it)."""
    type = "not"
    args = {"of": Arg("predicate")}

    def reset(self, data):
        self.a["of"].reset(data)

    def __call__(self, f):
        return not self.a["of"](f)

    def violate(self, goal):
        self.a["of"].realize(goal)


def _tier_world(w, data, shelf: str, k: int):
    """(centre xyz of tier k's top in world, its half extents) of a tiered shelf."""
    s = w.objects[shelf]
    x, y, hx, hy, top = s.shape.tiers[k]
    mat = data.xmat[s.body].reshape(3, 3)
    return data.xpos[s.body] + mat @ np.array([x, y, top]), (hx, hy)


@register
class OnTier(Predicate):
    """The object rests on a tier of a tiered shelf (any tier, or tier ``tier`` >= 0): xy within that
    tier's top, bottom at its height."""
    type = "on_tier"
    args = {"object": Arg("object"), "shelf": Arg("object"), "tier": Arg("int", -1), "tol": Arg("float", 0.02)}

    def _tiers(self):
        n = len(self.w.objects[self.a["shelf"]].shape.tiers)
        return range(n) if self.a["tier"] < 0 else [self.a["tier"]] if self.a["tier"] < n else []

    def on(self, data, name: str, k: int) -> bool:
        o, s = self.w.objects[name], self.w.objects[self.a["shelf"]]
        c, (hx, hy) = _tier_world(self.w, data, s.name, k)
        p = data.xmat[s.body].reshape(3, 3).T @ (data.xpos[o.body] - c)
        tol = self.a["tol"]
        return abs(p[0]) <= hx + tol and abs(p[1]) <= hy + tol and -tol <= p[2] - o.shape.bottom <= tol + 0.01

    def __call__(self, f):
        return any(self.on(f.data, self.a["object"], k) for k in self._tiers())

    def realize(self, goal):
        """Onto the tier with the fewest objects, at the first free spot across it."""
        others = [n for n in self.w.objects if n != self.a["object"] and self.w.objects[n].qadr is not None]
        k = min(self._tiers(), key=lambda t: sum(self.on(goal.data, n, t) for n in others))
        c, (hx, hy) = _tier_world(self.w, goal.data, self.a["shelf"], k)
        mat = goal.data.xmat[self.w.objects[self.a["shelf"]].body].reshape(3, 3)
        for dy in (0.0, 0.55 * hy, -0.55 * hy):
            spot = c + mat @ np.array([0.0, dy, 0.0])
            if all(np.hypot(*(self.w.pos(goal.data, n)[:2] - spot[:2])) > 0.06 for n in others):
                break
        goal.move(self.a["object"], spot + np.array([0, 0, self.w.objects[self.a["object"]].shape.bottom + 0.002]))


@register
class Standing(Predicate):
    """The object stands on the table on its end: its long axis (body x: kinds built lying along x,
    e.g. ``bottle``) within ``max_tilt`` radians of pointing up, and it touches the table."""
    type = "standing"
    args = {"object": Arg("object"), "max_tilt": Arg("float", 0.35)}

    def __call__(self, f):
        o = self.w.objects[self.a["object"]]
        up = float(np.clip(f.data.xmat[o.body][6], -1.0, 1.0))        # z component of the body x axis
        return np.arccos(up) <= self.a["max_tilt"] and f.touching(o.index, self.w.TABLE)

    def realize(self, goal):
        name = self.a["object"]
        o = self.w.objects[name]
        goal.data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(-np.pi / 4), 0, np.sin(-np.pi / 4), 0]   # x -> up
        start = goal.start[name]
        goal.move(name, (start[0], start[1], TABLE_TOP + 0.5))
        goal.move(name, (start[0], start[1], TABLE_TOP + 0.5 - (goal.lowest_z(name) - TABLE_TOP) - 0.001))


def max_matching(inside: list[list[bool]]) -> int:
    """Size of a largest assignment of objects (rows) to distinct containers (columns) they are in."""
    match: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j, ok in enumerate(inside[i]):
            if ok and j not in seen:
                seen.add(j)
                if j not in match or augment(match[j], seen):
                    match[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(inside)))


@register
class InsideDistinct(Predicate):
    """At least ``n`` of the objects are inside the containers, one object per container (e.g. a
    spoon in each of two cups, in either order)."""
    type = "inside_distinct"
    args = {"objects": Arg("objects"), "containers": Arg("objects"), "n": Arg("int"), "tol": Arg("float", 0.01)}

    def __call__(self, f):
        rows = [[in_interior(self.w, f.data, o, c, self.a["tol"]) for c in self.a["containers"]]
                for o in self.a["objects"]]
        return max_matching(rows) >= self.a["n"]

    def realize(self, goal):
        for o, c in list(zip(self.a["objects"], self.a["containers"]))[: self.a["n"]]:
            goal.put_inside(o, c)
