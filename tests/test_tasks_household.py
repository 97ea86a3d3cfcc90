"""The household predicates and fixtures the generalization tasks added: ``on_tier``, ``standing``,
``inside_distinct``, ``hanging``, and container volumes that move with a drawer."""
from __future__ import annotations

import functools

import mujoco
import numpy as np

from teleop.tasks import TaskRuntime, build_task
from teleop.tasks.goal import Goal
from teleop.tasks.predicates import PREDICATES
from teleop.tasks.predicates_geom import max_matching
from teleop.tasks.world import Frame


@functools.cache
def _task(task_id):
    return build_task(task_id)


def _start(task_id):
    rt = TaskRuntime(_task(task_id))
    rt.reset(0, 0)
    return rt, Goal(rt)


def _pred(rt, type_, **args):
    p = PREDICATES[type_](rt.world, {**{k: a.default for k, a in PREDICATES[type_].args.items()}, **args})
    p.reset(rt.sim.data)
    return p


def _holds(rt, p) -> bool:
    mujoco.mj_forward(rt.sim.model, rt.sim.data)
    return bool(p(Frame(rt.world, rt.sim.data, 0)))


def _settle(rt, ticks=25):
    q = rt.sim.joint_positions
    for _ in range(ticks):
        rt.step(q)


def test_max_matching_counts_distinct_containers():
    assert max_matching([[True, True], [True, False]]) == 2        # the second object takes the first cup
    assert max_matching([[True, False], [True, False]]) == 1       # both in one cup
    assert max_matching([[False, False], [False, False]]) == 0


def test_inside_distinct_needs_one_object_per_container():
    rt, g = _start("drop_two_spoons_from_tray_into_two_cups")
    args = dict(objects=["spoon_1", "spoon_2"], containers=["cup_left", "cup_right"], tol=0.02)
    one, two = _pred(rt, "inside_distinct", n=1, **args), _pred(rt, "inside_distinct", n=2, **args)
    assert not _holds(rt, one) and not _holds(rt, two)
    g.put_inside("spoon_1", "cup_right")
    g.put_inside("spoon_2", "cup_right")
    assert _holds(rt, one) and not _holds(rt, two)                  # two spoons, one cup
    g.put_inside("spoon_2", "cup_left")
    assert _holds(rt, one) and _holds(rt, two)                      # either spoon in either cup


def test_on_tier_any_tier_a_given_tier_and_not_beside_it():
    rt, g = _start("load_three_canned_food_onto_dish_rack")
    cans = ["can_1", "can_2", "can_3"]
    preds = [_pred(rt, "on_tier", object=c, shelf="dish_rack") for c in cans]
    assert not any(_holds(rt, p) for p in preds)
    for p in preds:
        p.realize(g)
    assert all(_holds(rt, p) for p in preds)
    tiers = [[_pred(rt, "on_tier", object=c, shelf="dish_rack", tier=k) for k in range(3)] for c in cans]
    assert sorted(next(k for k in range(3) if _holds(rt, tiers[i][k])) for i in range(3)) == [0, 1, 2]
    _settle(rt)                                        # the cans stand where they were set
    assert all(_holds(rt, p) for p in preds)
    p = rt.world.pos(rt.sim.data, "can_1").copy()
    g.move("can_1", (p[0], p[1] + 0.3, p[2]))        # at a tier's height but off its top
    assert not _holds(rt, preds[0])


def test_standing_bottle_neck_up_on_the_table():
    rt, g = _start("stand_two_wine_bottles_upright")
    p = _pred(rt, "standing", object="wine_bottle_1")
    assert not _holds(rt, p)                           # it starts lying on its side
    p.realize(g)
    assert _holds(rt, p)
    _settle(rt)
    assert _holds(rt, p)                               # it stays up under physics
    o = rt.world.objects["wine_bottle_1"]
    rt.sim.data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]   # neck down
    assert not _holds(rt, p)
    g.lift("wine_bottle_1", 0.1)                       # upright in the air
    p.realize(g)
    g.lift("wine_bottle_1", 0.1)
    assert not _holds(rt, p)


def test_hanging_mug_on_the_tree_and_not_on_the_table_or_in_a_hand():
    rt, g = _start("hang_mugs_on_tree")
    p1, p2 = (_pred(rt, "hanging", object=m, support="mug_tree") for m in ("mug_1", "mug_2"))
    assert not _holds(rt, p1) and not _holds(rt, p2)
    p1.realize(g)
    p2.realize(g)
    assert _holds(rt, p1) and _holds(rt, p2)
    a, b = rt.world.pos(rt.sim.data, "mug_1"), rt.world.pos(rt.sim.data, "mug_2")
    assert np.linalg.norm(a - b) > 0.08                # on different pegs
    _settle(rt)
    assert _holds(rt, p1) and _holds(rt, p2)           # the handles keep them on the pegs
    g.into_hand("mug_1", "right")
    assert not _holds(rt, p1)                          # held, not hanging
    g.put_on_table("mug_1")
    assert not _holds(rt, p1)


def test_a_drawer_volume_moves_with_the_drawer():
    rt, g = _start("store_condiments_in_short_cabinet")
    inside = _pred(rt, "inside", object="ketchup", container="short_cabinet")
    g.set_joint("short_cabinet", 1.0)
    g.put_inside("ketchup", "short_cabinet")
    assert _holds(rt, inside)
    cab = rt.world.pos(rt.sim.data, "short_cabinet")
    assert rt.world.pos(rt.sim.data, "ketchup")[0] < cab[0] - 0.1      # in the pulled-out drawer
    g.set_joint("short_cabinet", 0.0)                  # the drawer slides back without it
    assert not _holds(rt, inside)


def test_rings_start_threaded_on_their_rods():
    rt, _ = _start("rethread_bagel_and_donut_onto_middle_rod")
    assert _holds(rt, _pred(rt, "threaded", object="bagel", rod="left_rod"))
    assert _holds(rt, _pred(rt, "threaded", object="donut", rod="right_rod"))
    assert not _holds(rt, _pred(rt, "threaded", object="bagel", rod="middle_rod"))
