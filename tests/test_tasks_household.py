"""The household predicates and fixtures the generalization tasks added: ``on_tier``, ``standing``,
``inside_distinct``, ``hanging``, and container volumes that move with a drawer."""
from __future__ import annotations

import numpy as np

import task_probe as tp
from teleop.tasks.predicates_geom import max_matching


def test_max_matching_counts_distinct_containers():
    assert max_matching([[True, True], [True, False]]) == 2        # the second object takes the first cup
    assert max_matching([[True, False], [True, False]]) == 1       # both in one cup
    assert max_matching([[False, False], [False, False]]) == 0


def test_inside_distinct_needs_one_object_per_container():
    rt, g = tp.start("drop_two_spoons_from_tray_into_two_cups")
    args = dict(objects=["spoon_1", "spoon_2"], containers=["cup_left", "cup_right"], tol=0.02)
    one, two = tp.pred(rt, "inside_distinct", n=1, **args), tp.pred(rt, "inside_distinct", n=2, **args)
    assert not tp.holds(rt, one) and not tp.holds(rt, two)
    g.put_inside("spoon_1", "cup_right")
    g.put_inside("spoon_2", "cup_right")
    assert tp.holds(rt, one) and not tp.holds(rt, two)                  # two spoons, one cup
    g.put_inside("spoon_2", "cup_left")
    assert tp.holds(rt, one) and tp.holds(rt, two)                      # either spoon in either cup


def test_on_tier_any_tier_a_given_tier_and_not_beside_it():
    rt, g = tp.start("load_three_canned_food_onto_dish_rack")
    cans = ["can_1", "can_2", "can_3"]
    preds = [tp.pred(rt, "on_tier", object=c, shelf="dish_rack") for c in cans]
    assert not any(tp.holds(rt, p) for p in preds)
    for p in preds:
        p.realize(g)
    assert all(tp.holds(rt, p) for p in preds)
    tiers = [[tp.pred(rt, "on_tier", object=c, shelf="dish_rack", tier=k) for k in range(3)] for c in cans]
    assert sorted(next(k for k in range(3) if tp.holds(rt, tiers[i][k])) for i in range(3)) == [0, 1, 2]
    tp.settle(rt)                                        # the cans stand where they were set
    assert all(tp.holds(rt, p) for p in preds)
    p = rt.world.pos(rt.sim.data, "can_1").copy()
    g.move("can_1", (p[0], p[1] + 0.3, p[2]))        # at a tier's height but off its top
    assert not tp.holds(rt, preds[0])


def test_standing_bottle_neck_up_on_the_table():
    rt, g = tp.start("stand_two_wine_bottles_upright")
    p = tp.pred(rt, "standing", object="wine_bottle_1")
    assert not tp.holds(rt, p)                           # it starts lying on its side
    p.realize(g)
    assert tp.holds(rt, p)
    tp.settle(rt)
    assert tp.holds(rt, p)                               # it stays up under physics
    o = rt.world.objects["wine_bottle_1"]
    rt.sim.data.qpos[o.qadr + 3:o.qadr + 7] = [np.cos(np.pi / 4), 0, np.sin(np.pi / 4), 0]   # neck down
    assert not tp.holds(rt, p)
    g.lift("wine_bottle_1", 0.1)                       # upright in the air
    p.realize(g)
    g.lift("wine_bottle_1", 0.1)
    assert not tp.holds(rt, p)


def test_hanging_mug_on_the_tree_and_not_on_the_table_or_in_a_hand():
    rt, g = tp.start("hang_mugs_on_tree")
    p1, p2 = (tp.pred(rt, "hanging", object=m, support="mug_tree") for m in ("mug_1", "mug_2"))
    assert not tp.holds(rt, p1) and not tp.holds(rt, p2)
    p1.realize(g)
    p2.realize(g)
    assert tp.holds(rt, p1) and tp.holds(rt, p2)
    a, b = rt.world.pos(rt.sim.data, "mug_1"), rt.world.pos(rt.sim.data, "mug_2")
    assert np.linalg.norm(a - b) > 0.08                # on different pegs
    tp.settle(rt)
    assert tp.holds(rt, p1) and tp.holds(rt, p2)           # the handles keep them on the pegs
    g.into_hand("mug_1", "right")
    assert not tp.holds(rt, p1)                          # held, not hanging
    g.put_on_table("mug_1")
    assert not tp.holds(rt, p1)


def test_a_drawer_volume_moves_with_the_drawer():
    rt, g = tp.start("store_condiments_in_short_cabinet")
    inside = tp.pred(rt, "inside", object="ketchup", container="short_cabinet")
    g.set_joint("short_cabinet", 1.0)
    g.put_inside("ketchup", "short_cabinet")
    assert tp.holds(rt, inside)
    cab = rt.world.pos(rt.sim.data, "short_cabinet")
    assert rt.world.pos(rt.sim.data, "ketchup")[0] < cab[0] - 0.1      # in the pulled-out drawer
    g.set_joint("short_cabinet", 0.0)                  # the drawer slides back without it
    assert not tp.holds(rt, inside)


def test_rings_start_threaded_on_their_rods():
    rt, _ = tp.start("rethread_bagel_and_donut_onto_middle_rod")
    assert tp.holds(rt, tp.pred(rt, "threaded", object="bagel", rod="left_rod"))
    assert tp.holds(rt, tp.pred(rt, "threaded", object="donut", rod="right_rod"))
    assert not tp.holds(rt, tp.pred(rt, "threaded", object="bagel", rod="middle_rod"))
