"""Fixtures for the long-horizon tasks: a slatted drying rack (conventions in :mod:`teleop.tasks.kinds`)."""
from __future__ import annotations

import math

from teleop.tasks.kinds import BOX, RGBA, Param, Shape, geom, kind, sizes


@kind("drying_rack", required=("size",), defaults={"height": 0.04}, size=sizes(2, above=0.03),
      height=Param(float, above=0.015), rgba=RGBA)
def _drying_rack(body, name, p):
    """A low dish-drying rack: a frame on four feet with slats across it (along y) every 2.5 cm;
    things are set on the slats (``on_top``)."""
    hx, hy = p["size"]
    h, t = p["height"], 0.004
    for sx in (-1, 1):
        for sy in (-1, 1):
            leg = (h - 2 * t) / 2
            geom(body, BOX, (0.006, 0.006, leg), pos=(sx * (hx - 0.006), sy * (hy - 0.006), leg), rgba=p["rgba"])
        geom(body, BOX, (0.006, hy, t), pos=(sx * (hx - 0.006), 0, h - t), rgba=p["rgba"], name=f"{name}_rail{sx + 1}")
    n = max(2, int(2 * hx / 0.025))
    for i in range(n):
        x = -hx + 0.012 + i * (2 * hx - 0.024) / (n - 1)
        geom(body, BOX, (0.004, hy, t), pos=(x, 0, h - t), rgba=p["rgba"], name=f"{name}_slat{i}")
    return Shape(0.0, math.hypot(hx, hy), h, (hx, hy), footprint=(hx, hy))
