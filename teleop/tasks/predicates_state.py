"""Predicate catalog, part 2: contacts and hands, history ("never", "untouched"), joints, scene events."""
from __future__ import annotations

import mujoco
import numpy as np

from teleop.core.conventions import SIDES
from teleop.tasks.args import Arg
from teleop.tasks.predicate_base import Predicate, in_interior, register
from teleop.tasks.world import TABLE_TOP, Frame


def _hands(w, hand: str) -> tuple[int, ...]:
    return tuple(w.HAND[s] for s in SIDES) if hand == "any" else (w.HAND[hand],)


def _hand_side(hand: str) -> str:
    return "right" if hand == "any" else hand


@register
class Touching(Predicate):
    """The two objects are in contact."""
    type = "touching"
    args = {"object": Arg("object"), "other": Arg("object")}

    def __call__(self, f):
        return f.touching(self.w.idx(self.a["object"]), self.w.idx(self.a["other"]))

    def realize(self, goal):
        goal.put_on(self.a["object"], self.a["other"])


@register
class Touched(Predicate):
    """History: the hand (left / right / any) has touched the object since reset."""
    type = "touched"
    args = {"object": Arg("object"), "hand": Arg("hand", "any")}

    def reset(self, data):
        self.seen = False

    def __call__(self, f):
        self.seen = self.seen or f.touching_any(self.w.idx(self.a["object"]), _hands(self.w, self.a["hand"]))
        return self.seen

    def realize(self, goal):
        goal.touch(self.a["object"], _hand_side(self.a["hand"]))


@register
class Untouched(Predicate):
    """History: no robot part has touched the object and it has not moved more than ``tol`` since reset."""
    type = "untouched"
    args = {"object": Arg("object"), "tol": Arg("float", 0.02)}

    def reset(self, data):
        self.ok, self.start = True, self.w.pos(data, self.a["object"]).copy()

    def __call__(self, f):
        if self.ok:
            i = self.w.idx(self.a["object"])
            moved = np.linalg.norm(self.w.pos(f.data, self.a["object"]) - self.start) > self.a["tol"]
            self.ok = not (moved or f.touching_any(i, (*self.w.HAND.values(), self.w.ROBOT)))
        return self.ok

    def violate(self, goal):
        goal.touch(self.a["object"], "right")


def hand_contacts(w, f: Frame, obj: str, hand: str) -> int:
    """Number of distinct hand geoms (fingertip pads, phalanges, palm) touching the object."""
    d, n = f.data, f.data.ncon
    if not n:
        return 0
    g = d.contact.geom[:n]
    o = w.owner[g]
    i = w.idx(obj)
    count = 0
    for h in _hands(w, hand):
        m1 = (o[:, 0] == i) & (o[:, 1] == h)
        m2 = (o[:, 1] == i) & (o[:, 0] == h)
        count = max(count, len(set(g[m1, 1].tolist()) | set(g[m2, 0].tolist())))
    return count


@register
class Grasped(Predicate):
    """At least ``min_contacts`` distinct geoms of the hand touch the object, and it is off the table."""
    type = "grasped"
    args = {"object": Arg("object"), "hand": Arg("hand", "any"), "min_contacts": Arg("int", 2)}

    def __call__(self, f):
        o = self.a["object"]
        return (not f.touching(self.w.idx(o), self.w.TABLE)
                and hand_contacts(self.w, f, o, self.a["hand"]) >= self.a["min_contacts"])

    def realize(self, goal):
        goal.into_hand(self.a["object"], _hand_side(self.a["hand"]))


@register
class PickedUp(Predicate):
    """Lifted ``height`` above its rest height while the hand (left / right / any) touches it."""
    type = "picked_up"
    args = {"object": Arg("object"), "hand": Arg("hand", "any"), "height": Arg("float", 0.03)}

    def reset(self, data):
        self.rest = self.w.bottom_z(data, self.a["object"])

    def __call__(self, f):
        o = self.a["object"]
        i = self.w.idx(o)
        return (self.w.bottom_z(f.data, o) >= self.rest + self.a["height"] and not f.touching(i, self.w.TABLE)
                and f.touching_any(i, _hands(self.w, self.a["hand"])))

    def realize(self, goal):
        goal.into_hand(self.a["object"], _hand_side(self.a["hand"]))


