"""Household free objects: utensils, mugs, bottles lying on their side, rings, a teapot."""
from __future__ import annotations

import math

from teleop.tasks.kinds import (BOX, CAPS, CYL, ELL, POSITIVE, RGBA, SPHERE, X_AXIS_QUAT, Shape, geom, kind, sizes,
                                walls)

DARK = (0.2, 0.2, 0.2, 1)


def qmul(q1, q2):
    """Hamilton product of two (w, x, y, z) quaternions."""
    w1, x1, y1, z1 = q1
    w2, x2, y2, z2 = q2
    return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


@kind("utensil", required=(), defaults={"mass": 0.05, "length": 0.05, "width": 0.008, "thickness": 0.005,
                                       "head": [0.025, 0.016, 0.006]},
      length=POSITIVE, width=POSITIVE, thickness=POSITIVE, head=sizes(3), mass=POSITIVE, rgba=RGBA)
def _utensil(body, name, p):
    """Spoon, fork, spatula, tongs, peeler, pizza cutter: a flat handle along x (``length`` half long)
    and a head at the +x end (an ellipsoid of radii ``head``: a spoon's bowl, a spatula's blade)."""
    hl, hw, ht = p["length"], p["width"], p["thickness"]
    rx, ry, rz = p["head"]
    half = hl + rx
    # the origin is in the handle (where a hand holds it); the head's bottom is level with the handle's
    geom(body, BOX, (hl, hw, ht), pos=(-half + hl, 0, 0), rgba=p["rgba"], mass=p["mass"] * 0.5, name=f"{name}_handle")
    geom(body, ELL, (rx, ry, rz), pos=(half - rx, 0, rz - ht), rgba=p["rgba"], mass=p["mass"] * 0.5,
         name=f"{name}_head")
    return Shape(ht, half, max(ht, 2 * rz - ht))


@kind("mug", required=(), container=True, defaults={"radius": 0.035, "depth": 0.08, "wall": 0.004, "mass": 0.25},
      radius=POSITIVE, depth=POSITIVE, wall=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _mug(body, name, p):
    """An open round cup with a loop handle on its +x side; site ``{name}_hang`` is the underside of
    the handle's upper arm (where a mug tree's peg bears when the mug hangs from it)."""
    r, d, t = p["radius"], p["depth"], p["wall"]
    interior = walls(body, name, dict(round=True, wall=t), (r, r), d, p["rgba"], p["mass"] * 0.85)
    reach, arm = 0.028, 0.004                       # handle: two arms out from the wall and a bar
    x0 = r + t / 2
    z_lo, z_hi = t + 0.2 * d, t + 0.85 * d
    for z in (z_lo, z_hi):
        geom(body, BOX, (reach / 2, 0.006, arm), pos=(x0 + reach / 2, 0, z), rgba=p["rgba"], mass=p["mass"] * 0.04)
    geom(body, BOX, (arm, 0.006, (z_hi - z_lo) / 2 + arm), pos=(x0 + reach, 0, (z_lo + z_hi) / 2), rgba=p["rgba"],
         mass=p["mass"] * 0.07, name=f"{name}_handle")
    body.add_site(name=f"{name}_hang", pos=[x0 + reach / 2, 0, z_hi - arm], size=[0.003, 0, 0])
    return Shape(0.0, r + t + reach + arm, t, (r, r), interior)


@kind("bottle", required=(), defaults={"radius": 0.035, "mass": 0.6, "length": 0.08, "neck_radius": 0.013,
                                      "neck_length": 0.04}, radius=POSITIVE, length=POSITIVE,
      neck_radius=POSITIVE, neck_length=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _bottle(body, name, p):
    """A (wine) bottle built lying on its side: body along x, neck toward +x. ``standing`` checks
    that its long axis (body x) points up."""
    r, hl, nr, nl = p["radius"], p["length"], p["neck_radius"], p["neck_length"]
    geom(body, CYL, (r, hl), quat=X_AXIS_QUAT, rgba=p["rgba"], mass=p["mass"] * 0.85, name=f"{name}_body")
    geom(body, CYL, (nr, nl), pos=(hl + nl, 0, 0), quat=X_AXIS_QUAT, rgba=p["rgba"], mass=p["mass"] * 0.15,
         name=f"{name}_neck")
    return Shape(r, hl + 2 * nl, r)


@kind("ring", required=(), defaults={"radius": 0.035, "mass": 0.08, "tube": 0.014}, radius=POSITIVE, tube=POSITIVE,
      mass=POSITIVE, rgba=RGBA)
def _ring(body, name, p):
    """A torus (bagel, donut) of 12 capsule segments: centre-line radius ``radius``, tube radius ``tube``."""
    R, tube, n = p["radius"], p["tube"], 12
    half = R * math.tan(math.pi / n)
    for i in range(n):
        a = 2 * math.pi * (i + 0.5) / n
        # each segment tangent to the circle: the capsule's axis (z) turned onto x, then about z
        quat = qmul((math.cos((a + math.pi / 2) / 2), 0, 0, math.sin((a + math.pi / 2) / 2)), X_AXIS_QUAT)
        geom(body, CAPS, (tube, half), pos=(R * math.cos(a), R * math.sin(a), 0), quat=quat, rgba=p["rgba"],
             mass=p["mass"] / n, name=f"{name}_s{i}")
    return Shape(tube, R + tube, tube)


@kind("teapot", required=(), defaults={"radius": 0.05, "mass": 0.4, "half_height": 0.05}, radius=POSITIVE,
      half_height=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _teapot(body, name, p):
    """A closed pot with a lid knob, a spout toward +x and a loop handle toward -x."""
    r, h = p["radius"], p["half_height"]
    geom(body, CYL, (r, h), rgba=p["rgba"], mass=p["mass"] * 0.8, name=f"{name}_body")
    geom(body, SPHERE, (0.012,), pos=(0, 0, h + 0.008), rgba=DARK, mass=p["mass"] * 0.02, name=f"{name}_knob")
    tilt = math.radians(50)        # the spout rises outward
    geom(body, CAPS, (0.01, 0.03), pos=(r + 0.02, 0, 0.2 * h), quat=(math.cos(tilt / 2), 0, math.sin(tilt / 2), 0),
         rgba=p["rgba"], mass=p["mass"] * 0.05, name=f"{name}_spout")
    for z in (-0.5 * h, 0.5 * h):
        geom(body, BOX, (0.014, 0.006, 0.005), pos=(-r - 0.012, 0, z), rgba=p["rgba"], mass=p["mass"] * 0.03)
    geom(body, BOX, (0.005, 0.006, 0.5 * h + 0.005), pos=(-r - 0.026, 0, 0), rgba=p["rgba"], mass=p["mass"] * 0.07,
         name=f"{name}_handle")
    return Shape(h, r + 0.045, h, (r * 0.7, r * 0.7))

