"""Script steps -> per-hand keyframe timelines in robot space (palm pose, grip, grasp shape)."""
from __future__ import annotations

import numpy as np

from teleop.core.errors import ConfigError
from teleop.core.conventions import SIDES
from teleop.control.synthetic.motion import Key, Timeline
from teleop.control.synthetic.scene_query import SceneQuery
from teleop.control.synthetic.script import Script, Step
from teleop.control.synthetic.swing import arc, axis_rotation

SPEED = 0.35            # m/s: an unhurried reach
TOP_LIFT_M = 0.12       # a top grasp lifts the object this far (clear of a container's rim)
SIDE_LIFT_M = 0.08      # a side grasp lifts less: the hand is already high on the object
MIN_MOVE_S = 0.4
SETTLE_S = 1.0          # still hands at the start, like an operator who has just engaged
CLEAR_DIST = 0.30       # m: an idle hand this near where the other hand is going moves aside
ASIDE = np.array([-0.08, 0.10, 0.05])   # back, outward (+y on the left, mirrored), up
# Small things in a top power grasp (issue 16): the "power" shape's thumb tip closes 8.4 cm out of the
# palm, beyond anything narrower than ~6 cm, so the thumb missed it and the fingers alone pushed it
# away. Objects this narrow (m, the narrower horizontal side) get SMALL_GRASP instead, with the
# fingers pre-curled by SMALL_PRESHAPE on the way down so their tips do not land on the table first.
SMALL_NARROW_M = 0.06
SMALL_GRASP = {"power": "power_tight"}     # shape asked for -> shape used on a small object
SMALL_PRESHAPE = 0.5                      # half closed while descending (open fingers reach the table)
# Upright tall things (cans, bottles, cartons: taller than TALL_RATIO x their narrow side) are taken
# from above, low: the open fingers go down round the top third and close on it. Measured in the
# grasp bench (issue 16): 6 of 6 held through the lift and the 1 g shake, where the hand upright
# beside the object (a side grasp) put the FR3's wrist on the table and held 0 of 38.
TALL_RATIO = 1.5
TALL_GRASP = {"height": 0.06,     # m: the palm 1 cm over the top (the default 12 cm closes on air)
              "preshape": 0.0,    # fingers open all the way down (pre-curled, they land on the top)
              "draw": 0.06}       # closing draws it this far back toward the palm
# Side (handshake) grasps of tall objects: the wrist (the palm frame's origin) relative to the object.
PALM_SURFACE = 0.018     # m: palm face from the wrist axis (robot.yaml palm centre x + half size x)
SIDE_STANDOFF = 0.01     # m: gap left between the palm and the object's side while sliding in
SIDE_REACH = 0.075       # m: wrist behind the object's centre, so it sits against the finger roots
SIDE_HEIGHT = 0.75       # share of the object's height where the finger roots hold it
SIDE_PITCH = 0.6         # rad: fingers tipped down, so the forearm slopes down to the hand, clear of the table
SIDE_SLIDE = 0.07        # m: the sideways slide in, started clear of the object
# Pinch grasps of small and flat things (cubes, slabs, utensils): the point where the thumb and
# index tips meet in the "pinch" shape goes to the object's centre, the palm facing the table.
PINCH_AIM_GRIP = 0.8     # the tips meet at this blend of the pinch shape (human hand keypoints)
PINCH_PITCH = 0.5        # rad: fingers tipped down (0.2: 4 of 10 small and flat things held, 0.5: 9 of 10)
PINCH_HEIGHT = 0.5       # share of the object's height at the pinch point
PINCH_PRESHAPE = 0.4     # half open on the way down: the tips 6-8 cm apart, clear of the table
# Which things are pinched by default (a script's ``style`` wins): no taller than this and no wider
# across than that. Measured in the grasp bench: 29 of 33 low objects held by the pinch (3 of the
# 4 dropped are wider, 70-90 mm: steak, bread, a tray of ice), against 9 of 33 by the top grasp.
PINCH_MAX_HEIGHT_M = 0.045
PINCH_MAX_WIDTH_M = 0.06
SIDE_SHAPE = "power_tight"   # squeezes harder than "power": 3 of 4 slips of the bench's side grasps held with it


GRASP_STYLES = ("top", "side", "pinch")


def is_tall(size) -> bool:
    """Upright and tall (a can, a bottle; ``size``: (3,) extent, m): taken from above, low."""
    return bool(size[2] > TALL_RATIO * min(size[0], size[1]))


def default_grasp(size) -> str:
    """The grasp style for an object of axis-aligned ``size`` (3,) m when a script names none:
    "pinch" for small low things (a cube, a utensil, an egg), "top" for the rest."""
    low = size[2] <= PINCH_MAX_HEIGHT_M and min(size[0], size[1]) <= PINCH_MAX_WIDTH_M
    return "pinch" if low else "top"


