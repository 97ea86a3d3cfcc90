"""The predicates and kinds the limited-demonstration tasks added: ``rests_inside`` (with its
free-spot goal), ``stands_on``, ``bridges``, ``been_on``, ``on_tier_count``, ``inside_apart``; a
drawer's contents move with it when the goal driver closes it; stacked drawer sections."""
from __future__ import annotations

import pytest
import numpy as np

import task_probe as tp
from teleop.tasks import TaskRuntime
from teleop.tasks.goal import drive_to_goal
from teleop.tasks.world import TABLE_TOP


def _pos(rt, name):
    return rt.world.pos(rt.sim.data, name).copy()


def test_rests_inside_packs_side_by_side_and_needs_rest_and_flatness():
    rt, g = tp.start("put_three_eggs_into_tupperware")
    eggs = ["egg_1", "egg_2", "egg_3"]
    preds = [tp.pred(rt, "rests_inside", object=e, container="tupperware") for e in eggs]
    assert not any(tp.holds(rt, p) for p in preds)
    for p in preds:
        p.realize(g)
    assert all(tp.holds(rt, p) for p in preds)
    xy = [_pos(rt, e)[:2] for e in eggs]
    assert min(np.linalg.norm(a - b) for i, a in enumerate(xy) for b in xy[i + 1:]) > 0.056   # not on each other
    tp.settle(rt)
    assert all(tp.holds(rt, p) for p in preds)               # they stay put under physics
    o = rt.world.objects["egg_1"]
    rt.sim.data.qvel[o.vadr] = 0.3                          # still moving: not resting yet
    assert not tp.holds(rt, preds[0])
    rt.sim.data.qvel[o.vadr] = 0.0
    g.put_on_table("egg_1", (0.4, 0.3))
    assert not tp.holds(rt, preds[0])


def test_rests_inside_lying_flat():
    rt, g = tp.start("arrange_three_bagels_in_oven_tray")
    flat = tp.pred(rt, "rests_inside", object="bagel_1", container="oven_tray", max_tilt=0.35)
    anyway = tp.pred(rt, "rests_inside", object="bagel_1", container="oven_tray")
    flat.realize(g)
    assert tp.holds(rt, flat) and tp.holds(rt, anyway)
    g.set_tilt("bagel_1", 1.2)                              # propped on its edge
    assert not tp.holds(rt, flat) and tp.holds(rt, anyway)


def test_stands_on_two_piers_apart_and_upright():
    rt, g = tp.start("assemble_arch_bridge")
    a, b = (tp.pred(rt, "stands_on", object=p, support="base") for p in ("pier_a", "pier_b"))
    assert not tp.holds(rt, a) and not tp.holds(rt, b)       # they start lying on the table
    a.realize(g)
    b.realize(g)
    assert tp.holds(rt, a) and tp.holds(rt, b)
    assert np.linalg.norm(_pos(rt, "pier_a")[:2] - _pos(rt, "pier_b")[:2]) > 0.08
    tp.settle(rt)
    assert tp.holds(rt, a) and tp.holds(rt, b)
    assert abs(rt.sim.data.xmat[rt.world.objects["pier_a"].body][6]) > 0.9    # its long side (x) up
    g.set_tilt("pier_a", 1.4)                               # knocked over onto the base
    assert not tp.holds(rt, a)


def test_bridges_needs_both_piers_and_no_table():
    rt, g = tp.start("assemble_arch_bridge")
    for p in ("pier_a", "pier_b"):
        tp.pred(rt, "stands_on", object=p, support="base").realize(g)
    deck = tp.pred(rt, "bridges", object="deck", supports=["pier_a", "pier_b"])
    assert not tp.holds(rt, deck)
    deck.realize(g)
    assert tp.holds(rt, deck)
    tp.settle(rt)
    assert tp.holds(rt, deck)                                 # the deck stays across the piers
    p = _pos(rt, "deck")
    g.move("deck", (p[0], p[1] + 0.1, p[2]))                # slid along, off one pier
    assert not tp.holds(rt, deck)
    g.put_on_table("deck", (0.4, 0.0))
    assert not tp.holds(rt, deck)


def test_been_on_remembers_a_visit():
    rt, g = tp.start("rotate_two_cubes_around_plates")
    visited = tp.pred(rt, "been_on", object="cube_a", support="plate_3")
    assert not tp.holds(rt, visited)
    g.put_on("cube_a", "plate_3")
    assert tp.holds(rt, visited)
    g.put_on("cube_a", "plate_1")
    assert tp.holds(rt, visited)                              # history: it was there once
    visited.reset(rt.sim.data)
    assert not tp.holds(rt, visited)


