"""The kinds and predicates the instruction-following, long-horizon and memory tasks added:
``watering`` (a can's spout over a plant), ``fired_after`` (one event only after another reached a
count), flared nesting ``bowl`` s, the ``drying_rack``, and goal states that stay put under physics."""
from __future__ import annotations

import mujoco
import numpy as np
import pytest

import task_probe as tp
from teleop.tasks import TaskRuntime
from teleop.tasks.goal import drive_to_goal
from teleop.tasks.predicates import PREDICATES
from teleop.tasks.world import Frame

NEW_TASKS = [
    "pack_two_mangoes_into_two_baskets", "put_jam_and_lemon_from_tray_onto_shelf",
    "take_milk_and_lemon_from_shelf_into_tray", "take_teapot_into_tray_then_put_back_on_shelf",
    "take_jam_and_lemon_from_shelf_into_tray", "take_jam_into_tray_and_put_milk_on_shelf",
    "take_milk_and_orange_from_shelf_into_tray", "take_teapot_into_tray_and_put_orange_on_shelf",
    "thread_bagel_and_donut_onto_middle_and_side_rods", "thread_bagel_and_donut_onto_side_rods",
    "water_one_plant_each_hand", "water_two_plants_each_hand",
    "restock_fridge_with_condiments_and_bottles", "recycle_five_cans_into_bin", "sort_mixed_food_into_boxes",
    "place_strainer_with_tomatoes_and_spoon_on_dish_rack", "nest_four_bowls", "stack_sugar_cubes",
    "press_button_then_grasp_mug", "swap_candles_between_bowls", "swap_fruits_between_bowls",
    "press_red_button_then_blue_button",
]
# several objects set into one container or onto one support: the goal state must be physical
CROWDED = ["restock_fridge_with_condiments_and_bottles", "recycle_five_cans_into_bin", "sort_mixed_food_into_boxes",
           "place_strainer_with_tomatoes_and_spoon_on_dish_rack", "nest_four_bowls", "stack_sugar_cubes",
           "swap_candles_between_bowls", "swap_fruits_between_bowls", "put_jam_and_lemon_from_tray_onto_shelf",
           "take_jam_into_tray_and_put_milk_on_shelf", "take_teapot_into_tray_and_put_orange_on_shelf",
           "press_button_then_grasp_mug"]


def _deep_contacts(rt, depth=0.003):
    w, d = rt.world, rt.sim.data
    n = len(rt.spec.objects)
    return [(w.owner[c.geom[0]], w.owner[c.geom[1]]) for c in d.contact[:d.ncon]
            if c.dist < -depth and (w.owner[c.geom[0]] < n or w.owner[c.geom[1]] < n)]


def test_the_new_tasks_ship():
    from teleop.tasks import spec_paths
    shipped = {p.stem for p in spec_paths()}
    assert set(NEW_TASKS) <= shipped and set(CROWDED) <= set(NEW_TASKS)


def test_watering_needs_the_spout_over_the_plant_and_pointing_down():
    rt, g = tp.start("water_one_plant_each_hand")
    right = tp.pred(rt, "watering", object="right_can", target="right_plant")
    other = tp.pred(rt, "watering", object="right_can", target="plant_2")
    assert not tp.holds(rt, right) and not tp.holds(rt, other)
    right.realize(g)
    assert tp.holds(rt, right) and not tp.holds(rt, other)
    o = rt.world.objects["right_can"]
    tip = rt.sim.data.site_xpos[rt.sim.model.site("right_can_spout").id].copy()
    rt.sim.data.qpos[o.qadr + 3:o.qadr + 7] = [1, 0, 0, 0]           # upright over the plant: not pouring
    mujoco.mj_kinematics(rt.sim.model, rt.sim.data)
    shift = tip - rt.sim.data.site_xpos[rt.sim.model.site("right_can_spout").id]
    g.move("right_can", rt.world.pos(rt.sim.data, "right_can") + shift)
    assert not tp.holds(rt, right)
    other.realize(g)                                                  # pouring on the neighbour instead
    assert tp.holds(rt, other) and not tp.holds(rt, right)


