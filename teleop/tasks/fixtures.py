"""Fixture kinds of the object library: shelves, slots, racks and articulated fixtures.

Articulated fixtures have one main joint ``{name}_joint`` whose range runs from closed (low) to open
(high); see :mod:`teleop.tasks.kinds` for the conventions.
"""
from __future__ import annotations

import math

from teleop.tasks.kinds import (BOX, CAPS, CYL, HINGE, POSITIVE, RGBA, SLIDE, SPHERE, Y_AXIS_QUAT, AutoEvent, Interior,
                                Param, Shape, geom, joint, kind, sizes, walls)


# -- static fixtures --------------------------------------------------------------------------
# the board and the two sides are 1 cm thick: lower than two boards leaves no side to stand on
@kind("shelf", required=("size", "height"), size=sizes(2, above=0.01), height=Param(float, above=0.02), rgba=RGBA)
def _shelf(body, name, p):
    hx, hy = p["size"]
    h, t = p["height"], 0.01
    geom(body, BOX, (hx, hy, t), pos=(0, 0, h - t), rgba=p["rgba"], name=f"{name}_board")
    for sy in (-1, 1):
        geom(body, BOX, (hx, 0.01, (h - 2 * t) / 2), pos=(0, sy * (hy - 0.01), (h - 2 * t) / 2), rgba=p["rgba"])
    return Shape(0.0, math.hypot(hx, hy), h, (hx, hy), footprint=(hx, hy))


@kind("slot", required=("gap", "depth"), container=True, gap=sizes(2), depth=POSITIVE, wall=POSITIVE, rgba=RGBA)
def _slot(body, name, p):
    """A block with a rectangular slot open at the top (cubes are inserted into it)."""
    interior = walls(body, name, dict(p, round=False), p["gap"], p["depth"], p["rgba"], 1.0)
    return Shape(0.0, math.hypot(*p["gap"]) + p["wall"], p["depth"] + p["wall"], tuple(p["gap"]), interior)


# pegs stand 1 cm in from the edges and the plates' slot is 1.5 cm narrower than the base
@kind("dish_rack", required=("size",), container=True, size=sizes(2, above=0.015), pegs=POSITIVE, rgba=RGBA)
def _dish_rack(body, name, p):
    """A base with two rows of pegs along x; plates stand between them."""
    hx, hy = p["size"]
    geom(body, BOX, (hx, hy, 0.005), pos=(0, 0, 0.005), rgba=p["rgba"], name=f"{name}_base")
    n = int(p["pegs"])
    for i in range(n):
        x = -hx + 0.01 + i * (2 * hx - 0.02) / max(n - 1, 1)
        for sy in (-1, 1):
            geom(body, CYL, (0.004, 0.04), pos=(x, sy * (hy - 0.01), 0.05), rgba=p["rgba"])
    return Shape(0.0, math.hypot(hx, hy), 0.01, (hx, hy), Interior((0, 0, 0.01), (hx, hy - 0.015, 0.06)),
                 footprint=(hx, hy))


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


