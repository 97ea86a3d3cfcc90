"""Scene events memory tasks need: press counters, pass-over counters, colour swaps, reveals, FIFO order.

All event state lives in ``mjData.userdata`` (part of ``mjSTATE_INTEGRATION``), so a serialised
state restores it exactly and replay from an initial state reproduces it tick by tick. Events are
updated once per control tick, after physics, by :meth:`TaskRuntime.after_step`. Colours are a pure
function of that state and are pushed into ``model.geom_rgba`` for rendering.
"""
from __future__ import annotations

from typing import ClassVar

import mujoco
import numpy as np

from teleop.tasks.args import Arg
from teleop.tasks.predicates import in_interior
from teleop.tasks.spec import COLOURS, automatic_events

EVENTS: dict[str, type[Event]] = {}


def register(cls):
    EVENTS[cls.type] = cls
    return cls


class Event:
    type: ClassVar[str] = ""
    args: ClassVar[dict[str, Arg]] = {}

    def __init__(self, world, name: str, a: dict, slot: int):
        self.w, self.name, self.a, self.slot = world, name, a, slot

    @classmethod
    def n_slots(cls, a: dict) -> int:
        return 2

    def update(self, data) -> None:
        pass

    def count(self, data) -> int:
        return int(data.userdata[self.slot + 1])

    def colour_of(self, data, obj: str) -> str | None:
        """The colour this event imposes on ``obj`` (None = no opinion)."""
        return None

    def realize(self, goal, n: int) -> None:
        pass


@register
class PressCounter(Event):
    """Counts presses of a button: a press is depression past 70 % then release below 30 %.

    Added automatically for every ``button`` object as event ``{button}.presses``."""
    type = "press_counter"
    args = {"button": Arg("articulated")}

    def update(self, data):
        u, s = data.userdata, self.slot
        frac = self.w.joint_fraction(data, self.a["button"])
        if u[s] == 0 and frac > 0.7:
            u[s] = 1
        elif u[s] == 1 and frac < 0.3:
            u[s], u[s + 1] = 0, u[s + 1] + 1

    def realize(self, goal, n):
        for _ in range(max(n, 0)):
            for frac in (1.0, 0.0):
                goal.set_joint(self.a["button"], frac)
                goal.commit()


@register
class PassOverCounter(Event):
    """Counts how often ``object`` enters the space above any of ``over`` (``height`` above their top)."""
    type = "pass_over_counter"
    args = {"object": Arg("object"), "over": Arg("objects"), "height": Arg("float", 0.03)}

    def _above(self, data) -> bool:
        p = self.w.pos(data, self.a["object"])
        for name in self.a["over"]:
            t = self.w.objects[name]
            q = data.xpos[t.body]
            if np.hypot(p[0] - q[0], p[1] - q[1]) <= t.shape.radius and p[2] >= q[2] + t.shape.top + self.a["height"]:
                return True
        return False

    def update(self, data):
        u, s = data.userdata, self.slot
        above = self._above(data)
        if above and u[s] == 0:
            u[s + 1] += 1
        u[s] = float(above)

    def realize(self, goal, n):
        t = self.w.objects[self.a["over"][0]]
        for _ in range(max(n, 0)):
            q = goal.data.xpos[t.body].copy()
            z = q[2] + t.shape.top + self.a["height"] + 0.06
            goal.move(self.a["object"], (q[0], q[1], z))
            goal.commit()
            goal.move(self.a["object"], (q[0] - 0.25, q[1], z))
            goal.commit()


@register
class ColourSwap(Event):
    """Two objects exchange colours every time the ``counter`` event fires (parity of its count)."""
    type = "colour_swap"
    args = {"objects": Arg("objects"), "counter": Arg("event")}

    @classmethod
    def n_slots(cls, a):
        return 0

    def colour_of(self, data, obj):
        objs = self.a["objects"]
        if obj not in objs:
            return None
        k = self.w.events[self.a["counter"]].count(data)
        return self.w.spec.object(objs[(objs.index(obj) + k) % len(objs)]).colour


