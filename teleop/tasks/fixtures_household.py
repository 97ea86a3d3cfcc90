"""Household fixtures: rods for threading, a mug tree, tiered shelves, a digital scale, an espresso
machine and a cabinet with a sliding door (conventions in :mod:`teleop.tasks.kinds`)."""
from __future__ import annotations

import math

from teleop.tasks.kinds import (BOX, CAPS, CYL, POSITIVE, RGBA, SLIDE, Interior, Param, Shape, geom, joint, kind,
                                sizes)

DARK = (0.2, 0.2, 0.2, 1)


@kind("rod", required=("height",), container=True, defaults={"radius": 0.008, "base": 0.05},
      height=Param(float, above=0.02), radius=POSITIVE, base=POSITIVE, rgba=RGBA)
def _rod(body, name, p):
    """A vertical rod on a base disc; rings (bagels, donuts) are threaded onto it. Its interior is
    the space around the rod above the base, so a ring can start threaded (``rest_on`` the rod)."""
    h, r, b = p["height"], p["radius"], p["base"]
    geom(body, CYL, (b, 0.006), pos=(0, 0, 0.006), rgba=p["rgba"], name=f"{name}_base")
    geom(body, CYL, (r, (h - 0.012) / 2), pos=(0, 0, 0.012 + (h - 0.012) / 2), rgba=p["rgba"], name=f"{name}_g")
    return Shape(0.0, b, h, (r, r), Interior((0, 0, 0.012), (b, b, (h - 0.012) / 2), True), footprint=(b, b))


@kind("mug_tree", required=(), defaults={"height": 0.28, "base": 0.06, "pegs": 2.0, "mass": 0.3},
      height=Param(float, above=0.05), base=POSITIVE, pegs=POSITIVE, mass=POSITIVE, rgba=RGBA)
def _mug_tree(body, name, p):
    """A post on a base disc with ``pegs`` pegs rising 25 degrees outward (the first toward +y, then
    round); site ``{name}_hook{i}`` is the top of peg i where a hung mug's handle bears."""
    h, b, n = p["height"], p["base"], int(p["pegs"])
    geom(body, CYL, (b, 0.008), pos=(0, 0, 0.008), rgba=p["rgba"], mass=p["mass"] * 0.5, name=f"{name}_base")
    geom(body, CYL, (0.009, h / 2 - 0.008), pos=(0, 0, h / 2 + 0.008), rgba=p["rgba"], mass=p["mass"] * 0.3,
         name=f"{name}_post")
    rise, length, pr = math.radians(25), 0.07, 0.005
    for i in range(n):
        yaw = math.pi / 2 + 2 * math.pi * i / n
        z0 = h * (0.78 if i % 2 == 0 else 0.62)
        d = (math.cos(rise) * math.cos(yaw), math.cos(rise) * math.sin(yaw), math.sin(rise))
        # capsule axis z -> d: turn about z by yaw of a rotation about y that tips z down to the rise
        tip = math.pi / 2 - rise
        qy = (math.cos(tip / 2), 0, math.sin(tip / 2), 0)
        qz = (math.cos(yaw / 2), 0, 0, math.sin(yaw / 2))
        quat = (qz[0] * qy[0] - qz[3] * qy[3], qz[0] * qy[1] - qz[3] * qy[2], qz[0] * qy[2] + qz[3] * qy[1],
                qz[3] * qy[0] + qz[0] * qy[3])
        c = [d[k] * length / 2 for k in range(3)]
        geom(body, CAPS, (pr, length / 2), pos=(c[0], c[1], z0 + c[2]), quat=quat, rgba=p["rgba"],
             mass=p["mass"] * 0.2 / n, name=f"{name}_peg{i}")
        s = 0.75 * length
        body.add_site(name=f"{name}_hook{i}", pos=[d[0] * s, d[1] * s, z0 + d[2] * s + pr / math.cos(rise)],
                      size=[0.003, 0, 0])
    return Shape(0.0, b + 0.02, h, (b, b), footprint=(b, b))


@kind("tiered_shelf", required=("tier", "heights"), tier=sizes(2, above=0.01),
      heights=Param(list, (2, 3, 4), above=0.01), rgba=RGBA)
def _tiered_shelf(body, name, p):
    """Stepped tiers rising away from the robot (+x): tier k is a block ``tier`` = [hx, hy] (half
    extents) with its top at ``heights[k]``; objects stand on any tier (``on_tier``)."""
    hx, hy = p["tier"]
    hs = p["heights"]
    n = len(hs)
    tiers = []
    for k, top in enumerate(hs):
        x = -n * hx + hx + 2 * hx * k
        geom(body, BOX, (hx, hy, top / 2), pos=(x, 0, top / 2), rgba=p["rgba"], name=f"{name}_tier{k}")
        tiers.append((x, 0.0, hx, hy, float(top)))
    return Shape(0.0, math.hypot(n * hx, hy), float(max(hs)), (0.0, 0.0), footprint=(n * hx, hy), tiers=tuple(tiers))


