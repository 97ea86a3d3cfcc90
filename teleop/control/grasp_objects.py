"""The hand-holdable objects of the library, for the grasp bench.

The library's objects are the free objects the shipped task specs declare (a kind plus its
parameters: a peach is a 3.5 cm sphere of 150 g); identical declarations count once. An object is
holdable when it is free, not articulated, narrow enough across for the hand's grasp and light
enough for it; each is measured by compiling it alone (its axis-aligned extent and mass). On
request each carries the grasp the operator's proven scripts take it with, if any (:mod:`operator_grasps`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import mujoco
import numpy as np

from teleop.control.operator_grasps import Key, OperatorGrasp, bench_args, object_key, operator_grasps
from teleop.control.synthetic.grasp_steps import default_grasp, is_tall
from teleop.core.errors import ConfigError, choices
from teleop.tasks.loader import all_specs
from teleop.tasks.objects import KINDS
from teleop.tasks.spec import ObjectSpec

HAND_APERTURE_M = 0.09       # widest thing a closing 22-DoF hand wraps across (palm ~9 cm, fingers ~10 cm)
HAND_MAX_MASS_KG = 1.0       # heaviest load the bench asks a hand to hold (FR3 payload is far above it)
_CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)


@dataclass(frozen=True)
class GraspObject:
    name: str                # the object's name in the first shipped spec that declares it
    task: str                # that spec's id
    kind: str
    params: dict
    extent: tuple[float, float, float]      # (x, y, z) size at yaw 0, metres
    mass: float              # kg
    grasp_from: str | None = None     # the proven task whose script's grasp the bench uses; None: the default
    grasp_args: dict = field(default_factory=dict)   # that grasp step's shape arguments

    @property
    def narrow(self) -> float:
        return min(self.extent[0], self.extent[1])

    @property
    def tall(self) -> bool:
        """Upright and tall (a can, a bottle): pinched by default; a top grasp takes it from above, low (TALL_GRASP)."""
        return is_tall(self.extent)

    @property
    def grasp(self) -> str:
        """The grasp style the bench uses: "top", "top, tall" (from above, low), "pinch" or "side"."""
        style = self.grasp_args.get("style") or ("top" if "part" in self.grasp_args else default_grasp(self.extent))
        low = style == "top" and self.tall and "part" not in self.grasp_args
        return "top, tall" if low else style      # only a whole-object top grasp goes low

    @property
    def yaw(self) -> float:
        """Spawn yaw that lays a long object across the fingers (along y), which curl about y."""
        return math.pi / 2 if self.extent[0] > self.extent[1] else 0.0


def measure(obj: ObjectSpec) -> tuple[tuple[float, float, float], float]:
    """(extent (3,), mass) of one object compiled alone at yaw 0."""
    spec = mujoco.MjSpec()
    body = spec.worldbody.add_body(name=obj.name)
    body.add_freejoint()
    KINDS[obj.kind].build(body, obj.name, obj.params)
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    pts = [data.geom_xpos[g] + (model.geom_aabb[g, :3] + _CORNERS * model.geom_aabb[g, 3:])
           @ data.geom_xmat[g].reshape(3, 3).T for g in range(model.ngeom)
           if model.geom_contype[g] or model.geom_conaffinity[g]]
    allp = np.concatenate(pts)
    ext = allp.max(axis=0) - allp.min(axis=0)
    return (float(ext[0]), float(ext[1]), float(ext[2])), float(model.body_subtreemass[1])


def library(operator: bool = False) -> list[GraspObject]:
    """Every distinct free, non-articulated object of the shipped specs, measured (spec order),
    each with the grasp of it in a proven script (``operator``; else the planner's default for all)."""
    specs = all_specs()
    grasps: dict[Key, OperatorGrasp] = operator_grasps(specs) if operator else {}
    seen: dict[Key, GraspObject] = {}
    for spec in specs:
        for o in spec.objects:
            if o.fixed or KINDS[o.kind].articulated:
                continue
            key = object_key(o)
            if key not in seen:
                extent, mass = measure(o)
                seen[key] = GraspObject(o.name, spec.id, o.kind, dict(o.params), extent, mass)
    return [replace(obj, grasp_from=g.task, grasp_args=bench_args(g, obj.name)) if (g := grasps.get(k)) else obj
            for k, obj in seen.items()]


def holdable(obj: GraspObject) -> bool:
    return obj.narrow <= HAND_APERTURE_M and obj.mass <= HAND_MAX_MASS_KG


def holdable_objects(names: list[str] | None = None, operator: bool = False) -> list[GraspObject]:
    """The holdable objects (``names``: only these, each must be one; ``operator``: see :func:`library`)."""
    objects = [o for o in library(operator) if holdable(o)]
    if not names:
        return objects
    by_name = {o.name: o for o in objects}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise ConfigError(f"not a holdable library object: {choices(unknown)}; holdable objects: "
                          f"{choices(sorted(by_name))}")
    return [by_name[n] for n in dict.fromkeys(names)]
