"""Scene events and stateful fixtures under real physics: presses, colour swaps, reveals, FIFO order."""
from __future__ import annotations

import numpy as np
import pytest

from teleop.tasks import TaskRuntime, build_task
from teleop.tasks.goal import Goal


@pytest.fixture(scope="module")
def swap_task():
    return build_task("swap_cup_colors_with_cube")


@pytest.fixture(scope="module")
def uncover_task():
    return build_task("uncover_red_cube")


def _press_by_force(rt, button, ticks_down=4, ticks_up=6, force=6.0):
    """Push the button cap down with an external force, then let its spring return it."""
    cap = rt.sim.model.body(f"{button}_cap").id
    hold = rt.sim.joint_positions
    counts = []
    for down in [True] * ticks_down + [False] * ticks_up:
        rt.sim.data.xfrc_applied[cap, 2] = -force if down else 0.0
        rt.step(hold)
        counts.append(rt.world.events[f"{button}.presses"].count(rt.sim.data))
    return counts


def test_button_press_counts_only_after_release(swap_task):
    rt = TaskRuntime(swap_task)
    rt.reset(0, 0)
    counts = _press_by_force(rt, "yellow_button")
    assert counts[3] == 0, "a press must not count while the button is still held down"
    assert counts[-1] == 1
    assert rt.world.joint_fraction(rt.sim.data, "yellow_button") < 0.2, "the spring returns the button"


def test_three_presses_hide_the_cube_colour_and_state_restores_counter(swap_task):
    rt = TaskRuntime(swap_task)
    rt.reset(0, 0)
    for _ in range(2):
        _press_by_force(rt, "yellow_button")
    state = rt.sim.get_state()
    assert rt.world.current_colour(rt.sim.data, "cube") == "red"
    _press_by_force(rt, "yellow_button")
    assert rt.world.current_colour(rt.sim.data, "cube") == "none"
    cube_geom = rt.world.objects["cube"].geoms[0]
    assert tuple(rt.sim.model.geom_rgba[cube_geom][:3]) != tuple(rt.world.base_rgba[cube_geom][:3])
    other = TaskRuntime(swap_task)
    other.reset(0, 0)
    other.restore(state)                  # userdata is in the serialised state
    assert other.world.events["yellow_button.presses"].count(other.sim.data) == 2


def test_passes_over_the_cups_swap_their_colours(swap_task):
    rt = TaskRuntime(swap_task)
    rt.reset(0, 0)
    g = Goal(rt)
    def colours():
        return rt.world.current_colour(rt.sim.data, "cup_a"), rt.world.current_colour(rt.sim.data, "cup_b")
    assert colours() == ("red", "blue")
    rt.world.events["passes"].realize(g, 1)
    assert colours() == ("blue", "red")
    rt.world.events["passes"].realize(g, 4)
    assert rt.world.events["passes"].count(rt.sim.data) == 5 and colours() == ("blue", "red")


def test_reveal_places_caps_over_the_cubes_and_they_rest_there(uncover_task):
    rt = TaskRuntime(uncover_task)
    rt.reset(1, 0)
    assert not any(rt.last.holds[1:2])
    for _ in range(3):
        _press_by_force(rt, "yellow_button")
    hold = rt.sim.joint_positions
    for _ in range(20):
        rt.step(hold)
    t = rt.last
    assert t.holds[1], "all three cubes covered after the third press"
    assert t.holds[3] and t.holds[4]      # green / blue still covered


def test_fifo_order_tracker_rejects_out_of_order_removal():
    rt = TaskRuntime("drop_fruits_in_basket_then_remove_in_order")
    rt.reset(0, 0)
    g = Goal(rt)
    ev = rt.world.events["basket_order"]
    for name in ("apple", "lemon", "peach"):
        g.put_inside(name, "basket")
        g.commit()
    for name in ("lemon", "apple", "peach"):          # wrong order: lemon went in second
        g.put_on_table(name)
        g.commit()
    assert ev.count(rt.sim.data) == 3 and not ev.fifo_done(rt.sim.data)
    rt.reset(0, 0)
    g = Goal(rt)
    for name in ("peach", "apple", "lemon"):
        g.put_inside(name, "basket")
        g.commit()
    for name in ("peach", "apple", "lemon"):
        g.put_on_table(name)
        g.commit()
    assert ev.fifo_done(rt.sim.data)


def test_articulated_fixtures_really_move_under_force():
    """Fixtures have real joints: pulling a drawer handle opens it, the lever returns by its spring."""
    rt = TaskRuntime("pull_open_cabinet_drawer")
    rt.reset(0, 0)
    body = rt.sim.model.body("cabinet_drawer").id
    hold = rt.sim.joint_positions
    for _ in range(25):
        rt.sim.data.xfrc_applied[body, 0] = -20.0
        rt.step(hold)
    assert rt.last.latched == (True,) and rt.last.progress == 100
    lever = TaskRuntime("pull_down_slot_machine_lever")
    lever.reset(0, 0)
    lever.sim.data.qpos[lever.world.objects["slot_machine"].joint_qadr] = 1.1
    for _ in range(50):
        lever.step(hold)
    assert lever.last.latched == (True,)
    assert lever.world.joint_fraction(lever.sim.data, "slot_machine") < 0.7
    assert lever.result().progress == 100.0
    assert np.isfinite(lever.sim.get_state()).all()
