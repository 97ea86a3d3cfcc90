"""Script steps -> per-hand keyframe timelines in robot space (palm pose, grip, grasp shape)."""
from __future__ import annotations

import numpy as np

from teleop.core.errors import ConfigError
from teleop.core.conventions import SIDES
from teleop.control.synthetic.grasp_steps import GraspSteps, palm_rotation
from teleop.control.synthetic.motion import Key, SidePlan, Timeline
from teleop.control.synthetic.scene_query import SceneQuery
from teleop.control.synthetic.script import Script, Step
from teleop.control.synthetic.swing import arc, axis_rotation

SETTLE_S = 1.0          # still hands at the start, like an operator who has just engaged
CLEAR_DIST = 0.30       # m: an idle hand this near where the other hand is going moves aside
ASIDE = np.array([-0.08, 0.10, 0.05])   # back, outward (+y on the left, mirrored), up


class Planner(GraspSteps):
    """A script -> one keyframe timeline per hand; the grasp steps are :class:`GraspSteps`."""

    def __init__(self, query: SceneQuery, start: dict[str, Key], tip_offset, segment_starts=(0.0,)):
        self.q = query
        self.sides = {s: SidePlan(start[s]) for s in SIDES}
        self.home = dict(start)
        self._tip_offset = tip_offset          # (side, grasp, finger[, node, grip]) -> (3,) palm frame
        self._auto = "right"
        self.segment_starts = tuple(segment_starts)   # seconds at which each instruction segment begins
        # side -> (object, object centre - palm offset, object centre - object bottom)
        self._held: dict[str, tuple[str, np.ndarray, float]] = {}
        # Objects the plan has already moved: where they will be, as a shift from the reset pose.
        self._moved: dict[str, np.ndarray] = {}

    def plan(self, script: Script) -> dict[str, Timeline]:
        for plan in self.sides.values():
            plan.wait(SETTLE_S)          # engage, let the robot ease in, then move
        for i, step in enumerate(script.steps):
            side = self._side(step)
            if step.sync:
                t = max(p.t for p in self.sides.values())
                for plan in self.sides.values():
                    if t > plan.t:
                        plan.wait(t - plan.t)
            handler = getattr(self, f"_{step.do}")
            try:
                handler(self.sides[side], side, step.args)
            except KeyError as exc:
                raise ConfigError(f"{script.path}: steps[{i}] ({step.do}) needs argument {exc}") from None
        end = max(p.t for p in self.sides.values()) + 1.0
        for plan in self.sides.values():
            plan.wait(end - plan.t)
        return {s: Timeline(p.keys) for s, p in self.sides.items()}

    # -- where things are (at the reset, or where an earlier step of the plan put them) ---------
    def _position(self, name: str) -> np.ndarray:
        return self.q.position(name) + self._moved.get(name, 0.0)

    def _extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.q.extent(name)
        shift = self._moved.get(name, np.zeros(3))
        return lo + shift, hi + shift

    def _side(self, step: Step) -> str:
        if step.side != "auto":
            self._auto = step.side
            return step.side
        name = step.args.get("object")
        if name is not None and name not in {held[0] for held in self._held.values()}:
            self._auto = "left" if self._position(name)[1] >= 0 else "right"
        elif "handle" in step.args:
            self._auto = "left" if self.q.geom(step.args["handle"])[1] >= 0 else "right"
        return self._auto

    def _clear_way(self, side: str, point: np.ndarray) -> None:
        """The other hand, idle at home (holding nothing), moves aside when this hand is going near
        it, as a person moves a resting hand out of the way. (Before the two arms collided, a hand
        placing next to the idle one went through it.)"""
        other = "left" if side == "right" else "right"
        plan, home = self.sides[other], self.home[other].pos
        if other in self._held or np.linalg.norm(plan.last.pos - home) > 0.02:
            return
        if np.linalg.norm(plan.last.pos - point) > CLEAR_DIST:
            return
        t = self.sides[side].t
        if plan.t < t:
            plan.wait(t - plan.t)
        outward = 1.0 if other == "left" else -1.0
        plan.go(home + ASIDE * [1.0, outward, 1.0], duration=1.0)

    # -- steps ---------------------------------------------------------------------------------
    def _place(self, plan: SidePlan, side: str, a: dict) -> None:
        target = a["target"]
        lo, hi = self._extent(target)
        centre = (lo + hi) / 2 + np.r_[np.asarray(a.get("offset", (0.0, 0.0)), float), 0.0]
        # The held object keeps its offset from the palm: bring the OBJECT'S BOTTOM ``above`` the
        # target's top, over its centre, then lower it by ``lower`` and let go.
        held, grip_offset, half_height = self._held.get(side, (None, np.zeros(3), 0.0))
        above = np.r_[centre[:2], hi[2] + half_height + a.get("above", 0.12)] - grip_offset
        self._clear_way(side, above)
        transit = max(plan.last.pos[2], above[2]) + a.get("transit", 0.04)   # over, never through
        plan.go(np.r_[plan.last.pos[:2], transit], grip=1.0)
        plan.go(np.r_[above[:2], transit])
        plan.go(above)
        plan.go(above - [0, 0, a.get("lower", 0.08)], duration=a.get("lower_s", 0.8))
        if held is not None:       # it comes to rest on the target (``rest: bottom``: inside it)
            floor = lo[2] + 0.01 if a.get("rest", "top") == "bottom" else hi[2]
            self._moved[held] = np.r_[centre[:2], floor + half_height] - self.q.position(held)
        self._let_go(plan, a)
        plan.go(plan.last.pos + [0, 0, a.get("retreat", 0.10)], duration=a.get("retreat_s", 0.6))
        self._held.pop(side, None)

    def _press(self, plan: SidePlan, side: str, a: dict) -> None:
        name = a["object"]
        rot = palm_rotation(a.get("pitch", 1.25), a.get("yaw", 0.0))
        tip = rot @ self._tip_offset(side, "point", "index")
        top = np.r_[self._position(name)[:2], self._extent(name)[1][2]]
        hover = top + [0, 0, a.get("hover", 0.04)] - tip
        plan.go(hover + [0, 0, 0.06], rot, grip=1.0, grasp="point")
        plan.go(hover, duration=0.5)
        for _ in range(int(a.get("times", 1))):
            plan.go(top - [0, 0, a.get("depth", 0.012)] - tip, duration=a.get("down_s", 0.35))
            plan.go(hover, duration=a.get("up_s", 0.35))
        plan.go(hover + [0, 0, 0.08], duration=0.5)

    def _pull(self, plan: SidePlan, side: str, a: dict) -> None:
        self._grasp(plan, side, {**a, "lift": 0.0})
        direction = np.asarray(a.get("direction", (-1.0, 0.0, 0.0)), float)
        plan.go(plan.last.pos + direction / np.linalg.norm(direction) * a.get("distance", 0.15),
                duration=a.get("pull_s", 1.5))
        self._let_go(plan, a)
        plan.go(plan.last.pos + [0, 0, 0.1], duration=0.6)
        self._held.pop(side, None)

    def _hook(self, plan: SidePlan, side: str, a: dict) -> None:
        """Fingers down behind a bar handle (palm toward the robot), curl them round it, pull along
        ``direction`` by ``distance``, let go. For drawers, doors and lids with bar handles."""
        rot = palm_rotation(a.get("pitch", np.pi / 2), a.get("yaw", 0.0))
        bar = self.q.geom(a["handle"])
        # The middle-finger knuckle goes just above the bar, in the gap behind it.
        knuckle = bar + np.asarray(a.get("knuckle_offset", (0.03, 0.0, 0.025)), float)
        at = knuckle - rot @ self._tip_offset(side, "hook", "middle", "mcp", 0.0)
        plan.go(at + [0, 0, a.get("clearance", 0.20)], rot, grip=0.0, grasp="hook")   # fingertips clear the top
        plan.go(at, duration=a.get("descend_s", 1.0))
        plan.wait(a.get("settle_s", 0.3))
        plan.go(grip=1.0, duration=a.get("close_s", 0.8))
        direction = np.asarray(a.get("direction", (-1.0, 0.0, 0.0)), float)
        plan.go(at + direction / np.linalg.norm(direction) * a["distance"], duration=a.get("pull_s", 1.5))
        plan.go(grip=0.0, duration=0.5)
        plan.go(plan.last.pos + np.asarray(a.get("retreat", (-0.03, 0.0, 0.08))), duration=0.6)

    def _swing(self, plan: SidePlan, side: str, a: dict) -> None:
        """Take a hinged part and carry it round its hinge: a fingertip (``finger``/``node`` of the
        ``grasp`` shape at ``grip``; a list of fingers: the point between them) goes to the ``part``
        geom + ``offset``, arriving along ``approach`` (palm: ``pitch``, ``yaw``, then ``roll``
        about the fingers); then the hand moves on the circle about ``joint``'s axis (default: the
        part's hinge) by ``angle`` (rad, positive opens), the palm turning ``turn`` times as far as
        the part; then let go and back off by ``retreat``. Under a lid's lip or a cap's tab
        (``point``, lifting), or round a handle (``pinch`` with ``preshape: 0``, closing on it)."""
        rot = palm_rotation(a.get("pitch", 0.0), a.get("yaw", 0.0)) @ axis_rotation((0, 0, 1), a.get("roll", 0.0))
        shape, grip = a.get("grasp", "point"), a.get("grip", 1.0)
        point = self.q.geom(a["part"]) + np.asarray(a.get("offset", (0.0, 0.0, 0.0)), float)
        fingers = a.get("finger", "index")
        fingers = [fingers] if isinstance(fingers, str) else fingers
        tip = np.mean([self._tip_offset(side, shape, f, a.get("node", "tip"), grip) for f in fingers], axis=0)
        at = point - rot @ tip
        pre = at + np.asarray(a.get("approach", (-0.06, 0.0, 0.0)), float)
        self._clear_way(side, at)
        plan.go(pre + [0, 0, a.get("clearance", 0.0)], rot, grip=a.get("preshape", grip), grasp=shape)
        plan.go(pre, duration=a.get("descend_s", 0.6))
        plan.go(at, duration=a.get("approach_s", 0.8))
        plan.go(grip=grip, duration=a.get("close_s", 0.5))
        plan.wait(a.get("settle_s", 0.3))
        anchor, axis = self.q.hinge(a["joint"] if "joint" in a else self.q.part_hinge(a["part"]))
        keys = arc(at, rot, anchor, axis, float(a["angle"]), a.get("turn", 1.0))
        step_s = a.get("swing_s", 2.0) / len(keys)
        for pos, r in keys:
            plan.go(pos, r, duration=step_s)
        plan.wait(a.get("hold_s", 0.3))
        if a.get("let_go", True):
            self._let_go(plan, a)
            plan.go(plan.last.pos + np.asarray(a.get("retreat", (-0.05, 0.0, 0.05)), float), duration=0.6)

    def _move(self, plan: SidePlan, side: str, a: dict) -> None:
        if "over" in a or "over_site" in a:   # the held object's centre ``height`` over the target's top centre
            pos = self._over(side, a.get("over"), a.get("height", 0.05), a.get("part"), a.get("low_end", False),
                             a.get("over_site"), a.get("part_site"))
        else:
            pos = self._position(a["object"]) if "object" in a else plan.last.pos
        pos = pos + np.asarray(a.get("offset", (0.0, 0.0, 0.0)), float)
        rot = palm_rotation(a["pitch"], a.get("yaw", 0.0)) if "pitch" in a else None
        if "held_heading" in a:          # opt-in: turn the palm until the held object's axis has this heading
            rot = palm_rotation(a.get("pitch", 0.6), self._turn_held(plan, side, float(a["held_heading"])))
        if rot is not None and "roll" in a:     # then turned about the fingers (stand a held bottle up)
            rot = rot @ axis_rotation((0, 0, 1), a["roll"])
        # ``grasp``: the hand shape the grip blends toward from here on (default: the one in use), e.g.
        # a two-hand lift whose fingers curl in the "ready" shape after a place left "release" in use.
        plan.go(pos, rot, grip=a.get("grip"), grasp=a.get("grasp"), duration=a.get("seconds"))

    def _turn_held(self, plan: SidePlan, side: str, heading: float) -> float:
        """The palm yaw that turns the held object's own axis (its local x in the table plane, either
        way along it) onto ``heading``: the palm's yaw now plus the smaller turn (at most 90 deg),
        seen from where the object points now (a mug's handle that turned as the fingers closed)."""
        z = plan.last.rot[:, 2]                     # the fingers' direction
        palm_yaw = float(np.arctan2(z[1], z[0]))
        turn = (heading - self.q.yaw(self._held[side][0]) + np.pi / 2) % np.pi - np.pi / 2
        return palm_yaw + turn

    def _over(self, side: str, target: str | None, height: float, part: str | None = None, low_end: bool = False,
              target_site: str | None = None, part_site: str | None = None) -> np.ndarray:
        """Where the palm goes so the held object's centre is ``height`` over ``target``'s top centre
        (the object keeps its offset from the palm): lining a ring up over a rod's tip. Opt-in points
        on the held object: its named geom ``part`` (a hammer's head over a nail), its named site
        ``part_site`` (the inside of a mug's handle loop), or with ``low_end`` its lowest point as it
        hangs now (the low end of a rod held tilted, over a glass's mouth); on the target: a named
        site ``target_site`` (a mug tree's peg top) instead of its top centre."""
        if target_site is not None:
            lo = hi = self.q.site(target_site)
        else:
            lo, hi = self._extent(target)
        held, grip_offset, _ = self._held.get(side, (None, np.zeros(3), 0.0))
        if held is not None and (part is not None or part_site is not None):   # as it sits on the object now
            point = self.q.site(part_site) if part_site is not None else self.q.geom(part)
            grip_offset = grip_offset + point - self.q.position(held)
        elif held is not None and low_end:
            grip_offset = grip_offset + self.q.lowest_point(held) - self.q.position(held)
        return np.r_[(lo[:2] + hi[:2]) / 2, hi[2] + height] - grip_offset

    def _expect(self, plan: SidePlan, side: str, a: dict) -> None:
        """The scene will put ``object`` over ``over`` (e.g. a cover revealed by an event): plan the
        steps that follow with it there, centred on ``over`` and standing on ``over``'s bottom."""
        name, over = a["object"], a["over"]
        lo, hi = self.q.extent(name)
        o_lo, _ = self._extent(over)
        target = self._position(over)
        self._moved[name] = np.r_[target[:2] - (lo[:2] + hi[:2]) / 2, o_lo[2] - lo[2]]

    def _release(self, plan: SidePlan, side: str, a: dict) -> None:
        self._let_go(plan, a)
        self._held.pop(side, None)

    @staticmethod
    def _let_go(plan: SidePlan, a: dict) -> None:
        """Open the hand, then swing the thumb out of the palm so nothing stays wedged in it.
        ``lift_off`` (m): first lift the open hand off the object, so the thumb swinging out does
        not push it (a round object set down on a flat top rolls). ``spread: false`` leaves the
        thumb where the open grasp has it: a thumb in a ring's hole, swung out, jams the ring on
        the rod it was just threaded onto and lifts it off again with the hand."""
        plan.go(grip=0.0, duration=a.get("open_s", 0.5))
        if a.get("lift_off", 0.0) > 0:
            plan.go(plan.last.pos + [0.0, 0.0, a["lift_off"]], duration=0.4)
        if a.get("spread", True):
            plan.go(grip=1.0, grasp="release", duration=a.get("spread_s", 0.4))

    def _wait(self, plan: SidePlan, side: str, a: dict) -> None:
        """``seconds: s``, or ``until_segment: k``: until instruction segment k shows (+ ``react``)."""
        if "until_segment" in a:
            k = int(a["until_segment"])
            if not 0 <= k < len(self.segment_starts):
                raise ConfigError(f"until_segment {k}: the task has {len(self.segment_starts)} instruction segments")
            plan.wait(max(0.0, self.segment_starts[k] + a.get("react", 0.8) - plan.t))
        else:
            plan.wait(float(a["seconds"]))

    def _rest(self, plan: SidePlan, side: str, a: dict) -> None:
        home = self.home[side]
        plan.go(home.pos, home.rot, grip=0.0)