@register
class NeverLifted(Predicate):
    """History: the object has never been ``height`` above its rest height (never picked up)."""
    type = "never_lifted"
    args = {"object": Arg("object"), "height": Arg("float", 0.03)}

    def reset(self, data):
        self.ok, self.rest = True, self.w.bottom_z(data, self.a["object"])

    def __call__(self, f):
        self.ok = self.ok and self.w.bottom_z(f.data, self.a["object"]) < self.rest + self.a["height"]
        return self.ok

    def violate(self, goal):
        goal.lift(self.a["object"], self.a["height"] + 0.05)


@register
class NeverEntered(Predicate):
    """History: the object has never been inside the container."""
    type = "never_entered"
    args = {"object": Arg("object"), "container": Arg("container"), "tol": Arg("float", 0.0)}

    def reset(self, data):
        self.ok = True

    def __call__(self, f):
        self.ok = self.ok and not in_interior(self.w, f.data, self.a["object"], self.a["container"], self.a["tol"])
        return self.ok

    def violate(self, goal):
        goal.put_inside(self.a["object"], self.a["container"])


@register
class AtRest(Predicate):
    """The object's linear speed is below ``speed`` m/s (set down, not moving)."""
    type = "at_rest"
    args = {"object": Arg("object"), "speed": Arg("float", 0.05)}

    def __call__(self, f):
        o = self.w.objects[self.a["object"]]
        return o.vadr is None or float(np.linalg.norm(f.data.qvel[o.vadr:o.vadr + 3])) < self.a["speed"]

    def realize(self, goal):
        goal.stop(self.a["object"])


@register
class JointOpen(Predicate):
    """The fixture's main joint is at least ``fraction`` of the way from closed to open."""
    type = "joint_open"
    args = {"fixture": Arg("articulated"), "fraction": Arg("float", 0.7)}

    def __call__(self, f):
        return self.w.joint_fraction(f.data, self.a["fixture"]) >= self.a["fraction"]

    def realize(self, goal):
        goal.set_joint(self.a["fixture"], min(1.0, self.a["fraction"] + 0.1), carry=True)


@register
class JointClosed(Predicate):
    """The fixture's main joint is at most ``fraction`` of its range from closed."""
    type = "joint_closed"
    args = {"fixture": Arg("articulated"), "fraction": Arg("float", 0.1)}

    def __call__(self, f):
        return self.w.joint_fraction(f.data, self.a["fixture"]) <= self.a["fraction"]

    def realize(self, goal):
        goal.set_joint(self.a["fixture"], max(0.0, self.a["fraction"] - 0.05), carry=True)


@register
class JointBetween(Predicate):
    """The fixture's main joint fraction lies in [low, high]."""
    type = "joint_between"
    args = {"fixture": Arg("articulated"), "low": Arg("float"), "high": Arg("float")}

    def __call__(self, f):
        return self.a["low"] <= self.w.joint_fraction(f.data, self.a["fixture"]) <= self.a["high"]

    def realize(self, goal):
        goal.set_joint(self.a["fixture"], (self.a["low"] + self.a["high"]) / 2, carry=True)


class _Count(Predicate):
    exact = True

    def count(self, data) -> int:
        raise NotImplementedError

    def __call__(self, f):
        c = self.count(f.data)
        return c == self.a["n"] if self.exact else c >= self.a["n"]


@register
class ButtonPressedExactly(_Count):
    """The button has been pressed exactly ``n`` times (a press counts once it is released)."""
    type = "button_pressed_exactly"
    args = {"button": Arg("articulated"), "n": Arg("int")}

    def count(self, data):
        return self.w.events[f"{self.a['button']}.presses"].count(data)

    def realize(self, goal):
        goal.press(self.a["button"], self.a["n"] - self.count(goal.data))


@register
class ButtonPressedAtLeast(ButtonPressedExactly):
    """The button has been pressed at least ``n`` times."""
    type = "button_pressed_at_least"
    exact = False


@register
class EventCountExactly(_Count):
    """A counting scene event (e.g. passes over the cups) has fired exactly ``n`` times."""
    type = "event_count_exactly"
    args = {"event": Arg("event"), "n": Arg("int")}

    def count(self, data):
        return self.w.events[self.a["event"]].count(data)

    def realize(self, goal):
        self.w.events[self.a["event"]].realize(goal, self.a["n"] - self.count(goal.data))


@register
class EventCountAtLeast(EventCountExactly):
    """A counting scene event has fired at least ``n`` times."""
    type = "event_count_at_least"
    exact = False


