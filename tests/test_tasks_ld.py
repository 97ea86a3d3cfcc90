"""The predicates and kinds the limited-demonstration tasks added: ``rests_inside`` (with its
free-spot goal), ``stands_on``, ``bridges``, ``been_on``, ``on_tier_count``, ``inside_apart``; a
drawer's contents move with it when the goal driver closes it; stacked drawer sections."""
from __future__ import annotations

import functools

import mujoco
import pytest
import numpy as np

from teleop.tasks import TaskRuntime, build_task
from teleop.tasks.goal import Goal, drive_to_goal
from teleop.tasks.predicates import PREDICATES
from teleop.tasks.world import TABLE_TOP, Frame


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


def _pos(rt, name):
    return rt.world.pos(rt.sim.data, name).copy()


def test_rests_inside_packs_side_by_side_and_needs_rest_and_flatness():
    rt, g = _start("put_three_eggs_into_tupperware")
    eggs = ["egg_1", "egg_2", "egg_3"]
    preds = [_pred(rt, "rests_inside", object=e, container="tupperware") for e in eggs]
    assert not any(_holds(rt, p) for p in preds)
    for p in preds:
        p.realize(g)
    assert all(_holds(rt, p) for p in preds)
    xy = [_pos(rt, e)[:2] for e in eggs]
    assert min(np.linalg.norm(a - b) for i, a in enumerate(xy) for b in xy[i + 1:]) > 0.056   # not on each other
    _settle(rt)
    assert all(_holds(rt, p) for p in preds)               # they stay put under physics
    o = rt.world.objects["egg_1"]
    rt.sim.data.qvel[o.vadr] = 0.3                          # still moving: not resting yet
    assert not _holds(rt, preds[0])
    rt.sim.data.qvel[o.vadr] = 0.0
    g.put_on_table("egg_1", (0.4, 0.3))
    assert not _holds(rt, preds[0])


def test_rests_inside_lying_flat():
    rt, g = _start("arrange_three_bagels_in_oven_tray")
    flat = _pred(rt, "rests_inside", object="bagel_1", container="oven_tray", max_tilt=0.35)
    anyway = _pred(rt, "rests_inside", object="bagel_1", container="oven_tray")
    flat.realize(g)
    assert _holds(rt, flat) and _holds(rt, anyway)
    g.set_tilt("bagel_1", 1.2)                              # propped on its edge
    assert not _holds(rt, flat) and _holds(rt, anyway)


def test_stands_on_two_piers_apart_and_upright():
    rt, g = _start("assemble_arch_bridge")
    a, b = (_pred(rt, "stands_on", object=p, support="base") for p in ("pier_a", "pier_b"))
    assert not _holds(rt, a) and not _holds(rt, b)       # they start lying on the table
    a.realize(g)
    b.realize(g)
    assert _holds(rt, a) and _holds(rt, b)
    assert np.linalg.norm(_pos(rt, "pier_a")[:2] - _pos(rt, "pier_b")[:2]) > 0.08
    _settle(rt)
    assert _holds(rt, a) and _holds(rt, b)
    assert abs(rt.sim.data.xmat[rt.world.objects["pier_a"].body][6]) > 0.9    # its long side (x) up
    g.set_tilt("pier_a", 1.4)                               # knocked over onto the base
    assert not _holds(rt, a)


def test_bridges_needs_both_piers_and_no_table():
    rt, g = _start("assemble_arch_bridge")
    for p in ("pier_a", "pier_b"):
        _pred(rt, "stands_on", object=p, support="base").realize(g)
    deck = _pred(rt, "bridges", object="deck", supports=["pier_a", "pier_b"])
    assert not _holds(rt, deck)
    deck.realize(g)
    assert _holds(rt, deck)
    _settle(rt)
    assert _holds(rt, deck)                                 # the deck stays across the piers
    p = _pos(rt, "deck")
    g.move("deck", (p[0], p[1] + 0.1, p[2]))                # slid along, off one pier
    assert not _holds(rt, deck)
    g.put_on_table("deck", (0.4, 0.0))
    assert not _holds(rt, deck)


def test_been_on_remembers_a_visit():
    rt, g = _start("rotate_two_cubes_around_plates")
    visited = _pred(rt, "been_on", object="cube_a", support="plate_3")
    assert not _holds(rt, visited)
    g.put_on("cube_a", "plate_3")
    assert _holds(rt, visited)
    g.put_on("cube_a", "plate_1")
    assert _holds(rt, visited)                              # history: it was there once
    visited.reset(rt.sim.data)
    assert not _holds(rt, visited)


