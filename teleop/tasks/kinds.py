"""The object-kind registry: how a kind is declared, and the MjSpec helpers kinds build with.

Every kind is a builder ``fn(body, name, p) -> Shape`` registered in :data:`KINDS` with its typed
parameters. ``body`` is the object's root body (already positioned by the caller); builders add
geoms, child bodies and joints below it. Free objects get a free joint from the caller; fixtures
(``fixed: true``) are welded to the world. Articulated fixtures have exactly one main joint named
``{name}_joint`` whose range runs from *closed* (low) to *open* (high).

Sizes are metres, masses kilograms; all objects stay small enough for a 22-DoF hand
(palm ~9 cm wide, fingers ~10 cm long).

The modules that define kinds (:mod:`items`, :mod:`fixtures`) import this one;
:mod:`teleop.tasks.objects` imports them all, so its ``KINDS`` is the whole library.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import mujoco

from teleop.robot import WORLD_COLLISION

G = mujoco.mjtGeom
BOX, SPHERE, CYL, CAPS, ELL = G.mjGEOM_BOX, G.mjGEOM_SPHERE, G.mjGEOM_CYLINDER, G.mjGEOM_CAPSULE, G.mjGEOM_ELLIPSOID
VISUAL = dict(contype=0, conaffinity=0)


@dataclass(frozen=True)
class Interior:
    """A container's open volume in the object's body frame: centre of its floor, half sizes."""
    floor: tuple[float, float, float]
    half: tuple[float, float, float]          # (hx, hy, depth/2); round -> hx = hy = radius
    round: bool = False
    body: str | None = None                   # the child body it moves with (a drawer); None: the object's root


@dataclass(frozen=True)
class Shape:
    bottom: float                 # body origin height above the object's lowest point
    radius: float                 # xy footprint radius (placement clearance)
    top: float                    # support surface height above the body origin (for on_top)
    top_half: tuple[float, float] = (0.0, 0.0)   # support surface half extents (x, y)
    interior: Interior | None = None
    joint: str | None = None      # main joint name, articulated fixtures only
    footprint: tuple[float, float] | None = None   # fixtures: xy half extents (default: radius)
    tiers: tuple[tuple[float, float, float, float, float], ...] = ()   # tiered shelves: (x, y, hx, hy, top)

    def half_xy(self) -> tuple[float, float]:
        return self.footprint or (self.radius, self.radius)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@dataclass(frozen=True)
class Param:
    """One typed parameter of a kind and the values its builder (and MuJoCo) accepts, so that
    ``teleop tasks check`` refuses a spec that ``--build`` would otherwise fail on."""
    type: type                        # float | list (of numbers) | bool
    lengths: tuple[int, ...] = ()     # list: the allowed numbers of entries (empty: any)
    above: float | None = None        # every number > above
    low: float | None = None          # every number >= low
    high: float | None = None         # every number <= high

    def describe(self) -> str:
        if self.type is bool:
            return "true or false"
        if self.low is not None and self.high is not None:
            bound = f" between {self.low:g} and {self.high:g}"
        else:
            bound = f" > {self.above:g}" if self.above is not None else f" >= {self.low:g}" if self.low is not None \
                else ""
        if self.type is float:
            return f"a number{bound}"
        count = " or ".join(map(str, self.lengths)) if self.lengths else "some"
        return f"a list of {count} numbers{bound}"

    def _in_range(self, v: float) -> bool:
        return ((self.above is None or v > self.above) and (self.low is None or v >= self.low)
                and (self.high is None or v <= self.high))

    def problem(self, value: Any) -> str | None:
        """None when ``value`` is valid, else the message: what a valid value is, and what it got."""
        if self.type is bool:
            ok = isinstance(value, bool)
        elif self.type is float:
            ok = _is_number(value) and self._in_range(value)
        else:
            ok = (isinstance(value, list) and (not self.lengths or len(value) in self.lengths)
                  and all(_is_number(v) and self._in_range(v) for v in value))
        return None if ok else f"must be {self.describe()}, got {value!r}"


POSITIVE = Param(float, above=0.0)       # lengths, masses, angles: MuJoCo refuses zero and negative sizes
NON_NEGATIVE = Param(float, low=0.0)
RGBA = Param(list, (4,), low=0.0, high=1.0)
FLAG = Param(bool)


def sizes(*lengths: int, above: float = 0.0) -> Param:
    """A list of ``lengths`` positive numbers (half extents, radii); ``above``: a larger minimum."""
    return Param(list, lengths, above=above)


@dataclass(frozen=True)
class AutoEvent:
    """A scene event every object of a kind brings without the spec declaring it (a button's press
    counter): event ``type`` named ``{object}.{suffix}``, its argument ``arg`` naming the object."""
    type: str
    suffix: str
    arg: str


@dataclass(frozen=True)
class Kind:
    """Everything that differs between kinds, as data: no shared code compares a kind's name."""
    build: Callable[..., Shape]
    params: dict[str, Param]      # name -> its type and valid values
    required: tuple[str, ...]
    articulated: bool = False
    container: bool = False
    defaults: dict[str, Any] = field(default_factory=dict)   # this kind's own defaults over DEFAULTS
    auto_events: tuple[AutoEvent, ...] = ()