def test_a_watering_can_stands_still_on_the_table():
    rt, _ = tp.start("water_two_plants_each_hand")
    start = rt.world.pos(rt.sim.data, "left_can").copy()
    q = rt.sim.joint_positions
    for _ in range(25):
        rt.step(q)
    assert np.linalg.norm(rt.world.pos(rt.sim.data, "left_can") - start) < 0.005
    assert PREDICATES["upright"](rt.world, {"object": "left_can", "max_tilt": 0.05})(Frame(rt.world, rt.sim.data, 0))


def test_fired_after_counts_the_blue_press_only_after_ten_red_ones():
    def scored(rt):                           # the task's own instance: the scorer evaluates it every tick
        return next(p for p in rt.scorer.preds[1] if p.type == "fired_after")

    rt, g = tp.start("press_red_button_then_blue_button")
    g.press("red_button", 10)
    assert not tp.holds(rt, scored(rt))         # the blue button has not been pressed yet
    g.press("blue_button", 1)
    assert tp.holds(rt, scored(rt))

    rt, g = tp.start("press_red_button_then_blue_button")
    g.press("blue_button", 1)                 # too early ...
    g.press("red_button", 10)
    assert not tp.holds(rt, scored(rt))         # ... and that stays so, however it goes on
    g.press("blue_button", 1)
    assert not tp.holds(rt, scored(rt))


def test_pressing_blue_early_fails_the_memory_task():
    rt, g = tp.start("press_red_button_then_blue_button")
    g.touch("blue_button", "right")
    g.press("blue_button", 1)
    final = drive_to_goal(rt)                 # then the red ten times: the blue press came first
    assert not final.holds[1] and final.progress == 50.0 and final.strict_success == 0


def test_nested_bowls_stand_on_each_others_floors():
    rt, g = tp.start("nest_four_bowls")
    drive_to_goal(rt)
    z = [rt.world.bottom_z(rt.sim.data, b) for b in ("bowl_13cm", "bowl_12cm", "bowl_11_5cm", "bowl_10cm")]
    assert all(0.001 < hi - lo < 0.006 for lo, hi in zip(z, z[1:]))  # each on the floor of the one below


@pytest.mark.parametrize("task_id", NEW_TASKS)
def test_twenty_placements_without_interpenetration(task_id):
    rt = TaskRuntime(tp.task(task_id))
    for seed in range(20):
        rt.reset(seed_index=seed, episode_index=seed % 3)
        assert not _deep_contacts(rt), f"seed {seed}"


@pytest.mark.parametrize("task_id", CROWDED)
def test_goal_state_holds_under_one_second_of_physics(task_id):
    """Objects the goal sets into one container / onto one support get free spots: nothing overlaps,
    and one second of physics keeps progress 100 and strict success."""
    rt, _ = tp.start(task_id)
    drive_to_goal(rt)
    assert not _deep_contacts(rt)
    q = rt.sim.joint_positions
    for _ in range(25):
        rt.step(q)
    assert rt.last.progress == 100.0 and rt.last.strict_success == 1, rt.last.holds


def _driven(rt, subtask=0):
    return next(p for p in rt.scorer.preds[subtask] if p.type == "driven_with")


def test_a_nail_counts_only_when_its_hammer_drives_it():
    rt, g = tp.start("hammer_one_nail_each_hand")
    last = drive_to_goal(rt, upto=1)                        # the hammer on the nail as it goes home
    assert last.latched[0] and _driven(rt).done


def test_a_nail_pressed_home_by_hand_does_not_count_even_with_the_hammer_laid_on_it_after():
    rt, g = tp.start("hammer_one_nail_each_hand")
    g.touch("left_hammer", "left")                          # the hammer was picked up once ...
    g.set_joint("left_up_nail", 0.0)                        # ... but the nail went home without it
    assert not g.commit().latched[0]
    _driven(rt)._lower_onto(g)                              # the head laid on the nail afterwards
    assert not g.commit().latched[0] and not _driven(rt).done


def test_a_hammer_touch_long_before_the_nail_goes_home_does_not_count():
    from teleop.tasks.predicates_lh import DRIVEN_WINDOW_S
    rt, g = tp.start("hammer_one_nail_each_hand")
    g.touch("left_hammer", "left")
    _driven(rt)._lower_onto(g)
    g.commit()                                              # the head touched the standing nail
    g.lift("left_hammer", 0.2)
    rt.sim.data.time += 2 * DRIVEN_WINDOW_S                 # a second later, with the hammer away
    g.set_joint("left_up_nail", 0.0)
    assert not g.commit().latched[0]
