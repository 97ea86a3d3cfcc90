"""Predicate catalog, part 3: watering a plant from a can's spout, one scene event firing only
after another reached a count, and a fixture driven home by a tool (instruction-following,
long-horizon and memory tasks)."""
from __future__ import annotations

import mujoco
import numpy as np

from teleop.tasks.args import Arg
from teleop.tasks.predicate_base import Predicate, register
from teleop.tasks.world import Frame

# A hammer's push lasts a few control ticks and the nail slides on a tick or two after the head
# lifts, so the tool's last touch may lead the moment the joint reaches closed by this much.
DRIVEN_WINDOW_S = 0.5
# Lowering a tool onto a fixture for a goal state: the step and the most steps before giving up.
GOAL_LOWER_STEP_M, GOAL_LOWER_STEPS = 0.002, 60


def _site(w, data, name: str) -> np.ndarray:
    return data.site_xpos[w.model.site(name).id]


@register
class Watering(Predicate):
    """The can pours onto the target (a watering can over a plant): its ``{object}_spout`` tip is over
    the target's footprint (its radius + ``tol``) and above its top, and the spout points at least
    ``min_drop`` radians below horizontal."""
    type = "watering"
    args = {"object": Arg("object"), "target": Arg("object"), "min_drop": Arg("float", 0.2),
            "tol": Arg("float", 0.02)}

    def __call__(self, f):
        can, t = self.a["object"], self.w.objects[self.a["target"]]
        tip, base = _site(self.w, f.data, f"{can}_spout"), _site(self.w, f.data, f"{can}_spout_base")
        q = f.data.xpos[t.body]
        d = tip - base
        drop = float(np.arcsin(np.clip(-d[2] / max(float(np.linalg.norm(d)), 1e-9), -1.0, 1.0)))
        return (float(np.hypot(tip[0] - q[0], tip[1] - q[1])) <= t.shape.radius + self.a["tol"]
                and tip[2] >= q[2] + t.shape.top and drop >= self.a["min_drop"])

    def realize(self, goal):
        """Tip the can forward 75 degrees (spout 30 degrees below horizontal) with the tip 4 cm over
        the target's centre."""
        can, t = self.a["object"], self.w.objects[self.a["target"]]
        o = self.w.objects[can]
        pitch = np.radians(75)
        goal.data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(pitch / 2), 0, np.sin(pitch / 2), 0]
        mujoco.mj_kinematics(goal.model, goal.data)
        offset = _site(self.w, goal.data, f"{can}_spout") - goal.data.xpos[o.body]
        q = goal.data.xpos[t.body]
        goal.move(can, np.array([q[0], q[1], q[2] + t.shape.top + 0.04]) - offset)


@register
class FiredAfter(Predicate):
    """History: the ``event`` has fired and, the first time it did, the ``after`` event had already
    fired at least ``n`` times (e.g. the blue button pressed only once the red one was pressed ten times)."""
    type = "fired_after"
    args = {"event": Arg("event"), "after": Arg("event"), "n": Arg("int")}

    def reset(self, data):
        self.first: bool | None = None
        self._check(data)

    def _check(self, data) -> None:
        if self.first is None and self.w.events[self.a["event"]].count(data) > 0:
            self.first = self.w.events[self.a["after"]].count(data) >= self.a["n"]

    def __call__(self, f):
        self._check(f.data)
        return bool(self.first)

    def realize(self, goal):
        """Fire ``after`` up to ``n``, then ``event`` once (if neither is done yet)."""
        ev, after = self.w.events[self.a["event"]], self.w.events[self.a["after"]]
        if ev.count(goal.data) == 0:
            if after.count(goal.data) < self.a["n"]:
                after.realize(goal, self.a["n"] - after.count(goal.data))
            ev.realize(goal, 1)

    def violate(self, goal):
        """Fire ``event`` now, before anything else (only meaningful while it has not fired yet)."""
        self.w.events[self.a["event"]].realize(goal, 1)


@register
class DrivenWith(Predicate):
    """History: the fixture's main joint came within ``fraction`` of closed while the ``tool`` touched
    it (or within DRIVEN_WINDOW_S before): a nail driven by the hammer, not pressed in by a bare hand
    after the hammer was put down. Judged at the tick the joint closes; a joint that is already
    closed stays unjudged until it opens and closes again."""
    type = "driven_with"
    args = {"fixture": Arg("articulated"), "tool": Arg("object"), "fraction": Arg("float", 0.1)}

    def reset(self, data):
        self.done, self.last_touch = False, -np.inf
        self.was_closed = self._closed(data)

    def _closed(self, data) -> bool:
        return self.w.joint_fraction(data, self.a["fixture"]) <= self.a["fraction"]

    def __call__(self, f):
        if not self.done:
            if f.touching(self.w.idx(self.a["tool"]), self.w.idx(self.a["fixture"])):
                self.last_touch = f.data.time
            closed = self._closed(f.data)
            if closed and not self.was_closed:
                self.done = f.data.time - self.last_touch <= DRIVEN_WINDOW_S
            self.was_closed = closed
        return self.done

    def realize(self, goal):
        """One tick with the tool resting on the open fixture, then the joint closed with the tool
        lowered onto it again (the scorer's next tick sees the closing under the tool)."""
        self._lower_onto(goal)
        goal.commit()
        goal.set_joint(self.a["fixture"], max(0.0, self.a["fraction"] - 0.05))
        self._lower_onto(goal)

    def violate(self, goal):
        """Close the joint with the tool nowhere near (a bare push)."""
        goal.set_joint(self.a["fixture"], max(0.0, self.a["fraction"] - 0.05))
        goal.commit()

    def _lower_onto(self, goal) -> None:
        tool, fixture = self.a["tool"], self.a["fixture"]
        goal.put_on(tool, fixture)
        t, i = self.w.idx(tool), self.w.idx(fixture)
        for _ in range(GOAL_LOWER_STEPS):
            mujoco.mj_forward(goal.model, goal.data)
            if Frame(self.w, goal.data, 0).touching(t, i):
                return
            goal.lift(tool, -GOAL_LOWER_STEP_M)
        raise AssertionError(f"{tool} never touched {fixture} when lowered onto it")