KINDS: dict[str, Kind] = {}


def kind(name: str, required: tuple[str, ...] = (), articulated: bool = False, container: bool = False,
         defaults: dict[str, Any] | None = None, auto_events: tuple[AutoEvent, ...] = (), **params: Param):
    def deco(fn):
        KINDS[name] = Kind(fn, params, required, articulated, container, dict(defaults or {}), auto_events)
        return fn
    return deco


def geom(body, gtype, size, pos=(0, 0, 0), rgba=(0.7, 0.7, 0.7, 1), mass=None, name=None, quat=None,
         collide=True, **kw):
    args = dict(type=gtype, size=list(size) + [0] * (3 - len(size)), pos=list(pos), rgba=list(rgba), **kw)
    if quat is not None:
        args["quat"] = list(quat)
    if mass is not None:
        args["mass"] = mass
    if name:
        args["name"] = name
    args.update(WORLD_COLLISION if collide else VISUAL)
    return body.add_geom(**args)


def joint(body, name, jtype, axis, rng, damping=0.5, stiffness=0.0, springref=0.0, frictionloss=0.0,
          pos=(0, 0, 0)):
    j = body.add_joint(name=name, type=jtype, axis=list(axis), range=list(rng), pos=list(pos),
                       damping=damping, frictionloss=frictionloss, springref=springref)
    j.limited = mujoco.mjtLimited.mjLIMITED_TRUE
    j.stiffness = [stiffness, 0, 0]
    j.solref_limit = [0.005, 1.0]    # stiff end stops: a hand pushing hard must not overrun the range
    j.armature = 0.002
    return j


HINGE, SLIDE = mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE
Y_AXIS_QUAT = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0)   # cylinder axis z -> y
X_AXIS_QUAT = (math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0)   # cylinder axis z -> x


def walls(body, name, p, inner, depth, rgba, mass):
    """Floor + walls around an open volume; round containers use 10 wall slabs."""
    t = p["wall"]
    hx, hy = inner
    geom(body, BOX if not p["round"] else CYL, (hx + t, hy + t, t / 2) if not p["round"] else (hx + t, t / 2),
         pos=(0, 0, t / 2), rgba=rgba, mass=mass * 0.4, name=f"{name}_floor")
    zc = t + depth / 2
    if p["round"]:
        n = 10
        half_w = (hx + t) * math.tan(math.pi / n) + 0.002
        for i in range(n):
            a = 2 * math.pi * i / n
            rim = hx + t / 2
            geom(body, BOX, (t / 2, half_w, depth / 2), pos=(rim * math.cos(a), rim * math.sin(a), zc),
                 quat=(math.cos(a / 2), 0, 0, math.sin(a / 2)), rgba=rgba, mass=mass * 0.06)
    else:
        for sx in (-1, 1):
            geom(body, BOX, (t / 2, hy + t, depth / 2), pos=(sx * (hx + t / 2), 0, zc), rgba=rgba, mass=mass * 0.15)
        for sy in (-1, 1):
            geom(body, BOX, (hx, t / 2, depth / 2), pos=(0, sy * (hy + t / 2), zc), rgba=rgba, mass=mass * 0.15)
    return Interior((0, 0, t), (hx, hy, depth / 2), p["round"])


DEFAULTS = {"mass": 0.1, "rgba": [0.7, 0.7, 0.7, 1.0], "lid_rgba": [0.5, 0.5, 0.55, 1.0], "round": False,
            "wall": 0.006, "handle": 0.0, "open_angle": 1.9, "range": 1.2, "radius": 0.04, "depth": 0.12,
            "size": [0.12, 0.15], "travel": 0.08, "pegs": 6.0}


def kind_defaults(kind_name: str) -> dict:
    """Default parameter values of a kind (explicit spec values override them)."""
    k = KINDS[kind_name]
    out = {key: DEFAULTS[key] for key in k.params if key in DEFAULTS and key not in k.required}
    out.update({key: v for key, v in k.defaults.items() if key in k.params})
    return out
