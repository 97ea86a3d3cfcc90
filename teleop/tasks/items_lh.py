"""Free objects for the instruction-following and long-horizon tasks: a watering can and a potted plant."""
from __future__ import annotations

import math

from teleop.tasks.items_household import qmul
from teleop.tasks.kinds import BOX, CAPS, CYL, ELL, POSITIVE, RGBA, Interior, Shape, geom, kind

SPOUT_RISE = math.radians(45)        # the spout leaves the body's +x side rising at this angle
GREEN = (0.25, 0.6, 0.25, 1)
TERRACOTTA = (0.75, 0.4, 0.25, 1)


@kind("watering_can", required=(), defaults={"radius": 0.045, "half_height": 0.055, "mass": 0.3},
      radius=POSITIVE, half_height=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _watering_can(body, name, p):
    """A closed can with a spout rising toward +x and a loop handle on its -x side; sites
    ``{name}_spout`` (the spout's tip) and ``{name}_spout_base`` (where it leaves the body) give the
    spout's direction (``watering``: the tip over a plant, pointing down)."""
    r, h = p["radius"], p["half_height"]
    geom(body, CYL, (r, h), rgba=p["rgba"], mass=p["mass"] * 0.75, name=f"{name}_body")
    half = 0.05
    base = (r - 0.006, 0.0, -0.2 * h)
    d = (math.cos(SPOUT_RISE), 0.0, math.sin(SPOUT_RISE))
    centre = tuple(b + half * c for b, c in zip(base, d))
    tilt = math.pi / 2 - SPOUT_RISE           # capsule axis z turned about y onto d
    geom(body, CAPS, (0.007, half), pos=centre, quat=(math.cos(tilt / 2), 0, math.sin(tilt / 2), 0), rgba=p["rgba"],
         mass=p["mass"] * 0.08, name=f"{name}_spout_g")
    tip = tuple(b + (2 * half + 0.007) * c for b, c in zip(base, d))
    body.add_site(name=f"{name}_spout", pos=list(tip), size=[0.004, 0, 0])
    body.add_site(name=f"{name}_spout_base", pos=list(base), size=[0.004, 0, 0])
    for z in (-0.45 * h, 0.55 * h):            # the handle: two arms out of the -x side and a bar
        geom(body, BOX, (0.015, 0.007, 0.005), pos=(-r - 0.013, 0, z), rgba=p["rgba"], mass=p["mass"] * 0.03)
    geom(body, BOX, (0.005, 0.007, 0.5 * h + 0.005), pos=(-r - 0.028, 0, 0.05 * h), rgba=p["rgba"],
         mass=p["mass"] * 0.11, name=f"{name}_handle")
    reach = r + 2 * half * math.cos(SPOUT_RISE)
    return Shape(h, reach, h, (r * 0.7, r * 0.7))


@kind("plant", required=(), defaults={"radius": 0.04, "height": 0.09, "foliage": 0.055, "mass": 0.6},
      radius=POSITIVE, height=POSITIVE, foliage=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _plant(body, name, p):
    """A potted plant: a pot of ``radius`` and ``height`` with a stem and a round crown of leaves
    (``foliage`` radius) on top; its origin is at the pot's bottom. ``watering`` aims at the crown."""
    r, h, f = p["radius"], p["height"], p["foliage"]
    geom(body, CYL, (r, h / 2), pos=(0, 0, h / 2), rgba=TERRACOTTA, mass=p["mass"] * 0.8, name=f"{name}_pot")
    geom(body, CYL, (r * 0.9, 0.003), pos=(0, 0, h + 0.001), rgba=(0.35, 0.25, 0.15, 1), mass=p["mass"] * 0.02)
    geom(body, CAPS, (0.006, 0.02), pos=(0, 0, h + 0.02), rgba=GREEN, mass=p["mass"] * 0.03)
    geom(body, ELL, (f, f, 0.75 * f), pos=(0, 0, h + 0.035 + 0.75 * f), rgba=p["rgba"], mass=p["mass"] * 0.15,
         name=f"{name}_leaves")
    top = h + 0.035 + 1.5 * f
    return Shape(0.0, max(f, r), top, footprint=(max(f, r), max(f, r)))


@kind("bowl", required=("radius", "depth"), container=True, defaults={"wall": 0.002, "flare": 0.61, "mass": 0.15},
      radius=POSITIVE, depth=POSITIVE, flare=POSITIVE, wall=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _bowl(body, name, p):
    """A flared bowl: a floor disc and 24 thin wall slabs leaning outward by ``flare`` radians up to the
    rim (outer ``radius``, ``depth`` high). Bowls nest: a smaller bowl whose floor is narrower stands on
    the larger one's floor with its wall parallel inside. Interior: the cylinder over the floor."""
    R, d, a, t = p["radius"], p["depth"], p["flare"], p["wall"]
    floor = R - d * math.tan(a) - t
    if floor <= 0.005:
        raise ValueError(f"bowl {name}: flare {a} too wide for radius {R} and depth {d} (no floor left)")
    geom(body, CYL, (floor + t, t / 2), pos=(0, 0, t / 2), rgba=p["rgba"], mass=p["mass"] * 0.3, name=f"{name}_floor")
    n, slant = 24, d / math.cos(a)
    half_w = (R - t / 2) * math.tan(math.pi / n) + 0.0005
    mid = floor + t / 2 + 0.5 * d * math.tan(a)
    for i in range(n):
        yaw = 2 * math.pi * i / n
        quat = qmul((math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)), (math.cos(a / 2), 0, math.sin(a / 2), 0))
        geom(body, BOX, (t / 2, half_w, slant / 2), pos=(mid * math.cos(yaw), mid * math.sin(yaw), t + d / 2),
             quat=quat, rgba=p["rgba"], mass=p["mass"] * 0.7 / n)
    return Shape(0.0, R, t, (floor, floor), Interior((0, 0, t), (floor, floor, d / 2), True))
