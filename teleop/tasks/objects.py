"""Object and fixture library built from MuJoCo primitives with MjSpec.

Every kind is a builder ``fn(body, name, p) -> Shape`` registered in :data:`KINDS` with its typed
parameters. ``body`` is the object's root body (already positioned by the caller); builders add
geoms, child bodies and joints below it. Free objects get a free joint from the caller; fixtures
(``fixed: true``) are welded to the world. Articulated fixtures have exactly one main joint named
``{name}_joint`` whose range runs from *closed* (low) to *open* (high).

Sizes are metres, masses kilograms; all objects stay small enough for a 22-DoF hand
(palm ~9 cm wide, fingers ~10 cm long).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

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


@dataclass(frozen=True)
class Shape:
    bottom: float                 # body origin height above the object's lowest point
    radius: float                 # xy footprint radius (placement clearance)
    top: float                    # support surface height above the body origin (for on_top)
    top_half: tuple[float, float] = (0.0, 0.0)   # support surface half extents (x, y)
    interior: Interior | None = None
    joint: str | None = None      # main joint name, articulated fixtures only
    footprint: tuple[float, float] | None = None   # fixtures: xy half extents (default: radius)

    def half_xy(self) -> tuple[float, float]:
        return self.footprint or (self.radius, self.radius)


@dataclass(frozen=True)
class Kind:
    build: Callable[..., Shape]
    params: dict[str, type]       # name -> float | list (of floats) | bool | str
    required: tuple[str, ...]
    articulated: bool = False
    container: bool = False


KINDS: dict[str, Kind] = {}


def kind(name: str, required: tuple[str, ...] = (), articulated: bool = False, container: bool = False,
         **params: type):
    def deco(fn):
        KINDS[name] = Kind(fn, params, required, articulated, container)
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


# -- rigid items ------------------------------------------------------------------------------
@kind("box", required=("size",), size=list, mass=float, rgba=list)
def _box(body, name, p):
    hx, hy, hz = p["size"]
    geom(body, BOX, (hx, hy, hz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(hz, math.hypot(hx, hy), hz, (hx, hy), footprint=(hx, hy))


# Fruit is not a perfect ball: a little rolling resistance (condim 6: torsional + rolling friction)
# keeps a set-down apple where it was put instead of rolling off a shelf like a marble.
ROUND_CONTACT = dict(condim=6, friction=[1.0, 0.005, 0.002])


@kind("sphere", required=("radius",), radius=float, mass=float, rgba=list)
def _sphere(body, name, p):
    r = p["radius"]
    geom(body, SPHERE, (r,), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g", **ROUND_CONTACT)
    return Shape(r, r, r)


@kind("ellipsoid", required=("radii",), radii=list, mass=float, rgba=list)
def _ellipsoid(body, name, p):
    rx, ry, rz = p["radii"]
    geom(body, ELL, (rx, ry, rz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g", **ROUND_CONTACT)
    return Shape(rz, max(rx, ry), rz)


@kind("cylinder", required=("radius", "half_height"), radius=float, half_height=float, mass=float, rgba=list)
def _cylinder(body, name, p):
    r, h = p["radius"], p["half_height"]
    geom(body, CYL, (r, h), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(h, r, h, (r * 0.7, r * 0.7))


@kind("capsule", required=("radius", "half_length"), radius=float, half_length=float, mass=float, rgba=list)
def _capsule(body, name, p):
    """Lying along x (drumsticks, buns, baguettes, carrots)."""
    r, L = p["radius"], p["half_length"]
    geom(body, CAPS, (r, L), quat=X_AXIS_QUAT, rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(r, L + r, r)


@kind("hammer", required=(), mass=float, rgba=list)
def _hammer(body, name, p):
    """Handle along x (toward the operator), head across y at the far end."""
    geom(body, BOX, (0.09, 0.012, 0.012), rgba=(0.55, 0.4, 0.25, 1), mass=p["mass"] * 0.4, name=f"{name}_handle")
    geom(body, BOX, (0.02, 0.045, 0.018), pos=(0.1, 0, 0.006), rgba=p["rgba"], mass=p["mass"] * 0.6,
         name=f"{name}_head")
    return Shape(0.012, 0.13, 0.012)


# -- containers -------------------------------------------------------------------------------
def _walls(body, name, p, inner, depth, rgba, mass):
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
            geom(body, BOX, (t / 2, half_w, depth / 2), pos=((hx + t / 2) * math.cos(a), (hx + t / 2) * math.sin(a), zc),
                 quat=(math.cos(a / 2), 0, 0, math.sin(a / 2)), rgba=rgba, mass=mass * 0.06)
    else:
        for sx in (-1, 1):
            geom(body, BOX, (t / 2, hy + t, depth / 2), pos=(sx * (hx + t / 2), 0, zc), rgba=rgba, mass=mass * 0.15)
        for sy in (-1, 1):
            geom(body, BOX, (hx, t / 2, depth / 2), pos=(0, sy * (hy + t / 2), zc), rgba=rgba, mass=mass * 0.15)
    return Interior((0, 0, t), (hx, hy, depth / 2), p["round"])


@kind("container", required=("inner", "depth"), container=True, inner=list, depth=float, round=bool,
      wall=float, mass=float, rgba=list, handle=float)
def _container(body, name, p):
    """Open box / bowl / basket / cup / pot / jar / tray; ``inner`` = [hx, hy] or [radius]."""
    inner = p["inner"] if len(p["inner"]) == 2 else [p["inner"][0]] * 2
    p = dict(p, round=p["round"] or len(p["inner"]) == 1)
    interior = _walls(body, name, p, inner, p["depth"], p["rgba"], p["mass"])
    if p["handle"] > 0:        # a side handle along -y (pans, pots)
        geom(body, BOX, (0.012, p["handle"] / 2, 0.008), pos=(0, -(inner[1] + p["wall"] + p["handle"] / 2), 0.02),
             rgba=(0.2, 0.2, 0.2, 1), mass=p["mass"] * 0.1)
    r = (inner[0] if p["round"] else math.hypot(*inner)) + p["wall"] + p["handle"]
    return Shape(0.0, r, p["wall"], (inner[0], inner[1]), interior)


@kind("cover", required=("inner", "depth"), inner=list, depth=float, wall=float, mass=float, rgba=list)
def _cover(body, name, p):
    """An upside-down cup (memory tasks): origin at its rim, opening downward."""
    hx = p["inner"][0]
    t = p["wall"]
    geom(body, BOX, (hx + t, hx + t, t / 2), pos=(0, 0, p["depth"] + t / 2), rgba=p["rgba"], mass=p["mass"] * 0.4)
    for sx in (-1, 1):
        geom(body, BOX, (t / 2, hx + t, p["depth"] / 2), pos=(sx * (hx + t / 2), 0, p["depth"] / 2), rgba=p["rgba"],
             mass=p["mass"] * 0.15)
        geom(body, BOX, (hx, t / 2, p["depth"] / 2), pos=(0, sx * (hx + t / 2), p["depth"] / 2), rgba=p["rgba"],
             mass=p["mass"] * 0.15)
    return Shape(0.0, (hx + t) * 1.42, p["depth"] + t)


DEFAULTS = {"mass": 0.1, "rgba": [0.7, 0.7, 0.7, 1.0], "lid_rgba": [0.5, 0.5, 0.55, 1.0], "round": False,
            "wall": 0.006, "handle": 0.0, "open_angle": 1.9, "range": 1.2, "radius": 0.04, "depth": 0.12,
            "size": [0.12, 0.15], "travel": 0.08, "pegs": 6.0}


KIND_DEFAULTS = {"button": {"travel": 0.008, "radius": 0.025}, "nail": {"travel": 0.03},
                 "capped_bottle": {"radius": 0.035, "depth": 0.13}}


from teleop.tasks import fixtures  # noqa: E402,F401  (registers the fixture kinds)


def kind_defaults(kind_name: str) -> dict:
    """Default parameter values of a kind (explicit spec values override them)."""
    k = KINDS[kind_name]
    out = {key: DEFAULTS[key] for key in k.params if key in DEFAULTS and key not in k.required}
    out.update({key: v for key, v in KIND_DEFAULTS.get(kind_name, {}).items() if key in k.params})
    return out