@register
class ColourHide(Event):
    """The object's colour disappears ('none') once the ``counter`` event reached ``at``."""
    type = "colour_hide"
    args = {"object": Arg("object"), "counter": Arg("event"), "at": Arg("int")}

    @classmethod
    def n_slots(cls, a):
        return 0

    def colour_of(self, data, obj):
        if obj != self.a["object"]:
            return None
        return "none" if self.w.events[self.a["counter"]].count(data) >= self.a["at"] else None


@register
class Reveal(Event):
    """Once ``counter`` reaches ``at``, each parked cover is placed over the object it ``covers``."""
    type = "reveal"
    args = {"objects": Arg("objects"), "counter": Arg("event"), "at": Arg("int")}

    @classmethod
    def n_slots(cls, a):
        return 1

    def update(self, data):
        if data.userdata[self.slot] == 0 and self.w.events[self.a["counter"]].count(data) >= self.a["at"]:
            data.userdata[self.slot] = 1
            for cover in self.a["objects"]:
                target = self.w.spec.object(cover).covers
                p = self.w.pos(data, target)
                self.w.place(data, cover, (p[0], p[1], self.w.bottom_z(data, target) + 0.001), 0.0)
            mujoco.mj_forward(self.w.model, data)      # predicates read poses of this same tick

    def count(self, data):
        return int(data.userdata[self.slot])


@register
class OrderTracker(Event):
    """Records the order objects first enter ``container`` and then leave it (FIFO memory tasks).

    Slots: per object (inside flag, entry rank, exit rank), then (entries, exits)."""
    type = "order_tracker"
    args = {"objects": Arg("objects"), "container": Arg("container")}

    @classmethod
    def n_slots(cls, a):
        return 3 * len(a["objects"]) + 2

    def update(self, data):
        u, s, n = data.userdata, self.slot, len(self.a["objects"])
        for i, obj in enumerate(self.a["objects"]):
            k = s + 3 * i
            inside = in_interior(self.w, data, obj, self.a["container"], 0.0)
            if inside and u[k] == 0:
                u[k] = 1
                if u[k + 1] == 0:
                    u[s + 3 * n] += 1
                    u[k + 1] = u[s + 3 * n]
            elif not inside and u[k] == 1:
                u[k] = 0
                if u[k + 1] > 0 and u[k + 2] == 0:
                    u[s + 3 * n + 1] += 1
                    u[k + 2] = u[s + 3 * n + 1]

    def count(self, data):
        return int(data.userdata[self.slot + 3 * len(self.a["objects"]) + 1])

    def fifo_done(self, data) -> bool:
        u, s, n = data.userdata, self.slot, len(self.a["objects"])
        rows = u[s:s + 3 * n].reshape(n, 3)
        if np.any(rows[:, 0] != 0) or np.any(rows[:, 1] == 0) or np.any(rows[:, 2] == 0):
            return False
        return bool(np.all(np.argsort(rows[:, 1]) == np.argsort(rows[:, 2])))

    def realize(self, goal, n):
        u, s, k = goal.data.userdata, self.slot, len(self.a["objects"])
        ranks = [u[s + 3 * i + 1] for i in range(k)]
        for i in np.argsort(ranks):
            goal.put_on_table(self.a["objects"][i])
            goal.commit()


def build_events(world, spec) -> list[Event]:
    """The objects' automatic events (button press counters), then the spec's; allocates userdata slots."""
    out, slot = [], 0
    for e in (*automatic_events(spec.objects), *spec.events):
        ev = EVENTS[e.type](world, e.name, e.args, slot)
        slot += EVENTS[e.type].n_slots(e.args)
        out.append(ev)
        world.events[e.name] = ev
    return out


def n_userdata(spec) -> int:
    return sum(EVENTS[e.type].n_slots(e.args) for e in (*automatic_events(spec.objects), *spec.events))


def apply_colours(world, model, data) -> None:
    """Push event-driven colours into the model for rendering (a function of userdata only)."""
    for name in world.coloured:
        c = world.current_colour(data, name)
        model.geom_rgba[world.objects[name].geoms] = COLOURS[c] if c else world.base_rgba[world.objects[name].geoms]