# housings have 8 mm walls: their half extents must leave room inside
@kind("lidded_box", required=("size",), articulated=True, container=True, size=sizes(3, above=0.008),
      open_angle=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _lidded_box(body, name, p):
    """Bread maker / scanner / grill / rice cooker: open-top housing, lid hinged at the far edge."""
    hx, hy, hz = p["size"]
    interior = _housing(body, name, p["size"], p["rgba"], "top")
    lid = body.add_body(name=f"{name}_lid", pos=[hx, 0, 2 * hz])
    joint(lid, f"{name}_joint", HINGE, (0, 1, 0), (0, p["open_angle"]), damping=0.2)
    geom(lid, BOX, (hx, hy, 0.006), pos=(-hx, 0, 0.006), rgba=p["lid_rgba"], mass=0.15, name=f"{name}_lid_g")
    geom(lid, BOX, (0.01, 0.03, 0.01), pos=(-2 * hx + 0.005, 0, 0.02), rgba=(0.2, 0.2, 0.2, 1), mass=0.02,
         name=f"{name}_lid_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz + 0.012, (hx, hy), interior, f"{name}_joint", (hx + 0.02, hy))


@kind("door_box", required=("size",), articulated=True, container=True, size=sizes(3, above=0.008),
      open_angle=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _door_box(body, name, p):
    """Microwave-like housing open toward the robot, door hinged about z at its left (+y) edge."""
    hx, hy, hz = p["size"]
    interior = _housing(body, name, p["size"], p["rgba"], "front")
    door = body.add_body(name=f"{name}_door", pos=[-hx - 0.008, hy, 0])
    joint(door, f"{name}_joint", HINGE, (0, 0, -1), (0, p["open_angle"]), damping=0.2)
    geom(door, BOX, (0.006, hy, hz), pos=(0, -hy, hz), rgba=p["lid_rgba"], mass=0.2, name=f"{name}_door_g")
    geom(door, BOX, (0.015, 0.008, 0.04), pos=(-0.02, -2 * hy + 0.02, hz), rgba=(0.2, 0.2, 0.2, 1), mass=0.02,
         name=f"{name}_door_handle")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, f"{name}_joint", (hx + 0.03, hy))


# the drawer runs 2 cm inside the housing's walls
@kind("drawer_box", required=("size", "travel"), articulated=True, container=True, size=sizes(3, above=0.02),
      travel=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _drawer_box(body, name, p):
    """Cabinet / cash register with a drawer sliding toward the robot (-x)."""
    hx, hy, hz = p["size"]
    _housing(body, name, p["size"], p["rgba"], "front")
    drawer = body.add_body(name=f"{name}_drawer", pos=[0, 0, 0.012])
    joint(drawer, f"{name}_joint", SLIDE, (-1, 0, 0), (0, p["travel"]), damping=2.0)
    ip = dict(round=False, wall=0.005)
    interior = walls(drawer, f"{name}_drawer", ip, (hx - 0.02, hy - 0.02), hz * 1.2, p["lid_rgba"], 0.3)
    interior = Interior(interior.floor, interior.half, False, f"{name}_drawer")      # moves with the drawer
    geom(drawer, BOX, (0.005, hy - 0.01, hz * 0.8), pos=(-hx + 0.012, 0, hz * 0.8), rgba=p["lid_rgba"], mass=0.05)
    _bar_handle(drawer, name, x=-hx + 0.007, z=hz * 0.9)
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx, hy), interior, f"{name}_joint", (hx + 0.03, hy))


def _bar_handle(body, name, x: float, z: float, half_width: float = 0.045, reach: float = 0.055) -> None:
    """A bar handle on two standoffs in front of a face at ``x`` (toward -x, the robot): the gap
    behind the bar takes fingers, so a hand can hook it and pull, as on a real drawer."""
    dark = (0.2, 0.2, 0.2, 1)
    for y in (-half_width, half_width):
        geom(body, BOX, (reach / 2, 0.005, 0.005), pos=(x - reach / 2, y, z), rgba=dark, mass=0.005)
    geom(body, CAPS, (0.007, half_width + 0.008), pos=(x - reach, 0, z), quat=Y_AXIS_QUAT, rgba=dark, mass=0.02,
         name=f"{name}_handle")


@kind("lever", required=(), articulated=True, rgba=RGBA, range=POSITIVE)
def _lever(body, name, p):
    """Slot machine: a cabinet with a lever on its right (-y) side, pulled down toward the robot."""
    geom(body, BOX, (0.08, 0.08, 0.1), pos=(0, 0, 0.1), rgba=p["rgba"], name=f"{name}_cabinet")
    arm = body.add_body(name=f"{name}_arm", pos=[0, -0.095, 0.12])
    joint(arm, f"{name}_joint", HINGE, (0, -1, 0), (0, p["range"]), damping=0.3, stiffness=0.5)
    geom(arm, CYL, (0.008, 0.06), pos=(0, 0, 0.06), rgba=(0.7, 0.7, 0.75, 1), mass=0.05)
    geom(arm, SPHERE, (0.022,), pos=(0, 0, 0.13), rgba=(0.85, 0.1, 0.1, 1), mass=0.03, name=f"{name}_knob")
    return Shape(0.0, 0.12, 0.2, (0.08, 0.08), None, f"{name}_joint", (0.1, 0.12))


@kind("capped_bottle", required=(), articulated=True, container=True, defaults={"radius": 0.035, "depth": 0.13},
      radius=POSITIVE, depth=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _capped_bottle(body, name, p):
    """A wide-mouth hollow bottle; a flip cap hinged at its far (+x) rim edge."""
    r, d = p["radius"], p["depth"]
    interior = walls(body, name, dict(round=True, wall=0.005), (r, r), d, p["rgba"], 0.3)
    cap = body.add_body(name=f"{name}_cap", pos=[r + 0.005, 0, d + 0.005])
    joint(cap, f"{name}_joint", HINGE, (0, 1, 0), (0, 2.4), damping=0.05)
    geom(cap, CYL, (r + 0.006, 0.006), pos=(-(r + 0.005), 0, 0.006), rgba=p["lid_rgba"], mass=0.02,
         name=f"{name}_cap_g")
    geom(cap, BOX, (0.012, 0.012, 0.004), pos=(-2 * r - 0.02, 0, 0.008), rgba=p["lid_rgba"], mass=0.005,
         name=f"{name}_tab")
    return Shape(0.0, r + 0.01, d + 0.012, (r, r), interior, f"{name}_joint")


@kind("lift_stand", required=(), articulated=True, size=sizes(2), travel=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _lift_stand(body, name, p):
    """Laptop stand: a platform on a vertical slide that holds its height (friction)."""
    hx, hy = p["size"]
    geom(body, BOX, (hx, hy, 0.006), pos=(0, 0, 0.006), rgba=p["rgba"], name=f"{name}_base")
    geom(body, BOX, (0.01, 0.01, 0.03), pos=(0, 0, 0.036), rgba=p["rgba"], name=f"{name}_post")
    plat = body.add_body(name=f"{name}_platform", pos=[0, 0, 0.07])
    plat.gravcomp = 1.0     # the stand's ratchet holds the platform where the hand leaves it
    joint(plat, f"{name}_joint", SLIDE, (0, 0, 1), (0, p["travel"]), damping=5.0, frictionloss=3.0)
    geom(plat, BOX, (hx, hy, 0.006), rgba=p["lid_rgba"], mass=0.2, name=f"{name}_platform_g")
    geom(plat, BOX, (0.012, 0.04, 0.01), pos=(-hx - 0.01, 0, 0), rgba=(0.2, 0.2, 0.2, 1), mass=0.01,
         name=f"{name}_grip")
    return Shape(0.0, math.hypot(hx, hy) + 0.02, 0.076, (hx, hy), None, f"{name}_joint", (hx + 0.03, hy))


# every button counts its own presses: event ``{name}.presses`` (teleop.tasks.events.PressCounter)
@kind("button", required=(), articulated=True, defaults={"travel": 0.008, "radius": 0.025},
      auto_events=(AutoEvent("press_counter", "presses", "button"),), radius=POSITIVE, travel=POSITIVE, rgba=RGBA)
def _button(body, name, p):
    """Push button on a spring: the main joint is its depression (0 = up, open = fully pressed)."""
    r, t = p["radius"], p["travel"]
    # the base stays below the cap's lowest travel: a static base and the cap would otherwise collide
    geom(body, CYL, (r + 0.015, 0.0065), pos=(0, 0, 0.0065), rgba=(0.25, 0.25, 0.25, 1), name=f"{name}_base")
    cap = body.add_body(name=f"{name}_cap", pos=[0, 0, 0.015 + t + 0.008])
    cap.gravcomp = 1.0
    # preloaded spring (reference above the top stop) so the cap rests firmly up
    joint(cap, f"{name}_joint", SLIDE, (0, 0, -1), (0, t), damping=3.0, stiffness=300.0, springref=-0.002)
    geom(cap, CYL, (r, 0.008), rgba=p["rgba"], mass=0.05, name=f"{name}_cap_g")
    return Shape(0.0, r + 0.015, 0.015 + t + 0.016, (r, r), None, f"{name}_joint")


@kind("nail", required=(), articulated=True, defaults={"travel": 0.03}, travel=POSITIVE, rgba=RGBA)
def _nail(body, name, p):
    """A nail standing in a board below it; hammering drives it down (open = 1 means still up)."""
    n = body.add_body(name=f"{name}_shaft", pos=[0, 0, 0])
    n.gravcomp = 1.0        # only a hammer blow moves it (friction alone creeps under gravity)
    joint(n, f"{name}_joint", SLIDE, (0, 0, 1), (0, p["travel"]), damping=20.0, frictionloss=15.0)
    geom(n, CYL, (0.003, p["travel"] / 2 + 0.01), pos=(0, 0, p["travel"] / 2 - 0.01), rgba=p["rgba"], mass=0.01,
         collide=False)
    geom(n, CYL, (0.009, 0.003), pos=(0, 0, 0.003), rgba=p["rgba"], mass=0.01, name=f"{name}_head")
    return Shape(0.0, 0.012, 0.006, (0.009, 0.009), None, f"{name}_joint")
