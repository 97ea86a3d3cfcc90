"""Probing a shipped task's state in tests: a reset runtime with its goal driver, one predicate
built with its defaults, whether it holds now, and a few held ticks of physics."""
from __future__ import annotations

import functools

import mujoco

from teleop.tasks import TaskRuntime, build_task
from teleop.tasks.goal import Goal
from teleop.tasks.predicates import PREDICATES
from teleop.tasks.world import Frame


@functools.cache
def task(task_id):
    return build_task(task_id)


def start(task_id):
    """The task reset for seed 0, episode 0, and its goal driver."""
    rt = TaskRuntime(task(task_id))
    rt.reset(0, 0)
    return rt, Goal(rt)


def pred(rt, type_, **args):
    """Predicate ``type_`` on ``rt``'s world, its arguments' defaults overridden by ``args``."""
    p = PREDICATES[type_](rt.world, {**{k: a.default for k, a in PREDICATES[type_].args.items()}, **args})
    p.reset(rt.sim.data)
    return p


def holds(rt, p) -> bool:
    mujoco.mj_forward(rt.sim.model, rt.sim.data)
    return bool(p(Frame(rt.world, rt.sim.data, 0)))


def settle(rt, ticks=25):
    """``ticks`` control ticks holding the robot where it is."""
    q = rt.sim.joint_positions
    for _ in range(ticks):
        rt.step(q)