def grasp_lift(args: dict) -> float:
    """How far (m) a grasp step lifts: its ``lift``, or its style's default."""
    return float(args.get("lift", SIDE_LIFT_M if args.get("style") == "side" else TOP_LIFT_M))


def palm_rotation(pitch: float, yaw: float = 0.0) -> np.ndarray:
    """Palm toward the table, fingers forward (+x) turned by ``yaw`` and tipped down by ``pitch``."""
    cy, sy = np.cos(yaw), np.sin(yaw)
    z = np.array([np.cos(pitch) * cy, np.cos(pitch) * sy, -np.sin(pitch)])
    x = np.array([-np.sin(pitch) * cy, -np.sin(pitch) * sy, -np.cos(pitch)])
    return np.column_stack([x, np.cross(z, x), z])


class SidePlan:
    """One hand's keyframes, appended step by step."""

    def __init__(self, start: Key):
        self.keys = [start]

    @property
    def last(self) -> Key:
        return self.keys[-1]

    @property
    def t(self) -> float:
        return self.last.t

    def go(self, pos=None, rot=None, grip=None, grasp=None, duration=None) -> None:
        last = self.last
        pos = last.pos if pos is None else np.asarray(pos, float)
        if duration is None:
            duration = max(MIN_MOVE_S, float(np.linalg.norm(pos - last.pos)) / SPEED)
        self.keys.append(Key(last.t + duration, pos, last.rot if rot is None else rot,
                             last.grip if grip is None else grip, last.grasp if grasp is None else grasp))

    def wait(self, seconds: float) -> None:
        self.go(duration=seconds)


