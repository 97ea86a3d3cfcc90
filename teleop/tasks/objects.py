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
    return j


HINGE, SLIDE = mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE
Y_AXIS_QUAT = (math.cos(math.pi / 4), math.sin(math.pi / 4), 0, 0)   # cylinder axis z -> y
X_AXIS_QUAT = (math.cos(math.pi / 4), 0, math.sin(math.pi / 4), 0)   # cylinder axis z -> x


# -- rigid items ------------------------------------------------------------------------------
@kind("box", required=("size",), size=list, mass=float, rgba=list)
def _box(body, name, p):
    hx, hy, hz = p["size"]
    geom(body, BOX, (hx, hy, hz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(hz, math.hypot(hx, hy), hz, (hx, hy))


@kind("sphere", required=("radius",), radius=float, mass=float, rgba=list)
def _sphere(body, name, p):
    r = p["radius"]
    geom(body, SPHERE, (r,), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(r, r, r)


@kind("ellipsoid", required=("radii",), radii=list, mass=float, rgba=list)
def _ellipsoid(body, name, p):
    rx, ry, rz = p["radii"]
    geom(body, ELL, (rx, ry, rz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
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
    r = max(inner) + p["wall"] + p["handle"]
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


# -- static fixtures --------------------------------------------------------------------------
@kind("shelf", required=("size", "height"), size=list, height=float, rgba=list)
def _shelf(body, name, p):
    hx, hy = p["size"]
    h, t = p["height"], 0.01
    geom(body, BOX, (hx, hy, t), pos=(0, 0, h - t), rgba=p["rgba"], name=f"{name}_board")
    for sy in (-1, 1):
        geom(body, BOX, (hx, 0.01, (h - 2 * t) / 2), pos=(0, sy * (hy - 0.01), (h - 2 * t) / 2), rgba=p["rgba"])
    return Shape(0.0, math.hypot(hx, hy), h, (hx, hy))


@kind("slot", required=("gap", "depth"), gap=list, depth=float, wall=float, rgba=list)
def _slot(body, name, p):
    """A block with a rectangular slot open at the top (cubes are inserted into it)."""
    interior = _walls(body, name, dict(p, round=False), p["gap"], p["depth"], p["rgba"], 1.0)
    return Shape(0.0, math.hypot(*p["gap"]) + p["wall"], p["depth"] + p["wall"], tuple(p["gap"]), interior)


@kind("dish_rack", required=("size",), size=list, pegs=float, rgba=list)
def _dish_rack(body, name, p):
    """A base with two rows of pegs along x; plates stand between them."""
    hx, hy = p["size"]
    geom(body, BOX, (hx, hy, 0.005), pos=(0, 0, 0.005), rgba=p["rgba"], name=f"{name}_base")
    n = int(p["pegs"])
    for i in range(n):
        x = -hx + 0.01 + i * (2 * hx - 0.02) / max(n - 1, 1)
        for sy in (-1, 1):
            geom(body, CYL, (0.004, 0.04), pos=(x, sy * (hy - 0.01), 0.05), rgba=p["rgba"])
    return Shape(0.0, math.hypot(hx, hy), 0.01, (hx, hy), Interior((0, 0, 0.01), (hx, hy - 0.015, 0.06)))


# -- articulated fixtures ---------------------------------------------------------------------
def _housing(body, name, size, rgba, open_side):
    """A hollow box open on one side ('top' or 'front' = -x, toward the robot)."""
    hx, hy, hz = size
    t = 0.008
    panels = {"bottom": ((hx, hy, t / 2), (0, 0, t / 2)), "top": ((hx, hy, t / 2), (0, 0, 2 * hz - t / 2)),
              "back": ((t / 2, hy, hz), (hx - t / 2, 0, hz)), "front": ((t / 2, hy, hz), (-hx + t / 2, 0, hz)),
              "left": ((hx, t / 2, hz), (0, hy - t / 2, hz)), "right": ((hx, t / 2, hz), (0, -hy + t / 2, hz))}
    for key, (size_, pos) in panels.items():
        if key != open_side:
            geom(body, BOX, size_, pos=pos, rgba=rgba, name=f"{name}_{key}")
    return Interior((0, 0, t), (hx - t, hy - t, hz - t))


@kind("lidded_box", required=("size",), articulated=True, container=True, size=list, open_angle=float, rgba=list,
      lid_rgba=list)
def _lidded_box(body, name, p):
    """Bread maker / scanner / grill / rice cooker: open-top housing, lid hinged at the far edge."""
    hx, hy, hz = p["size"]
    interior = _housing(body, name, p["size"], p["rgba"], "top")
    lid = body.add_body(name=f"{name}_lid", pos=[hx, 0, 2 * hz])
    joint(lid, f"{name}_joint", HINGE, (0, 1, 0), (0, p["open_angle"]), damping=0.2)
    geom(lid, BOX, (hx, hy, 0.006), pos=(-hx, 0, 0.006), rgba=p["lid_rgba"], mass=0.15, name=f"{name}_lid_g")
    geom(lid, BOX, (0.01, 0.03, 0.01), pos=(-2 * hx + 0.005, 0, 0.02), rgba=(0.2, 0.2, 0.2, 1), mass=0.02,
         name=f"{name}_lid_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz + 0.012, (hx, hy), interior, f"{name}_joint")


@kind("door_box", required=("size",), articulated=True, container=True, size=list, open_angle=float, rgba=list,
      lid_rgba=list)
def _door_box(body, name, p):
    """Microwave-like housing open toward the robot, door hinged about z at its left (+y) edge."""
    hx, hy, hz = p["size"]
    interior = _housing(body, name, p["size"], p["rgba"], "front")
    door = body.add_body(name=f"{name}_door", pos=[-hx - 0.008, hy, 0])
    joint(door, f"{name}_joint", HINGE, (0, 0, 1), (0, p["open_angle"]), damping=0.2)
    geom(door, BOX, (0.006, hy, hz), pos=(0, -hy, hz), rgba=p["lid_rgba"], mass=0.2, name=f"{name}_door_g")
    geom(door, BOX, (0.015, 0.008, 0.04), pos=(-0.02, -2 * hy + 0.02, hz), rgba=(0.2, 0.2, 0.2, 1), mass=0.02,
         name=f"{name}_door_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, f"{name}_joint")


@kind("drawer_box", required=("size", "travel"), articulated=True, container=True, size=list, travel=float,
      rgba=list, lid_rgba=list)
def _drawer_box(body, name, p):
    """Cabinet / cash register with a drawer sliding toward the robot (-x)."""
    hx, hy, hz = p["size"]
    _housing(body, name, p["size"], p["rgba"], "front")
    drawer = body.add_body(name=f"{name}_drawer", pos=[0, 0, 0.012])
    joint(drawer, f"{name}_joint", SLIDE, (-1, 0, 0), (0, p["travel"]), damping=2.0)
    ip = dict(round=False, wall=0.005)
    interior = _walls(drawer, f"{name}_drawer", ip, (hx - 0.02, hy - 0.02), hz * 1.2, p["lid_rgba"], 0.3)
    geom(drawer, BOX, (0.005, hy - 0.01, hz * 0.8), pos=(-hx + 0.012, 0, hz * 0.8), rgba=p["lid_rgba"], mass=0.05)
    geom(drawer, BOX, (0.012, 0.04, 0.008), pos=(-hx - 0.005, 0, hz * 0.9), rgba=(0.2, 0.2, 0.2, 1), mass=0.02,
         name=f"{name}_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, f"{name}_joint")


@kind("lever", required=(), articulated=True, rgba=list, range=float)
def _lever(body, name, p):
    """Slot machine: a cabinet with a lever on its right (-y) side, pulled down toward the robot."""
    geom(body, BOX, (0.08, 0.08, 0.1), pos=(0, 0, 0.1), rgba=p["rgba"], name=f"{name}_cabinet")
    arm = body.add_body(name=f"{name}_arm", pos=[0, -0.095, 0.12])
    joint(arm, f"{name}_joint", HINGE, (0, 1, 0), (-p["range"], 0), damping=0.3, stiffness=0.5)
    geom(arm, CYL, (0.008, 0.06), pos=(0, 0, 0.06), rgba=(0.7, 0.7, 0.75, 1), mass=0.05)
    geom(arm, SPHERE, (0.022,), pos=(0, 0, 0.13), rgba=(0.85, 0.1, 0.1, 1), mass=0.03, name=f"{name}_knob")
    return Shape(0.0, 0.12, 0.2, (0.08, 0.08), None, f"{name}_joint")


@kind("capped_bottle", required=(), articulated=True, container=True, radius=float, depth=float, rgba=list,
      lid_rgba=list)
def _capped_bottle(body, name, p):
    """A wide-mouth hollow bottle; a flip cap hinged at its far (+x) rim edge."""
    r, d = p["radius"], p["depth"]
    interior = _walls(body, name, dict(round=True, wall=0.005), (r, r), d, p["rgba"], 0.3)
    cap = body.add_body(name=f"{name}_cap", pos=[r + 0.005, 0, d + 0.005])
    joint(cap, f"{name}_joint", HINGE, (0, 1, 0), (0, 2.4), damping=0.05)
    geom(cap, CYL, (r + 0.006, 0.006), pos=(-(r + 0.005), 0, 0.006), rgba=p["lid_rgba"], mass=0.02, name=f"{name}_cap_g")
    geom(cap, BOX, (0.012, 0.012, 0.004), pos=(-2 * r - 0.02, 0, 0.008), rgba=p["lid_rgba"], mass=0.005,
         name=f"{name}_tab")
    return Shape(0.0, r + 0.01, d + 0.012, (r, r), interior, f"{name}_joint")


@kind("lift_stand", required=(), articulated=True, size=list, travel=float, rgba=list, lid_rgba=list)
def _lift_stand(body, name, p):
    """Laptop stand: a platform on a vertical slide that holds its height (friction)."""
    hx, hy = p["size"]
    geom(body, BOX, (hx, hy, 0.006), pos=(0, 0, 0.006), rgba=p["rgba"], name=f"{name}_base")
    geom(body, BOX, (0.01, 0.01, 0.03), pos=(0, 0, 0.036), rgba=p["rgba"], name=f"{name}_post")
    plat = body.add_body(name=f"{name}_platform", pos=[0, 0, 0.07])
    joint(plat, f"{name}_joint", SLIDE, (0, 0, 1), (0, p["travel"]), damping=5.0, frictionloss=3.0)
    geom(plat, BOX, (hx, hy, 0.006), rgba=p["lid_rgba"], mass=0.2, name=f"{name}_platform_g")
    geom(plat, BOX, (0.012, 0.04, 0.01), pos=(-hx - 0.01, 0, 0), rgba=(0.2, 0.2, 0.2, 1), mass=0.01,
         name=f"{name}_grip")
    return Shape(0.0, math.hypot(hx, hy) + 0.02, 0.076, (hx, hy), None, f"{name}_joint")


@kind("button", required=(), articulated=True, radius=float, travel=float, rgba=list)
def _button(body, name, p):
    """Push button on a spring: the main joint is its depression (0 = up, open = fully pressed)."""
    r = p["radius"]
    geom(body, CYL, (r + 0.015, 0.012), pos=(0, 0, 0.012), rgba=(0.25, 0.25, 0.25, 1), name=f"{name}_base")
    cap = body.add_body(name=f"{name}_cap", pos=[0, 0, 0.024 + p["travel"]])
    joint(cap, f"{name}_joint", SLIDE, (0, 0, -1), (0, p["travel"]), damping=1.0, stiffness=300.0)
    geom(cap, CYL, (r, p["travel"]), rgba=p["rgba"], mass=0.02, name=f"{name}_cap_g")
    return Shape(0.0, r + 0.015, 0.024 + 2 * p["travel"], (r, r), None, f"{name}_joint")


@kind("nail", required=(), articulated=True, travel=float, rgba=list)
def _nail(body, name, p):
    """A nail standing in a board below it; hammering drives it down (open = 1 means still up)."""
    n = body.add_body(name=f"{name}_shaft", pos=[0, 0, 0])
    joint(n, f"{name}_joint", SLIDE, (0, 0, 1), (0, p["travel"]), damping=3.0, frictionloss=4.0)
    geom(n, CYL, (0.003, p["travel"] / 2 + 0.01), pos=(0, 0, p["travel"] / 2 - 0.01), rgba=p["rgba"], mass=0.01,
         collide=False)
    geom(n, CYL, (0.009, 0.003), pos=(0, 0, 0.003), rgba=p["rgba"], mass=0.01, name=f"{name}_head")
    return Shape(0.0, 0.012, 0.006, (0.009, 0.009), None, f"{name}_joint")


DEFAULTS = {"mass": 0.1, "rgba": [0.7, 0.7, 0.7, 1.0], "lid_rgba": [0.5, 0.5, 0.55, 1.0], "round": False,
            "wall": 0.006, "handle": 0.0, "open_angle": 1.9, "range": 1.2, "radius": 0.04, "depth": 0.12,
            "size": [0.12, 0.15], "travel": 0.08, "pegs": 6.0}


KIND_DEFAULTS = {"button": {"travel": 0.008, "radius": 0.025}, "nail": {"travel": 0.03},
                 "capped_bottle": {"radius": 0.035, "depth": 0.13}}


def kind_defaults(kind_name: str) -> dict:
    """Default parameter values of a kind (explicit spec values override them)."""
    k = KINDS[kind_name]
    out = {key: DEFAULTS[key] for key in k.params if key in DEFAULTS and key not in k.required}
    out.update({key: v for key, v in KIND_DEFAULTS.get(kind_name, {}).items() if key in k.params})
    return out
