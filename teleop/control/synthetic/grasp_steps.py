"""The grasp steps of the planner: a top grasp, a thumb-index pinch and a side (handshake) grasp,
and which of them an object gets when a script names none (issue 16, measured in the grasp bench)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from teleop.core.errors import ConfigError
from teleop.control.synthetic.motion import SidePlan
from teleop.control.synthetic.scene_query import SceneQuery
from teleop.control.synthetic.swing import axis_rotation

TOP_LIFT_M = 0.12       # a top grasp lifts the object this far (clear of a container's rim)
SIDE_LIFT_M = 0.08      # a side grasp lifts less: the hand is already high on the object
# Small things in a top power grasp (issue 16): the "power" shape's thumb tip closes 8.4 cm out of the
# palm, beyond anything narrower than ~6 cm, so the thumb missed it and the fingers alone pushed it
# away. Objects this narrow (m, the narrower horizontal side) get SMALL_GRASP instead, with the
# fingers pre-curled by SMALL_PRESHAPE on the way down so their tips do not land on the table first.
SMALL_NARROW_M = 0.06
SMALL_GRASP = {"power": "power_tight"}     # shape asked for -> shape used on a small object
SMALL_PRESHAPE = 0.5                      # half closed while descending (open fingers reach the table)
# Upright tall things (cans, bottles, cartons: taller than TALL_RATIO x their narrow side) in a top
# grasp are taken from above, low: the open fingers go down round the top third and close on it
# (the default for them is a pinch since 2026-12-02: TALL_PINCH_PITCH). Measured in the
# grasp bench (issue 16): 6 of 6 held through the lift and the 1 g shake, where the hand upright
# beside the object (a side grasp) put the FR3's wrist on the table and held 0 of 38.
TALL_RATIO = 1.5
# Squat upright things count as tall too: higher than SQUAT_TALL_RATIO x their narrow side and no
# lower than their long side. Grasp bench 2026-12-02: 70 x 70 x 90 mm cans (ratio 1.29) held 2 of 6
# in the plain top grasp (palm 7 cm over the top), 6 of 6 in the tall pinch; 4 x 4 x 5.6 cm candles
# 3 of 4 and 4 of 4. Not a watering can 20 cm long and 12.5 cm high (2 of 2 in the top grasp).
SQUAT_TALL_RATIO = 1.25
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
# Of those, thick ones (at least this wide and this high: a 5-6 cm cheese block or mushroom, 4 cm
# high) are pinched at WIDE_PINCH_PITCH: the bench's three cheese blocks held 4 of 6 trials at
# PINCH_PITCH, 6 of 6 at 0.9, a mushroom 2 of 2 either way (2026-12-02); thin ones stay at PINCH_PITCH
# (at 0.9 a fork, a spoon, a carrot, a 16 mm deck held 0 of 2 each).
THICK_PINCH_MIN_WIDTH_M = 0.048
THICK_PINCH_MIN_HEIGHT_M = 0.035
# Low things too wide or too high for that (a mango, a jar, a cake, a loaf, a tray of ice: no taller
# than STEEP_PINCH_MAX_HEIGHT_M, no wider across than STEEP_PINCH_MAX_WIDTH_M) are pinched by
# default too, fingers tipped steeply so the tips reach down its sides. Measured in the grasp bench
# (2026-12-02, 2 trials each, episodes 0-1): the top grasp held 22 of 44 trials of these 22 objects
# (mango, pear, jar, loaf, ice tray, steak, cupcake, hotdog bun: 0 of 2), this pinch 40 of 44 (not the
# hammer or the whisk: 0 of 2 in every variant tried).
STEEP_PINCH_MAX_HEIGHT_M = 0.062     # 6 cm fruit and jars; 6.4 cm avocados and caps held 2 of 2 in the top grasp
STEEP_PINCH_MAX_WIDTH_M = 0.095      # a 9 cm loaf; a 10 cm book is beyond the pinch's span
# A thing no higher than a small one is steep-pinched only when clearly wider (a loaf, a slab of ice):
# a 6 cm-wide cheese measures 6 cm +- rounding, the small pinch or the top grasp by episode, as proven.
STEEP_PINCH_MIN_WIDTH_M = 0.065
# rad (0.9: a potato, a cupcake, a hotdog bun, a measuring cup held 1 of 2 each; 0.7: 2 of 2)
STEEP_PINCH_PITCH = 0.7
WIDE_PINCH_M = 0.075                 # wider across than this (a cake, a food box)...
WIDE_PINCH_PITCH = 0.9               # ...steeper still (an 8 cm food box: 0.7 held 0 of 2, 0.9 2 of 2)
# Flat wide slabs (no higher than a small thing, wider than STEEP_PINCH_MIN_WIDTH_M: a steak, a loaf, a
# tray of ice) are pinched at STEEP_PINCH_PITCH with the hand open all the way down (FLAT_PINCH_PRESHAPE):
# at PINCH_PRESHAPE the tips, 6-8 cm apart, land on a 7 cm steak (0 of 2 at 0.7 and 0.9; open: 2 of 2;
# the loaf and the ice tray 2 of 2 either way).
FLAT_PINCH_PRESHAPE = 0.0
# Upright tall things are pinched by default too, at half their height, fingers tipped TALL_PINCH_PITCH:
# in the grasp bench (2026-12-02, 37 objects, 2 trials each) the low top grasp (TALL_GRASP, still what
# ``style: top`` gives them) and the plain top grasp of squat cans held 62 of 74, cans and cartons
# slipping out in the shake or the carry; the pinch 72 of 74 (not a pizza cutter, a wheel on a handle).
TALL_PINCH_PITCH = 0.9               # rad (0.7: a milk carton and a can 0 of 2 each)
SIDE_SHAPE = "power_tight"   # squeezes harder than "power": 3 of 4 slips of the bench's side grasps held with it


GRASP_STYLES = ("top", "side", "pinch")


def is_tall(size) -> bool:
    """Upright and tall (a can, a bottle; ``size``: (3,) extent, m): pinched by default, taken from
    above, low by a top grasp."""
    narrow, long = sorted((size[0], size[1]))
    return bool(size[2] > TALL_RATIO * narrow or (size[2] > SQUAT_TALL_RATIO * narrow and size[2] >= long))


def default_grasp(size) -> str:
    """The grasp style for an object of axis-aligned ``size`` (3,) m when a script names none:
    "pinch" for low things (a cube, a utensil, an egg, a mango, a jar) and upright tall ones (a can,
    a bottle), "top" for the rest (an apple, a mug)."""
    return default_grasp_args(size)["style"]


def default_grasp_args(size) -> dict:
    """The grasp step's arguments for an object of ``size`` (3,) m when a script names no style:
    the style, and for a pinch of anything but a small low thing its steeper pitch."""
    if _small_low(size):
        thick = size[2] >= THICK_PINCH_MIN_HEIGHT_M and min(size[0], size[1]) >= THICK_PINCH_MIN_WIDTH_M
        return {"style": "pinch", "pitch": WIDE_PINCH_PITCH} if thick else {"style": "pinch"}
    if is_tall(size):
        return {"style": "pinch", "pitch": TALL_PINCH_PITCH}
    if not _steep_pinched(size):
        return {"style": "top"}
    if size[2] <= PINCH_MAX_HEIGHT_M:          # in the steep class only by its width: a flat slab
        return {"style": "pinch", "pitch": STEEP_PINCH_PITCH, "preshape": FLAT_PINCH_PRESHAPE}
    return {"style": "pinch", "pitch": WIDE_PINCH_PITCH if min(size[0], size[1]) > WIDE_PINCH_M else STEEP_PINCH_PITCH}


def _small_low(size) -> bool:
    return bool(size[2] <= PINCH_MAX_HEIGHT_M and min(size[0], size[1]) <= PINCH_MAX_WIDTH_M)


def _steep_pinched(size) -> bool:
    narrow = min(size[0], size[1])
    return bool(not is_tall(size) and size[2] <= STEEP_PINCH_MAX_HEIGHT_M and narrow <= STEEP_PINCH_MAX_WIDTH_M
                and (size[2] > PINCH_MAX_HEIGHT_M or narrow > STEEP_PINCH_MIN_WIDTH_M))


def grasp_lift(args: dict) -> float:
    """How far (m) a grasp step lifts: its ``lift``, or its style's default."""
    return float(args.get("lift", SIDE_LIFT_M if args.get("style") == "side" else TOP_LIFT_M))