@kind("scale", required=(), defaults={"size": [0.07, 0.07], "height": 0.025}, size=sizes(2, above=0.02),
      height=Param(float, above=0.01), rgba=RGBA)
def _scale(body, name, p):
    """A digital kitchen scale: a base with a display at the front and a weighing plate on top."""
    hx, hy = p["size"]
    h = p["height"]
    geom(body, BOX, (hx, hy, (h - 0.004) / 2), pos=(0, 0, (h - 0.004) / 2), rgba=p["rgba"], name=f"{name}_base")
    geom(body, BOX, (hx - 0.008, hy - 0.008, 0.002), pos=(0, 0, h - 0.002), rgba=(0.8, 0.8, 0.82, 1),
         name=f"{name}_plate")
    geom(body, BOX, (0.004, hy * 0.5, h * 0.25), pos=(-hx - 0.003, 0, h * 0.45), rgba=(0.1, 0.3, 0.35, 1),
         collide=False)
    return Shape(0.0, math.hypot(hx, hy), h, (hx - 0.008, hy - 0.008), footprint=(hx + 0.008, hy))


def _front_open_housing(body, name, size, rgba, top=0.008):
    """A box open toward the robot (-x); ``top``: the roof's thickness. Returns the open volume."""
    hx, hy, hz = size
    t = 0.008
    geom(body, BOX, (hx, hy, t / 2), pos=(0, 0, t / 2), rgba=rgba, name=f"{name}_bottom")
    geom(body, BOX, (hx, hy, top / 2), pos=(0, 0, 2 * hz - top / 2), rgba=rgba, name=f"{name}_top")
    geom(body, BOX, (t / 2, hy, hz), pos=(hx - t / 2, 0, hz), rgba=rgba, name=f"{name}_back")
    for sy in (-1, 1):
        geom(body, BOX, (hx, t / 2, hz), pos=(0, sy * (hy - t / 2), hz), rgba=rgba, name=f"{name}_side{sy + 1}")
    return Interior((0, 0, t), (hx - t, hy - t, (2 * hz - t - top) / 2))


@kind("espresso_machine", required=("size",), container=True, size=sizes(3, above=0.03), rgba=RGBA)
def _espresso_machine(body, name, p):
    """An espresso machine: a body with a front slot open toward the robot under a thick head with
    the group and spout; a cup stands in the slot (``inside``)."""
    hx, hy, hz = p["size"]
    interior = _front_open_housing(body, name, p["size"], p["rgba"], top=0.06)
    roof = 2 * hz - 0.06
    geom(body, CYL, (0.02, 0.008), pos=(0, 0, roof - 0.008), rgba=(0.6, 0.6, 0.62, 1), collide=False)
    geom(body, BOX, (0.04, 0.006, 0.006), pos=(-hx + 0.01, 0, roof - 0.02), rgba=DARK, collide=False)
    geom(body, BOX, (hx - 0.01, hy - 0.012, 0.003), pos=(0, 0, 0.011), rgba=(0.3, 0.3, 0.32, 1), collide=False)
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, footprint=(hx + 0.01, hy))


@kind("slide_cabinet", required=("size",), articulated=True, container=True, defaults={"travel": 0.14},
      size=sizes(3, above=0.02), travel=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _slide_cabinet(body, name, p):
    """A cabinet open toward the robot behind a door that slides sideways (+y) along its front."""
    hx, hy, hz = p["size"]
    interior = _front_open_housing(body, name, p["size"], p["rgba"])
    door = body.add_body(name=f"{name}_door", pos=[-hx - 0.008, 0, 0])
    joint(door, f"{name}_joint", SLIDE, (0, 1, 0), (0, p["travel"]), damping=3.0, frictionloss=0.5)
    geom(door, BOX, (0.005, hy, hz - 0.003), pos=(0, 0, hz + 0.003), rgba=p["lid_rgba"], mass=0.3,
         name=f"{name}_door_g")
    # a vertical bar handle near the door's -y edge on two standoffs: fingers hook behind it
    y = -hy + 0.03
    for z in (hz - 0.04, hz + 0.04):
        geom(door, BOX, (0.015, 0.005, 0.005), pos=(-0.02, y, z), rgba=DARK, mass=0.005)
    geom(door, CAPS, (0.007, 0.05), pos=(-0.035, y, hz), rgba=DARK, mass=0.02, name=f"{name}_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, f"{name}_joint", (hx + 0.05, hy))
