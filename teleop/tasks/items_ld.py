"""Free objects the limited-demonstration tasks added: a balloon whisk."""
from __future__ import annotations

import math

from teleop.tasks.kinds import CAPS, ELL, POSITIVE, RGBA, X_AXIS_QUAT, Shape, geom, kind, sizes


@kind("whisk", required=(), defaults={"mass": 0.08, "handle": [0.012, 0.055], "head": [0.055, 0.026]},
      handle=sizes(2), head=sizes(2), mass=POSITIVE, rgba=RGBA)
def _whisk(body, name, p):
    """A balloon whisk lying along x: a round handle (``handle`` = [radius, half length]) toward -x
    and a wire balloon (``head`` = [half length, radius]) toward +x, both resting on the table. The
    balloon collides as an ellipsoid; its wires are drawn as thin loops."""
    hr, hl = p["handle"]
    bl, br = p["head"]
    # handle axis at height hr above the table; the balloon's centre sits higher so it rests too
    geom(body, CAPS, (hr, hl), pos=(-hl, 0, 0), quat=X_AXIS_QUAT, rgba=(0.15, 0.15, 0.15, 1),
         mass=p["mass"] * 0.6, name=f"{name}_handle")
    cz = br - hr
    cx = 0.006 + bl
    geom(body, ELL, (bl, br, br), pos=(cx, 0, cz), rgba=list(p["rgba"][:3]) + [0.25], mass=p["mass"] * 0.4,
         name=f"{name}_balloon")
    n, seg = 4, 10
    for i in range(n):                         # wire loops in planes through the balloon's axis
        a = math.pi * i / n
        for j in range(seg):
            t0, t1 = math.pi * j / seg, math.pi * (j + 1) / seg
            pts = [(cx - bl * math.cos(t), br * math.sin(t)) for t in (t0, t1)]
            (x0, r0), (x1, r1) = pts
            p0 = (x0, r0 * math.cos(a), cz + r0 * math.sin(a))
            p1 = (x1, r1 * math.cos(a), cz + r1 * math.sin(a))
            for sgn in (1, -1):
                q0 = (p0[0], sgn * p0[1], cz + sgn * (p0[2] - cz))
                q1 = (p1[0], sgn * p1[1], cz + sgn * (p1[2] - cz))
                body.add_geom(type=CAPS, fromto=[*q0, *q1], size=[0.0012, 0, 0], rgba=list(p["rgba"]),
                              contype=0, conaffinity=0, mass=0)
    return Shape(hr, max(2 * hl + hr, 0.006 + 2 * bl), hr)