def palm_rotation(pitch: float, yaw: float = 0.0) -> np.ndarray:
    """Palm toward the table, fingers forward (+x) turned by ``yaw`` and tipped down by ``pitch``."""
    cy, sy = np.cos(yaw), np.sin(yaw)
    z = np.array([np.cos(pitch) * cy, np.cos(pitch) * sy, -np.sin(pitch)])
    x = np.array([-np.sin(pitch) * cy, -np.sin(pitch) * sy, -np.cos(pitch)])
    return np.column_stack([x, np.cross(z, x), z])


class GraspSteps:
    """The ``grasp`` step. Mixed into the planner, whose scene state (where things are, what each
    hand holds) it reads and updates."""

    q: SceneQuery
    _held: dict[str, tuple[str, np.ndarray, float]]
    _moved: dict[str, np.ndarray]
    _tip_offset: Callable[..., np.ndarray]

    def _position(self, name: str) -> np.ndarray:
        raise NotImplementedError

    def _extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _clear_way(self, side: str, point: np.ndarray) -> None:
        raise NotImplementedError

    def _grasp(self, plan: SidePlan, side: str, a: dict) -> None:
        if not a.get("style") and "part" not in a:      # the default grasp, by the object's size
            a = {**self._default_grasp_args(a["object"]), **{k: v for k, v in a.items() if k != "style"}}
        style = a.get("style") or "top"
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
        aim, lo, hi = self._aim_box(name, a)
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

    def _aim_box(self, name: str, a: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(aim (3,), lo (3,), hi (3,)): the object's centre and bounds, or with ``part`` that one
        named geom's centre and bounds (a whisk's balloon, a pan's handle), moved with the object."""
        if "part" not in a:
            lo, hi = self._extent(name)
            return self._position(name), lo, hi
        shift = self._moved.get(name, np.zeros(3))
        lo, hi = (v + shift for v in self.q.geom_extent(a["part"]))
        return (lo + hi) / 2, lo, hi

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

    # Both by the object's own size, not its world bounds: a utensil lying turned is still thin.
    def _default_grasp_args(self, name: str) -> dict:
        return default_grasp_args(self.q.own_size(name))

    def _tall(self, name: str) -> bool:
        return is_tall(self.q.own_size(name))

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
        above, the point where they meet at its centre (``along``: that far along its own heading,
        e.g. a pair of scissors by its handle, not the pivot; ``part``: at the centre and height of
        one named geom of it, e.g. a pan's handle, which a world ``offset`` misses as the pan turns); then lift."""
        name = a["object"]
        yaw = self._grasp_yaw(name, side, a)
        axis = self.q.up_axis(name) if a.get("lying_across") else None
        if axis is not None and abs(axis[2]) < np.cos(np.pi / 4):
            # opt-in: a cylinder (a candle) fallen on its side, its own axis (local z) tipped past
            # 45 deg: the tips close across that axis (the fingers' heading, at yaw 0 straight ahead,
            # turned square to it, of the two the one nearer straight ahead; the script's yaw, set
            # for it standing, is dropped), meeting at ``lying_height`` of it if given
            yaw = float((np.arctan2(axis[1], axis[0]) + np.pi) % np.pi - np.pi / 2)
            a = a | ({"height": a["lying_height"]} if "lying_height" in a else {})
        rot = palm_rotation(a.get("pitch", PINCH_PITCH), yaw)
        roll = float(a.get("roll", 0.0))
        if "roll_from" in a:    # opt-in: a container's name; the roll's sign is chosen from where the
            # thing lies in it now: the hand's side toward the nearer side wall raised (negative
            # raises the side to the fingers' right), no roll within ``roll_gap`` m of its middle line
            c_lo, c_hi = self._extent(a["roll_from"])
            left = np.array([-np.sin(yaw), np.cos(yaw)])
            d = float(np.dot(self._position(name)[:2] - (c_lo[:2] + c_hi[:2]) / 2, left))
            roll = 0.0 if abs(d) < a.get("roll_gap", 0.02) else float(np.sign(d)) * abs(roll)
        if roll:            # opt-in (rad): the hand turned about the fingers' direction, e.g. its
            # little-finger side raised over a container's wall the thing lies against
            rot = rot @ axis_rotation((0, 0, 1), roll)
        centre = self._position(name)
        lo = self._extent(name)[0]
        aim, p_lo, p_hi = self._aim_box(name, a)
        target = np.r_[aim[:2], p_lo[2] + a.get("height", PINCH_HEIGHT) * (p_hi[2] - p_lo[2])]
        if "along" in a:     # m along the object's own heading (its local x in the table plane): a
            # part of a long thing wherever it lies turned (a world ``offset`` lands off it at a yaw)
            heading = self.q.yaw(name)
            target[:2] += float(a["along"]) * np.array([np.cos(heading), np.sin(heading)])
        # ``pinch_shape`` (opt-in): another hand shape from grasps.yaml with the pinch's thumb and
        # index, e.g. "tripod" (ring and little fingers tucked into the palm, off a basket's wall)
        shape = a.get("pinch_shape", "pinch")
        tips = [self._tip_offset(side, shape, f, "tip", PINCH_AIM_GRIP) for f in ("thumb", "index")]
        at = target - rot @ np.mean(tips, axis=0)
        at[:2] += np.asarray(a.get("offset", (0.0, 0.0)), float)
        self._clear_way(side, at)
        self._close_from_above(plan, at, rot, shape, a.get("preshape", PINCH_PRESHAPE), a.get("clearance", 0.12), a)
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
