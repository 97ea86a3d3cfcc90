"""The predicate registry and base class, and the geometry helpers predicates and events share.

A predicate is a small class registered by its type name with typed arguments (:class:`Arg`). It
is built once per compiled task (ids precomputed), ``reset`` at episode start, and called once per
tick with a :class:`Frame`. ``realize(goal)`` puts the simulator into a state where it holds
(used by the goal-driving tests and demos). Every ``tol`` is in metres unless stated.

The modules that register predicates import this one; :mod:`teleop.tasks.predicates` imports them
all, so the registry is complete whoever imports it, and nothing imports back into a registrant.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from teleop.tasks.args import Arg
from teleop.tasks.world import Frame, TaskWorld

PREDICATES: dict[str, type[Predicate]] = {}


def register(cls):
    PREDICATES[cls.type] = cls
    return cls


class Predicate:
    type: ClassVar[str] = ""
    args: ClassVar[dict[str, Arg]] = {}

    def __init__(self, world: TaskWorld, a: dict):
        self.w, self.a = world, a

    def reset(self, data) -> None:
        """Called after every reset (history predicates clear their memory here)."""

    def __call__(self, f: Frame) -> bool:
        raise NotImplementedError

    def realize(self, goal) -> None:
        """Move the simulator so the predicate holds (default: nothing to do)."""

    def violate(self, goal) -> None:
        """Move the simulator so the predicate fails (history predicates: forever)."""
        raise NotImplementedError(f"{self.type} has no violate()")


def build_predicate(world: TaskWorld, spec) -> Predicate:
    from teleop.tasks.spec import PredicateSpec
    assert isinstance(spec, PredicateSpec)
    a = dict(spec.args)
    for k, arg in PREDICATES[spec.type].args.items():
        if arg.kind == "predicate":
            a[k] = build_predicate(world, a[k])
    return PREDICATES[spec.type](world, a)


def local(world: TaskWorld, data, point: np.ndarray, frame_name: str) -> np.ndarray:
    """``point`` (3,) expressed in the body frame of object ``frame_name``."""
    b = world.objects[frame_name].body
    return data.xmat[b].reshape(3, 3).T @ (point - data.xpos[b])


def interior_local(world: TaskWorld, data, point: np.ndarray, container: str) -> np.ndarray:
    """``point`` relative to the container's interior floor centre, in the interior's frame (a
    drawer's interior moves with the drawer, not with the cabinet)."""
    b = world.objects[container].interior_body
    inter = world.objects[container].shape.interior
    return data.xmat[b].reshape(3, 3).T @ (point - data.xpos[b]) - np.asarray(inter.floor)


def in_interior(world: TaskWorld, data, obj: str, container: str, tol: float) -> bool:
    inter = world.objects[container].shape.interior
    p = interior_local(world, data, data.xpos[world.objects[obj].body], container)
    hx, hy, hz = inter.half
    if not (-tol <= p[2] <= 2 * hz + tol):
        return False
    if inter.round:
        return p[0] ** 2 + p[1] ** 2 <= (hx + tol) ** 2
    return abs(p[0]) <= hx + tol and abs(p[1]) <= hy + tol


def tilt(data, body: int) -> float:
    """Angle (rad) between the body's z axis and world z."""
    return float(np.arccos(np.clip(data.xmat[body][8], -1.0, 1.0)))