def test_on_tier_count_one_orange_per_tier_either_way():
    rt, g = _start("place_two_oranges_on_shelf_tiers")
    both = ["orange_1", "orange_2"]
    upper = _pred(rt, "on_tier_count", objects=both, shelf="shelf", tier=1, n=1)
    lower = _pred(rt, "on_tier_count", objects=both, shelf="shelf", tier=0, n=1)
    assert not _holds(rt, upper) and not _holds(rt, lower)
    _pred(rt, "on_tier", object="orange_2", shelf="shelf", tier=1).realize(g)     # the second on the upper tier
    assert _holds(rt, upper) and not _holds(rt, lower)
    lower.realize(g)                                        # the other orange (not the one upstairs) goes down
    assert _holds(rt, upper) and _holds(rt, lower)
    assert _pos(rt, "orange_1")[2] < _pos(rt, "orange_2")[2]
    _settle(rt)
    assert _holds(rt, upper) and _holds(rt, lower)


def test_inside_apart_keeps_the_kinds_in_different_bowls():
    rt, g = _start("sort_pepper_and_onion_into_two_bowls")
    bowls = ["bowl_1", "bowl_2"]
    pepper = _pred(rt, "inside_apart", object="pepper_1", containers=bowls, apart_from=["onion_1", "onion_2"])
    onion = _pred(rt, "inside_apart", object="onion_1", containers=bowls, apart_from=["pepper_1", "pepper_2"])
    g.put_inside("pepper_1", "bowl_2")
    assert _holds(rt, pepper) and not _holds(rt, onion)
    onion.realize(g)                                        # into the bowl without a pepper
    assert _holds(rt, pepper) and _holds(rt, onion)
    assert rt.world.pos(rt.sim.data, "onion_1")[1] > rt.world.pos(rt.sim.data, "pepper_1")[1]
    g.put_inside("onion_2", "bowl_2")                       # an onion joins the pepper: not sorted
    assert not _holds(rt, pepper) and _holds(rt, onion)


def test_closing_a_drawer_in_the_goal_carries_what_is_in_it():
    """``joint_closed``'s goal slides the drawer's contents in with it (a bare ``set_joint`` leaves
    them behind: tests/test_tasks_household.py)."""
    rt, g = _start("store_items_in_white_cabinet")
    inside = _pred(rt, "rests_inside", object="cheese", container="white_cabinet_middle")
    g.set_joint("white_cabinet_middle", 0.8)
    inside.realize(g)
    x_open = _pos(rt, "cheese")[0]
    _pred(rt, "joint_closed", fixture="white_cabinet_middle").realize(g)
    assert _holds(rt, inside)
    assert _pos(rt, "cheese")[0] > x_open + 0.1             # went in with the drawer
    _settle(rt)
    assert _holds(rt, inside)


def test_stacked_drawer_sections_and_the_tiered_basket():
    rt, _ = _start("store_items_in_white_cabinet")
    w, d = rt.world, rt.sim.data
    mid, top = w.objects["white_cabinet_middle"], w.objects["white_cabinet_top"]
    assert abs(d.xpos[top.body][2] - (d.xpos[mid.body][2] + mid.shape.top)) < 1e-9      # stands on the middle one
    assert mid.joint_qadr != top.joint_qadr                   # two drawers, each its own joint
    rt, g = _start("pack_three_avocados_into_tiered_basket")
    tiers = rt.world.objects["tiered_basket"].shape.tiers
    assert len(tiers) == 2 and tiers[1][4] > tiers[0][4] and tiers[1][0] > tiers[0][0]   # steps up, away
    p = _pred(rt, "on_tier", object="avocado_1", shelf="tiered_basket", tier=1)
    p.realize(g)
    _settle(rt)
    assert _holds(rt, p) and rt.world.bottom_z(rt.sim.data, "avocado_1") > TABLE_TOP + tiers[1][4] - 0.01


@pytest.mark.parametrize("task_id", ["assemble_arch_bridge", "arrange_three_bagels_in_oven_tray",
                                     "put_three_eggs_into_tupperware", "pack_three_avocados_into_tiered_basket",
                                     "place_two_oranges_on_shelf_tiers", "rotate_two_cubes_around_plates",
                                     "store_items_in_white_cabinet", "insert_items_into_shelf"])
def test_goal_state_survives_a_second_of_physics(task_id):
    """The constructed goal is a physical state: things set down side by side stay where they are."""
    rt = TaskRuntime(_task(task_id))
    rt.reset(0, 0)
    assert drive_to_goal(rt).progress == 100.0
    _settle(rt)
    assert rt.last.progress == 100.0 and rt.last.strict_success == 1
