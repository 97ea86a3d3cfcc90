"""Fixtures the limited-demonstration tasks added: a wheelie bin, an open cubby shelf, a stepped
tiered basket and a cabinet section with a drawer over a closed plinth (conventions in
:mod:`teleop.tasks.kinds`)."""
from __future__ import annotations

import math

from teleop.tasks.kinds import (BOX, CYL, HINGE, NON_NEGATIVE, POSITIVE, RGBA, SLIDE, Y_AXIS_QUAT, Interior, Param,
                                Shape, geom, joint, kind, sizes, walls)
from teleop.tasks.fixtures import _bar_handle, _housing
from teleop.tasks.fixtures_household import _front_open_housing

DARK = (0.2, 0.2, 0.2, 1)


@kind("wheelie_bin", required=("size",), articulated=True, container=True, defaults={"open_angle": 2.0},
      size=sizes(3, above=0.02), open_angle=POSITIVE, rgba=RGBA, lid_rgba=RGBA)
def _wheelie_bin(body, name, p):
    """A wheelie bin: a tall open-top body with two wheels and a push bar at the back (+x) and a
    lid hinged at the back edge whose front lip overhangs toward the robot (lift it there)."""
    hx, hy, hz = p["size"]
    interior = _housing(body, name, p["size"], p["rgba"], "top")
    for sy in (-1, 1):            # wheels and the push bar are decoration (a fixture does not roll)
        geom(body, CYL, (0.035, 0.012), pos=(hx - 0.02, sy * (hy + 0.013), 0.035), quat=Y_AXIS_QUAT, rgba=DARK,
             collide=False)
    geom(body, CYL, (0.008, hy), pos=(hx + 0.02, 0, 2 * hz - 0.03), quat=Y_AXIS_QUAT, rgba=p["rgba"],
         collide=False)
    lid = body.add_body(name=f"{name}_lid", pos=[hx, 0, 2 * hz])
    joint(lid, f"{name}_joint", HINGE, (0, 1, 0), (0, p["open_angle"]), damping=0.3)
    geom(lid, BOX, (hx + 0.01, hy + 0.008, 0.006), pos=(-hx - 0.01, 0, 0.006), rgba=p["lid_rgba"], mass=0.3,
         name=f"{name}_lid_g")
    # the front lip hangs down over the front wall: fingers lift it from below
    geom(lid, BOX, (0.006, hy * 0.6, 0.015), pos=(-2 * hx - 0.026, 0, -0.006), rgba=p["lid_rgba"], mass=0.03,
         name=f"{name}_lip")
    return Shape(0.0, math.hypot(hx, hy), 2 * hz + 0.012, (hx, hy), interior, f"{name}_joint", (hx + 0.03, hy + 0.03))


@kind("cubby_shelf", required=("size",), container=True, size=sizes(3, above=0.03), rgba=RGBA)
def _cubby_shelf(body, name, p):
    """A wooden shelf unit: one cubby open toward the robot (-x) to insert things into (``inside``)
    and a top board to set things on (``on_top``)."""
    hx, hy, hz = p["size"]
    interior = _front_open_housing(body, name, p["size"], p["rgba"], top=0.012)
    geom(body, BOX, (0.004, hy, 0.006), pos=(-hx + 0.004, 0, 0.006), rgba=DARK, collide=False)   # a kick board
    return Shape(0.0, math.hypot(hx, hy), 2 * hz, (hx - 0.01, hy - 0.01), interior, footprint=(hx + 0.005, hy))


@kind("tiered_basket", required=("tier", "heights"), defaults={"rim": 0.045}, tier=sizes(2, above=0.03),
      heights=Param(list, (2, 3), above=0.01), rim=POSITIVE, rgba=RGBA)
def _tiered_basket(body, name, p):
    """A stepped fruit basket: open baskets rising away from the robot (+x); basket k has inner half
    extents ``tier`` and its floor at ``heights[k]`` on a solid stand, walls ``rim`` high. Its tiers
    are the basket floors, so ``on_tier`` says an object rests in a basket."""
    hx, hy = p["tier"]
    hs, rim, t = p["heights"], p["rim"], 0.006
    n = len(hs)
    tiers = []
    for k, top in enumerate(hs):
        x = -n * (hx + t) + (hx + t) + 2 * (hx + t) * k
        geom(body, BOX, (hx + t, hy + t, top / 2), pos=(x, 0, top / 2), rgba=(0.45, 0.32, 0.2, 1),
             name=f"{name}_stand{k}")
        basket = dict(round=False, wall=t)
        b = body.add_body(name=f"{name}_basket{k}", pos=[x, 0, top - t])
        walls(b, f"{name}_basket{k}", basket, (hx, hy), rim, p["rgba"], 0.2)
        tiers.append((x, 0.0, hx, hy, float(top)))
    return Shape(0.0, math.hypot(n * (hx + t), hy + t), float(max(hs)) + rim, (0.0, 0.0),
                 footprint=(n * (hx + t), hy + t), tiers=tuple(tiers))


@kind("drawer_section", required=("size", "travel"), articulated=True, container=True, defaults={"plinth": 0.0},
      size=sizes(3, above=0.05), travel=POSITIVE, plinth=NON_NEGATIVE, rgba=RGBA, lid_rgba=RGBA)
def _drawer_section(body, name, p):
    """A cabinet section with one drawer sliding toward the robot (-x) over a closed ``plinth`` (a
    lower drawer front that does not open); stack another section on it (``rest_on``) for the
    drawer above. The drawer's interior moves with it; half height > 5 cm so its front clears the roof."""
    hx, hy, hz = p["size"]
    z0 = p["plinth"]
    if z0 > 0:
        geom(body, BOX, (hx, hy, z0 / 2), pos=(0, 0, z0 / 2), rgba=p["rgba"], name=f"{name}_plinth")
        geom(body, BOX, (0.004, hy - 0.01, z0 * 0.4), pos=(-hx - 0.004, 0, z0 / 2), rgba=p["lid_rgba"],
             collide=False)
        geom(body, BOX, (0.006, 0.04, 0.006), pos=(-hx - 0.014, 0, z0 * 0.6), rgba=DARK, collide=False)
    shell = body.add_body(name=f"{name}_shell", pos=[0, 0, z0])
    _housing(shell, name, p["size"], p["rgba"], "front")
    drawer = shell.add_body(name=f"{name}_drawer", pos=[0, 0, 0.012])
    joint(drawer, f"{name}_joint", SLIDE, (-1, 0, 0), (0, p["travel"]), damping=2.0)
    ip = dict(round=False, wall=0.005)
    inner = walls(drawer, f"{name}_drawer", ip, (hx - 0.02, hy - 0.02), hz * 1.2, p["lid_rgba"], 0.3)
    interior = Interior(inner.floor, inner.half, False, f"{name}_drawer")      # moves with the drawer
    geom(drawer, BOX, (0.005, hy - 0.01, hz * 0.8), pos=(-hx + 0.012, 0, hz * 0.8), rgba=p["lid_rgba"], mass=0.05)
    _bar_handle(drawer, name, x=-hx + 0.007, z=hz * 0.9)
    return Shape(0.0, math.hypot(hx, hy), z0 + 2 * hz, (hx, hy), interior, f"{name}_joint", (hx + 0.03, hy))