def test_on_tier_count_one_orange_per_tier_either_way():
    rt, g = tp.start("place_two_oranges_on_shelf_tiers")
    both = ["orange_1", "orange_2"]
    upper = tp.pred(rt, "on_tier_count", objects=both, shelf="shelf", tier=1, n=1)
    lower = tp.pred(rt, "on_tier_count", objects=both, shelf="shelf", tier=0, n=1)
    assert not tp.holds(rt, upper) and not tp.holds(rt, lower)
    tp.pred(rt, "on_tier", object="orange_2", shelf="shelf", tier=1).realize(g)     # the second on the upper tier
    assert tp.holds(rt, upper) and not tp.holds(rt, lower)
    lower.realize(g)                                        # the other orange (not the one upstairs) goes down
    assert tp.holds(rt, upper) and tp.holds(rt, lower)
    assert _pos(rt, "orange_1")[2] < _pos(rt, "orange_2")[2]
    tp.settle(rt)
    assert tp.holds(rt, upper) and tp.holds(rt, lower)


def test_inside_apart_keeps_the_kinds_in_different_bowls():
    rt, g = tp.start("sort_pepper_and_onion_into_two_bowls")
    bowls = ["bowl_1", "bowl_2"]
    pepper = tp.pred(rt, "inside_apart", object="pepper_1", containers=bowls, apart_from=["onion_1", "onion_2"])
    onion = tp.pred(rt, "inside_apart", object="onion_1", containers=bowls, apart_from=["pepper_1", "pepper_2"])
    g.put_inside("pepper_1", "bowl_2")
    assert tp.holds(rt, pepper) and not tp.holds(rt, onion)
    onion.realize(g)                                        # into the bowl without a pepper
    assert tp.holds(rt, pepper) and tp.holds(rt, onion)
    assert rt.world.pos(rt.sim.data, "onion_1")[1] > rt.world.pos(rt.sim.data, "pepper_1")[1]
    g.put_inside("onion_2", "bowl_2")                       # an onion joins the pepper: not sorted
    assert not tp.holds(rt, pepper) and tp.holds(rt, onion)


def test_closing_a_drawer_in_the_goal_carries_what_is_in_it():
    """``joint_closed``'s goal slides the drawer's contents in with it (a bare ``set_joint`` leaves
    them behind: tests/test_tasks_household.py)."""
    rt, g = tp.start("store_items_in_white_cabinet")
    inside = tp.pred(rt, "rests_inside", object="cheese", container="white_cabinet_middle")
    g.set_joint("white_cabinet_middle", 0.8)
    inside.realize(g)
    x_open = _pos(rt, "cheese")[0]
    tp.pred(rt, "joint_closed", fixture="white_cabinet_middle").realize(g)
    assert tp.holds(rt, inside)
    assert _pos(rt, "cheese")[0] > x_open + 0.1             # went in with the drawer
    tp.settle(rt)
    assert tp.holds(rt, inside)


def test_stacked_drawer_sections_and_the_tiered_basket():
    rt, _ = tp.start("store_items_in_white_cabinet")
    w, d = rt.world, rt.sim.data
    mid, top = w.objects["white_cabinet_middle"], w.objects["white_cabinet_top"]
    assert abs(d.xpos[top.body][2] - (d.xpos[mid.body][2] + mid.shape.top)) < 1e-9      # stands on the middle one
    assert mid.joint_qadr != top.joint_qadr                   # two drawers, each its own joint
    rt, g = tp.start("pack_three_avocados_into_tiered_basket")
    tiers = rt.world.objects["tiered_basket"].shape.tiers
    assert len(tiers) == 2 and tiers[1][4] > tiers[0][4] and tiers[1][0] > tiers[0][0]   # steps up, away
    p = tp.pred(rt, "on_tier", object="avocado_1", shelf="tiered_basket", tier=1)
    p.realize(g)
    tp.settle(rt)
    assert tp.holds(rt, p) and rt.world.bottom_z(rt.sim.data, "avocado_1") > TABLE_TOP + tiers[1][4] - 0.01


@pytest.mark.parametrize("task_id", ["assemble_arch_bridge", "arrange_three_bagels_in_oven_tray",
                                     "put_three_eggs_into_tupperware", "pack_three_avocados_into_tiered_basket",
                                     "place_two_oranges_on_shelf_tiers", "rotate_two_cubes_around_plates",
                                     "store_items_in_white_cabinet", "insert_items_into_shelf"])
def test_goal_state_survives_a_second_of_physics(task_id):
    """The constructed goal is a physical state: things set down side by side stay where they are."""
    rt = TaskRuntime(tp.task(task_id))
    rt.reset(0, 0)
    assert drive_to_goal(rt).progress == 100.0
    tp.settle(rt)
    assert rt.last.progress == 100.0 and rt.last.strict_success == 1