class Planner:
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
    def _grasp(self, plan: SidePlan, side: str, a: dict) -> None:
        style = a.get("style") or ("top" if "part" in a else self._default_style(a["object"]))
        if style not in GRASP_STYLES:
            raise ConfigError(f"grasp style {style!r} is not one of {sorted(GRASP_STYLES)}")
        if style != "top":
            return getattr(self, f"_{style}_grasp")(plan, side, a)
        name = a["object"]
        if "part" not in a and self._tall(name):
            a = {**TALL_GRASP, **a}
        # Defaults found by sweeping scripted grasps over spheres and ellipsoids (tests/grasping.py).
        yaw = self._grasp_yaw(name, side, a)
        rot = palm_rotation(a.get("pitch", 0.6), yaw)
        centre = self._position(name)
        lo, hi = self._extent(name)
        if "part" in a:          # aim at one named geom of the object (a whisk's balloon, a handle)
            shift = self._moved.get(name, np.zeros(3))
            lo, hi = (v + shift for v in self.q.geom_extent(a["part"]))
        aim = (lo + hi) / 2 if "part" in a else centre
        top = hi[2]
        # The palm stands ``reach`` back from the object along the fingers' heading.
        heading = np.array([np.cos(yaw), np.sin(yaw), 0.0])
        grip_at = np.r_[aim[:2] - a.get("reach", 0.07) * heading[:2], top + a.get("height", 0.12) - 0.05]
        grip_at[:2] += np.asarray(a.get("offset", (0.0, 0.0)), float)
        self._clear_way(side, grip_at)
        small = min(hi[0] - lo[0], hi[1] - lo[1]) <= SMALL_NARROW_M
        shape = a.get("grasp", "power")
        shape = SMALL_GRASP.get(shape, shape) if small else shape
        # Pre-shape the hand on the way down, as people do: fingers half curled clear the table.
        preshape = a.get("preshape", SMALL_PRESHAPE if small else 0.0)
        self._close_from_above(plan, grip_at, rot, shape, preshape, a.get("clearance", 0.16), a)
        # Closing fingers draw a round object back toward the palm (``draw`` metres along the
        # fingers' heading): where it sits in the hand decides where a later place puts it.
        drawn = a.get("draw", 0.0) * heading
        self._held[side] = (name, centre - drawn - grip_at, float(centre[2] - self._extent(name)[0][2]))

    @staticmethod
    def _close_from_above(plan: SidePlan, at: np.ndarray, rot: np.ndarray, shape: str, preshape: float,
                          clearance: float, a: dict) -> None:
        """Top and pinch grasps: over ``at`` (the wrist, (3,)) with the hand pre-shaped, straight
        down, close, lift."""
        plan.go(at + [0, 0, clearance], rot, grip=preshape, grasp=shape)
        plan.go(at, duration=a.get("descend_s", 1.0))
        plan.wait(a.get("settle_s", 0.3))     # the robot trails the hand by a few ticks
        plan.go(grip=1.0, duration=a.get("close_s", 1.0))
        plan.wait(a.get("settle_s", 0.3))
        plan.go(at + [0, 0, grasp_lift(a)], duration=a.get("lift_s", 1.0))

    def _default_style(self, name: str) -> str:
        lo, hi = self.q.extent(name)
        return default_grasp(hi - lo)

    def _tall(self, name: str) -> bool:
        lo, hi = self.q.extent(name)
        return is_tall(hi - lo)

    def _grasp_yaw(self, name: str, side: str, a: dict) -> float:
        """``yaw`` (rad), or with ``align: along|across`` the fingers along / across the object's
        long (local x) axis, plus ``yaw`` as a trim."""
        yaw = a.get("yaw", 0.0)
        align = a.get("align")
        if align is None:
            return yaw
        if align not in ("along", "across"):
            raise ConfigError(f"align: {align!r} is not one of 'along', 'across'")
        if align == "along":      # of a line's two headings, the one away from the robot
            axis = (self.q.yaw(name) + np.pi / 2) % np.pi - np.pi / 2
        else:                     # across: the one toward the other hand (the wrist's easy turn)
            axis = (self.q.yaw(name) + np.pi / 2) % np.pi   # in [0, pi): toward +y
            axis = axis - np.pi if side == "left" else axis
        return float(axis + yaw)

    def _pinch_grasp(self, plan: SidePlan, side: str, a: dict) -> None:
        """Small or flat things (a cube, a slab, a utensil): thumb and index tips close on it from
        above, the point where they meet at its centre; then lift."""
        name = a["object"]
        rot = palm_rotation(a.get("pitch", PINCH_PITCH), self._grasp_yaw(name, side, a))
        centre = self._position(name)
        lo, hi = self._extent(name)
        target = np.r_[centre[:2], lo[2] + a.get("height", PINCH_HEIGHT) * (hi[2] - lo[2])]
        tips = [self._tip_offset(side, "pinch", f, "tip", PINCH_AIM_GRIP) for f in ("thumb", "index")]
        at = target - rot @ np.mean(tips, axis=0)
        at[:2] += np.asarray(a.get("offset", (0.0, 0.0)), float)
        self._clear_way(side, at)
        self._close_from_above(plan, at, rot, "pinch", a.get("preshape", PINCH_PRESHAPE), a.get("clearance", 0.12), a)
        self._held[side] = (name, centre - at, float(centre[2] - lo[2]))

    def _side_grasp(self, plan: SidePlan, side: str, a: dict) -> None:
        """Tall things (cans, bottles, cartons): a handshake. The hand upright on the object's own
        side of it (the right hand on its right), palm toward it, thumb up, fingers forward past
        its front; it slides in sideways with the thumb swung out, wraps the fingers round the
        front and the thumb round the back, then lifts."""
        name = a["object"]
        across = 1.0 if side == "right" else -1.0        # palm normal: +y for the right hand
        pitch = a.get("pitch", SIDE_PITCH)
        x_p, z_p = np.array([0.0, across, 0.0]), np.array([np.cos(pitch), 0.0, -np.sin(pitch)])
        rot = np.column_stack([x_p, np.cross(z_p, x_p), z_p])
        centre = self._position(name)
        lo, hi = self._extent(name)
        held_at = np.r_[centre[:2], lo[2] + a.get("height", SIDE_HEIGHT) * (hi[2] - lo[2])]
        palm_gap = (hi[1] - lo[1]) / 2 + PALM_SURFACE + a.get("standoff", SIDE_STANDOFF)
        grip_at = held_at - rot @ np.array([palm_gap, 0.0, a.get("reach", SIDE_REACH)])
        pre = grip_at - across * np.array([0.0, a.get("slide", SIDE_SLIDE), 0.0])
        self._clear_way(side, grip_at)
        plan.go(pre + [0, 0, a.get("clearance", 0.15)], rot, grip=1.0, grasp="release")
        plan.go(pre, duration=a.get("descend_s", 0.8))
        plan.go(grip_at, duration=a.get("approach_s", 1.0))
        plan.go(grip=0.0, duration=0.3)
        plan.go(grip=1.0, grasp=a.get("grasp", SIDE_SHAPE), duration=a.get("close_s", 1.0))
        plan.wait(a.get("settle_s", 0.3))
        plan.go(grip_at + [0, 0, grasp_lift(a)], duration=a.get("lift_s", 1.0))
        self._held[side] = (name, centre - grip_at, float(centre[2] - lo[2]))

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
        base = self._position(a["object"]) if "object" in a else plan.last.pos
        pos = base + np.asarray(a.get("offset", (0.0, 0.0, 0.0)), float)
        rot = palm_rotation(a["pitch"], a.get("yaw", 0.0)) if "pitch" in a else None
        if rot is not None and "roll" in a:     # then turned about the fingers (stand a held bottle up)
            rot = rot @ axis_rotation((0, 0, 1), a["roll"])
        plan.go(pos, rot, grip=a.get("grip"), duration=a.get("seconds"))

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
        not push it (a round object set down on a flat top rolls)."""
        plan.go(grip=0.0, duration=a.get("open_s", 0.5))
        if a.get("lift_off", 0.0) > 0:
            plan.go(plan.last.pos + [0.0, 0.0, a["lift_off"]], duration=0.4)
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
