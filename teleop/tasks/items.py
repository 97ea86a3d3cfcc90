"""Free objects of the library: rigid items (boxes, fruit, tools) and open containers."""
from __future__ import annotations

import math

from teleop.tasks.kinds import (BOX, CAPS, CYL, ELL, FLAG, NON_NEGATIVE, POSITIVE, RGBA, SPHERE, X_AXIS_QUAT, Shape,
                                geom, kind, sizes, walls)


# -- rigid items ------------------------------------------------------------------------------
# MuJoCo's default contact is soft (solref time constant 20 ms) and it has no continuous collision:
# a 16 mm ice cube poured from 25 cm (2.2 m/s, 4.4 mm a 2 ms step) sank 10+ mm into a cup's 6 mm floor
# before the contact stopped it, met the table under it and stayed trapped beneath the cup (traced per
# step: the floor's contact normal flips to -z past ~10 mm). ``hard: true`` (opt-in; small things that
# are dropped, like ice) makes the object's contacts stiff, 6 ms = 3 timesteps, and its own contact
# parameters win in every pair (priority 1). Dropped 3 at a time, 15 times, into the 4 cm cup: through
# the floor 29 and 39 of 45 from 25 and 35 cm with the default contact, 0 and 0 of 45 with this (the
# spec's ice, friction 0.15: 0 and 1 of 45 bounced out over the rim)
# (tests/test_tasks_kinds.py::test_hard_ice_dropped_into_a_cup_stays_in_it).
HARD_CONTACT = dict(solref=[0.006, 1.0], priority=1)


@kind("box", required=("size",), size=sizes(3), mass=POSITIVE, rgba=RGBA, hard=FLAG, friction=POSITIVE)
def _box(body, name, p):
    """``friction``: its sliding friction, used in its contacts only with ``hard`` (which wins the pair;
    otherwise MuJoCo takes the larger of the two, 1 for the library's objects). Wet ice on a glazed cup
    is slippery: at 1 the stiff cubes stayed in a cup turned 132-136 degrees (a cube on the wall slides
    past 90 + atan(friction)); at 0.3 they broke loose late (~128 degrees) in a burst and scattered; at
    0.15 they slid out at 105-115 degrees, one after another (pour_ice_between_two_cups)."""
    hx, hy, hz = p["size"]
    contact = dict(HARD_CONTACT) if p.get("hard") else {}
    if "friction" in p:
        contact["friction"] = [p["friction"], 0.005, 0.0001]       # MuJoCo's torsional and rolling defaults
    geom(body, BOX, (hx, hy, hz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g", **contact)
    return Shape(hz, math.hypot(hx, hy), hz, (hx, hy), footprint=(hx, hy))


# Fruit is not a perfect ball: a little rolling resistance (condim 6: torsional + rolling friction)
# keeps a set-down apple where it was put instead of rolling off a shelf like a marble.
ROUND_CONTACT = dict(condim=6, friction=[1.0, 0.005, 0.002])


@kind("sphere", required=("radius",), radius=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _sphere(body, name, p):
    r = p["radius"]
    geom(body, SPHERE, (r,), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g", **ROUND_CONTACT)
    return Shape(r, r, r)


@kind("ellipsoid", required=("radii",), radii=sizes(3), mass=POSITIVE, rgba=RGBA)
def _ellipsoid(body, name, p):
    rx, ry, rz = p["radii"]
    geom(body, ELL, (rx, ry, rz), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g", **ROUND_CONTACT)
    return Shape(rz, max(rx, ry), rz)


@kind("cylinder", required=("radius", "half_height"), radius=POSITIVE, half_height=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _cylinder(body, name, p):
    r, h = p["radius"], p["half_height"]
    geom(body, CYL, (r, h), rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(h, r, h, (r * 0.7, r * 0.7))


@kind("capsule", required=("radius", "half_length"), radius=POSITIVE, half_length=POSITIVE, mass=POSITIVE,
      rgba=RGBA)
def _capsule(body, name, p):
    """Lying along x (drumsticks, buns, baguettes, carrots)."""
    r, L = p["radius"], p["half_length"]
    geom(body, CAPS, (r, L), quat=X_AXIS_QUAT, rgba=p["rgba"], mass=p["mass"], name=f"{name}_g")
    return Shape(r, L + r, r)


@kind("hammer", required=(), mass=POSITIVE, rgba=RGBA)
def _hammer(body, name, p):
    """Handle along x (toward the operator), head across y at the far end."""
    geom(body, BOX, (0.09, 0.012, 0.012), rgba=(0.55, 0.4, 0.25, 1), mass=p["mass"] * 0.4, name=f"{name}_handle")
    geom(body, BOX, (0.02, 0.045, 0.018), pos=(0.1, 0, 0.006), rgba=p["rgba"], mass=p["mass"] * 0.6,
         name=f"{name}_head")
    return Shape(0.012, 0.13, 0.012)


# -- containers -------------------------------------------------------------------------------
@kind("container", required=("inner", "depth"), container=True, inner=sizes(1, 2), depth=POSITIVE, round=FLAG,
      wall=POSITIVE, mass=POSITIVE, rgba=RGBA, handle=NON_NEGATIVE)
def _container(body, name, p):
    """Open box / bowl / basket / cup / pot / jar / tray; ``inner`` = [hx, hy] or [radius]."""
    inner = p["inner"] if len(p["inner"]) == 2 else [p["inner"][0]] * 2
    p = dict(p, round=p["round"] or len(p["inner"]) == 1)
    interior = walls(body, name, p, inner, p["depth"], p["rgba"], p["mass"])
    if p["handle"] > 0:        # a side handle along -y (pans, pots)
        geom(body, BOX, (0.012, p["handle"] / 2, 0.008), pos=(0, -(inner[1] + p["wall"] + p["handle"] / 2), 0.02),
             rgba=(0.2, 0.2, 0.2, 1), mass=p["mass"] * 0.1, name=f"{name}_handle")   # named: a grasp aims at it
    r = (inner[0] if p["round"] else math.hypot(*inner)) + p["wall"] + p["handle"]
    return Shape(0.0, r, p["wall"], (inner[0], inner[1]), interior)


@kind("cover", required=("inner", "depth"), inner=sizes(1), depth=POSITIVE, wall=POSITIVE, mass=POSITIVE, rgba=RGBA)
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