@register
class ColourIs(Predicate):
    """The object's current (event-driven) colour; 'none' means its colour was removed."""
    type = "colour_is"
    args = {"object": Arg("object"), "colour": Arg("colour")}

    def __call__(self, f):
        return self.w.current_colour(f.data, self.a["object"]) == self.a["colour"]


@register
class Visible(Predicate):
    """The object is in the workspace (not parked away by a scene event)."""
    type = "visible"
    args = {"object": Arg("object")}

    def __call__(self, f):
        return float(self.w.pos(f.data, self.a["object"])[2]) > 0.5


@register
class Covered(Predicate):
    """A cover (upside-down cup) sits over the object: centres within ``tol`` in xy, rim near the table."""
    type = "covered"
    args = {"object": Arg("object"), "cover": Arg("object"), "tol": Arg("float", 0.03)}

    def __call__(self, f):
        p, c = self.w.pos(f.data, self.a["object"]), self.w.pos(f.data, self.a["cover"])
        below = c[2] - self.w.bottom_z(f.data, self.a["object"])
        return np.hypot(p[0] - c[0], p[1] - c[1]) <= self.a["tol"] and below < 0.02

    def realize(self, goal):
        p = self.w.pos(goal.data, self.a["object"])
        goal.move(self.a["cover"], (p[0], p[1], self.w.bottom_z(goal.data, self.a["object"]) + 0.002))


@register
class Uncovered(Covered):
    """The cover is in the workspace and no longer over the object (lifted or moved away)."""
    type = "uncovered"

    def __call__(self, f):
        return float(self.w.pos(f.data, self.a["cover"])[2]) > 0.5 and not super().__call__(f)

    def realize(self, goal):
        p = self.w.pos(goal.data, self.a["cover"])
        goal.move(self.a["cover"], (p[0], p[1], p[2] + 0.15))


@register
class InsideMatchingColour(Predicate):
    """The object is inside whichever listed container currently shows the object's own colour."""
    type = "inside_matching_colour"
    args = {"object": Arg("object"), "containers": Arg("objects"), "tol": Arg("float", 0.01)}

    def _target(self, data):
        want = self.w.spec.object(self.a["object"]).colour
        return next((c for c in self.a["containers"] if self.w.current_colour(data, c) == want), None)

    def __call__(self, f):
        c = self._target(f.data)
        return c is not None and in_interior(self.w, f.data, self.a["object"], c, self.a["tol"])

    def realize(self, goal):
        goal.put_inside(self.a["object"], self._target(goal.data))


@register
class RemovedInOrder(Predicate):
    """Order tracker event: every object went in and came out again, first in first out."""
    type = "removed_in_order"
    args = {"event": Arg("event")}

    def __call__(self, f):
        return self.w.events[self.a["event"]].fifo_done(f.data)

    def realize(self, goal):
        self.w.events[self.a["event"]].realize(goal, 0)


@register
class Hanging(Predicate):
    """The object hangs from the support (a mug from a mug tree's peg): touching it, its bottom at least
    ``height`` above the table, and touching neither the table nor a hand."""
    type = "hanging"
    args = {"object": Arg("object"), "support": Arg("object"), "height": Arg("float", 0.03)}

    def __call__(self, f):
        o, s = self.w.idx(self.a["object"]), self.w.idx(self.a["support"])
        return (f.touching(o, s) and not f.touching(o, self.w.TABLE) and not f.touching_any(o, self.w.HAND.values())
                and self.w.bottom_z(f.data, self.a["object"]) >= TABLE_TOP + self.a["height"])

    def realize(self, goal):
        """Hang it by its ``{object}_hang`` site on the first free ``{support}_hook{i}`` site."""
        m, d = self.w.model, goal.data
        name, sup = self.a["object"], self.a["support"]
        mujoco.mj_kinematics(m, d)
        hangs = [d.site_xpos[m.site(f"{n}_hang").id] for n in self.w.objects
                 if n != name and mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"{n}_hang") >= 0]
        i = 0
        while mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, f"{sup}_hook{i}") >= 0:
            hook = d.site_xpos[m.site(f"{sup}_hook{i}").id].copy()
            if all(np.linalg.norm(h - hook) > 0.03 for h in hangs):
                break
            i += 1
        o = self.w.objects[name]
        d.qpos[o.qadr + 3:o.qadr + 7] = [1, 0, 0, 0]
        mujoco.mj_kinematics(m, d)
        offset = d.site_xpos[m.site(f"{name}_hang").id] - d.xpos[o.body]
        goal.move(name, hook - offset - np.array([0, 0, 0.001]))      # the handle's arm bears on the peg
