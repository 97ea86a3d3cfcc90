"""The synthetic operator completes its tasks through the REAL loop (device -> engage -> retarget
-> sim -> scorer), with tremor and tracking dropouts, on at least 4 of 5 seeds per task."""
import pytest

from teleop.control.episode import Episode, EpisodeOptions
from teleop.core.errors import ConfigError
from teleop.control.synthetic.script import load_script, parse_script, scripted_tasks

from fake_scene import FakeScene, box

# One task per capability the issue names; each must have a script in teleop/control/synthetic/scripts.
TASKS = {
    "pick_up_peach": "pick up",
    "put_peach_in_fruit_bowl": "place into a container",
    "pull_open_cabinet_drawer": "open a drawer",
    "put_apple_and_orange_in_bowl": "bimanual",
    "uncover_red_cube": "press a button exactly 3 times",
    "put_orange_on_shelf_then_take_back_into_tray": "two-phase language switch",
}


def _episode(task: str, episode: int):
    ep = Episode(EpisodeOptions(task=task, device="synthetic", episode_index=episode))
    result, _ = ep.run(None)
    return result, ep


@pytest.mark.parametrize("task", sorted(TASKS), ids=lambda t: f"{TASKS[t]}:{t}")
def test_synthetic_operator_succeeds_on_4_of_5_seeds(task):
    failures = []
    for episode in range(5):
        result, ep = _episode(task, episode)
        if result.strict_success != 1:
            first = next(s for s in result.subtasks if s.effective < 1)
            failures.append(f"episode {episode}: progress {result.progress:.0f}, first failing subtask "
                            f"{first.name!r} (latched at {first.latch_step}), {sum(r.marked for r in ep.reports)} "
                            "dropout ticks")
    assert len(failures) <= 1, "\n".join(failures)


def test_every_script_is_valid_and_names_a_shipped_task():
    from teleop.tasks import get_spec

    for task in scripted_tasks():
        script = load_script(task)
        get_spec(task)                                    # raises for an unknown task
        assert script.steps


def test_every_scripted_task_fits_its_horizon_at_the_operators_pace():
    """The plan a script makes (the synthetic operator's pace: an unhurried 0.35 m/s reach) ends,
    with 2 s to spare, before the task's horizon (max_steps, else the paced estimate or 30 s)."""
    from teleop.control.synthetic.human import HandShapes, load_grasps
    from teleop.control.synthetic.operator import open_loop_planner
    from teleop.tasks import TaskRuntime, horizon_steps

    too_long = []
    for task in scripted_tasks():
        rt = TaskRuntime(task)
        rt.reset(0, 0)
        scene = rt.sim.scene
        planner = open_loop_planner(rt, HandShapes(scene, load_grasps(scene)))
        plan_s = max(t.duration for t in planner.plan(load_script(task)).values())
        horizon_s = horizon_steps(rt.spec, control_hz=1 / scene.control_dt) * scene.control_dt
        if plan_s + 2.0 > horizon_s:
            too_long.append(f"{task}: plan {plan_s:.1f} s, horizon {horizon_s:.1f} s")
    assert not too_long, "\n".join(too_long)


def test_bad_scripts_fail_clearly():
    with pytest.raises(ConfigError, match=r"steps\[0\].do: 'jump' is not one of 'grasp'"):
        parse_script({"task": "t", "steps": [{"do": "jump"}]}, "s.yaml")
    with pytest.raises(ConfigError, match=r"steps\[0\].side: 'middle' is not one of"):
        parse_script({"task": "t", "steps": [{"do": "grasp", "side": "middle"}]}, "s.yaml")
    with pytest.raises(ConfigError, match="no synthetic-operator script for task 'nope'; scripted tasks:"):
        load_script("nope")


def test_grasp_align_turns_the_fingers_along_or_across_the_objects_axis():
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    scene = FakeScene(yaw=np.deg2rad(160.0))         # an object lying with its long axis at 160 degrees
    start = {s: Key(0.0, np.zeros(3), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    planner = Planner(scene, start, tip_offset=None)
    assert np.isclose(np.rad2deg(planner._grasp_yaw("thing", "right", {"align": "along"})), -20.0)
    assert np.isclose(np.rad2deg(planner._grasp_yaw("thing", "right", {"align": "across"})), 70.0)   # toward +y
    assert np.isclose(np.rad2deg(planner._grasp_yaw("thing", "left", {"align": "across"})), -110.0)  # toward -y
    assert np.isclose(planner._grasp_yaw("thing", "left", {"yaw": 0.3}), 0.3)
    with pytest.raises(ConfigError, match="align"):
        planner._grasp_yaw("thing", "left", {"align": "sideways"})


def test_move_roll_turns_the_palm_about_the_fingers_and_is_off_by_default():
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner, SidePlan, palm_rotation

    start = {s: Key(0.0, np.zeros(3), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    planner = Planner(None, start, tip_offset=None)
    plain, rolled = SidePlan(start["left"]), SidePlan(start["left"])
    planner._move(plain, "left", {"pitch": 0.0, "yaw": -np.pi / 2})
    planner._move(rolled, "left", {"pitch": 0.0, "yaw": -np.pi / 2, "roll": np.pi / 2})
    assert np.allclose(plain.last.rot, palm_rotation(0.0, -np.pi / 2))            # no roll: as before
    assert np.allclose(rolled.last.rot[:, 2], plain.last.rot[:, 2])              # the fingers keep pointing
    assert np.allclose(rolled.last.rot[:, 0], [1.0, 0.0, 0.0], atol=1e-9)        # the palm faces away (+x)
    assert np.allclose(rolled.last.rot[:, 1], [0.0, 0.0, 1.0], atol=1e-9)        # across the palm: up


def test_move_grasp_names_the_shape_and_keeps_the_one_in_use_by_default():
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner, SidePlan

    start = {s: Key(0.0, np.zeros(3), np.eye(3), 1.0, "release") for s in ("left", "right")}
    planner = Planner(None, start, tip_offset=None)
    plain, shaped = SidePlan(start["left"]), SidePlan(start["left"])
    planner._move(plain, "left", {"grip": 0.0})
    planner._move(shaped, "left", {"grip": 0.0, "grasp": "ready"})
    assert plain.last.grasp == "release" and plain.last.grip == 0.0        # no grasp: the shape in use
    assert shaped.last.grasp == "ready" and shaped.last.grip == 0.0
    planner._move(shaped, "left", {"grip": 1.0})
    assert shaped.last.grasp == "ready" and shaped.last.grip == 1.0        # then closes toward it


def test_place_aim_held_aims_the_object_where_it_sits_in_the_hand():
    """``aim_held: true``: the closed loop aims the held object's live offset from the hand over the
    target, not the offset the grasp expected (a small round thing sits a few cm off in the hand)."""
    import numpy as np

    from teleop.control.synthetic.closed_loop import LivePlanner
    from teleop.control.synthetic.motion import Key

    hand = np.array([0.40, 0.0, 1.0])

    pos = {"ball": [0.45, 0.03, 1.0], "box": [0.60, 0.0, 0.8]}   # the ball 5 cm ahead of, 3 cm beside the hand
    scene = FakeScene(pos, {"ball": box(pos["ball"], 0.03), "box": box(pos["box"], 0.10)})

    def hand_over_box(args: dict) -> np.ndarray:
        start = {"left": Key(0.0, np.array([0.3, 0.4, 1.0]), np.eye(3), 0.0, "ready"),
                 "right": Key(0.0, hand, np.eye(3), 1.0, "power")}
        planner = LivePlanner(scene, start, tip_offset=None)
        planner._held["right"] = ("ball", np.array([0.07, 0.0, 0.0]), 0.03)   # the grasp's expectation
        plan = planner.sides["right"]
        first = len(plan.keys)
        planner._place(plan, "right", {"target": "box", **args})
        return plan.keys[first + 2].pos          # keys: up, over, above (then down)

    assert np.allclose(hand_over_box({})[:2] + [0.07, 0.0], [0.60, 0.0])                    # as planned
    assert np.allclose(hand_over_box({"aim_held": True})[:2] + [0.05, 0.03], [0.60, 0.0])   # as it sits


def test_pinch_along_shifts_the_grasp_along_the_objects_own_heading_and_is_off_by_default():
    """``along: d`` (a pair of scissors by its handle): the pinch point moves d metres along the
    object's own heading, whatever its spawn yaw; without it the pinch is at the centre."""
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    heading = np.deg2rad(120.0)

    # a 20 cm thing lying turned 120 degrees, centred at (0.5, 0.1)
    scene = FakeScene({"scissors": [0.5, 0.1, 0.80]}, {"scissors": ([0.4, 0.0, 0.79], [0.6, 0.2, 0.81])}, yaw=heading)

    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    grasps = {}
    for along in (None, 0.06):
        planner = Planner(scene, start, tip_offset=lambda *args: np.zeros(3))
        args = {"object": "scissors", "align": "across"} | ({} if along is None else {"along": along})
        planner._pinch_grasp(planner.sides["right"], "right", args)
        grasps[along] = next(k.pos for k in planner.sides["right"].keys if k.grasp == "pinch" and k.grip == 1.0)
    assert np.allclose(grasps[None][:2], [0.5, 0.1])                                  # the centre
    assert np.allclose(grasps[0.06][:2] - grasps[None][:2], 0.06 * np.array([np.cos(heading), np.sin(heading)]))
    assert np.isclose(grasps[0.06][2], grasps[None][2])


def test_pinch_roll_turns_the_hand_about_the_fingers_and_is_off_by_default():
    """``roll: r`` (a fruit against a basket's wall): the pinch's palm turns r about the fingers'
    direction, the tips still meeting at the same point; without it the rotation is unchanged."""
    import numpy as np

    from teleop.control.synthetic.grasp_steps import palm_rotation
    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    scene = FakeScene({"lemon": [0.6, -0.1, 0.81]}, {"lemon": box([0.6, -0.1, 0.81], 0.03)})   # a 6 cm fruit
    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    keys = {}
    for roll in (None, -0.8):
        planner = Planner(scene, start, tip_offset=lambda *args: np.zeros(3))
        args = {"object": "lemon", "style": "pinch", "pitch": 0.9} | ({} if roll is None else {"roll": roll})
        planner._pinch_grasp(planner.sides["right"], "right", args)
        keys[roll] = next(k for k in planner.sides["right"].keys if k.grasp == "pinch" and k.grip == 1.0)
    plain = palm_rotation(0.9, 0.0)
    assert np.allclose(keys[None].rot, plain)
    assert np.allclose(keys[-0.8].rot[:, 2], plain[:, 2])               # the fingers' direction kept
    c, s = np.cos(-0.8), np.sin(-0.8)
    assert np.allclose(keys[-0.8].rot[:, 1], -s * plain[:, 0] + c * plain[:, 1])
    assert np.allclose(keys[-0.8].pos, keys[None].pos)                  # zero tip offsets: same point


def test_pinch_roll_from_a_container_raises_the_side_toward_the_nearer_wall():
    """``roll_from: basket`` with ``roll: r``: the roll's sign follows where the fruit lies in the
    basket (by a -y wall: negative, raising the fingers' right side; by a +y wall: positive), none
    within ``roll_gap`` of its middle line; without ``roll_from`` the given roll is used as is."""
    import numpy as np

    from teleop.control.synthetic.grasp_steps import palm_rotation
    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner
    from teleop.control.synthetic.swing import axis_rotation

    def query(fruit_y):              # a 22 x 18 cm basket centred at (0.6, -0.05), a 6 cm fruit in it
        fruit = [0.6, fruit_y, 0.81]
        return FakeScene({"basket": [0.6, -0.05, 0.8], "lemon": fruit},
                         {"basket": ([0.49, -0.14, 0.78], [0.71, 0.04, 0.87]), "lemon": box(fruit, 0.03)})

    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}

    def rot(fruit_y, **extra):
        planner = Planner(query(fruit_y), start, tip_offset=lambda *args: np.zeros(3))
        planner._pinch_grasp(planner.sides["right"], "right",
                             {"object": "lemon", "style": "pinch", "pitch": 0.9, "roll": -0.8} | extra)
        return next(k for k in planner.sides["right"].keys if k.grasp == "pinch" and k.grip == 1.0).rot

    plain = palm_rotation(0.9, 0.0)
    rolled = {r: plain @ axis_rotation((0, 0, 1), r) for r in (-0.8, 0.8)}
    assert np.allclose(rot(-0.10, roll_from="basket"), rolled[-0.8])     # by the -y wall
    assert np.allclose(rot(0.00, roll_from="basket"), rolled[0.8])       # by the +y wall
    assert np.allclose(rot(-0.06, roll_from="basket"), plain)            # the middle line
    assert np.allclose(rot(0.00), rolled[-0.8])                          # off: the roll as given


def test_pinch_lying_across_turns_the_tips_square_to_a_fallen_cylinder():
    """``lying_across: true``: a cylinder whose own axis (local z) is tipped past 45 deg is pinched
    with the fingers' heading square to that axis (of the two, the one nearer straight ahead; the
    script's ``yaw`` dropped), at ``lying_height`` of it if given; standing, the pinch is as without it."""
    import numpy as np

    from teleop.control.synthetic.grasp_steps import palm_rotation
    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    def query(axis):             # a 4 cm candle, standing (5.6 cm high) or lying (4 cm high)
        top = 0.836 if axis[2] > 0.9 else 0.82
        return FakeScene(positions={"candle": [0.6, -0.2, 0.81]}, up_axes={"candle": axis},
                         extents={"candle": ([0.58, -0.22, 0.78], [0.62, -0.18, top])})

    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}

    def closed(axis, **extra):
        planner = Planner(query(axis), start, tip_offset=lambda *args: np.zeros(3))
        planner._pinch_grasp(planner.sides["right"], "right",
                             {"object": "candle", "style": "pinch", "height": 0.78, "yaw": 0.5} | extra)
        return next(k for k in planner.sides["right"].keys if k.grasp == "pinch" and k.grip == 1.0)

    on = {"lying_across": True, "lying_height": 0.5}
    standing = closed((0, 0, 1), **on)
    assert np.allclose(standing.rot, palm_rotation(0.5, 0.5))            # standing: the yaw as given
    assert np.allclose(standing.pos, closed((0, 0, 1)).pos)
    along_x = closed((1, 0, 0.1), **on)                                  # lying along x: fingers along -y
    assert np.allclose(along_x.rot, palm_rotation(0.5, -np.pi / 2))
    assert np.isclose(along_x.pos[2], 0.80)                              # half its 4 cm height
    assert np.allclose(closed((0, 1, 0), **on).rot, palm_rotation(0.5, 0.0))   # along y: straight ahead
    tipped = np.array([np.cos(0.3), np.sin(0.3), 0.0])
    assert np.allclose(closed(tipped, **on).rot, palm_rotation(0.5, 0.3 - np.pi / 2))
    assert np.allclose(closed((1, 0, 0.1)).rot, palm_rotation(0.5, 0.5))      # off: as given


def test_pinch_shape_tripod_keeps_the_pinch_tips_and_tucks_the_outer_fingers():
    """``pinch_shape: tripod`` (grasps.yaml): the pinch's thumb, index and middle, the ring and
    little fingers curled as in "point"; a pinch step without it closes the plain pinch."""
    import numpy as np

    from teleop.control.synthetic.human import GRASPS_FILE
    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner
    from teleop.core.yamlio import load_yaml

    shapes = load_yaml(GRASPS_FILE, "grasp shapes")
    tripod, pinch, point = shapes["tripod"], shapes["pinch"], shapes["point"]
    for joint in ("thumb_cmc_flex", "thumb_cmc_abd", "thumb_mcp_flex", "thumb_ip", "mcp_flex", "pip", "dip"):
        assert tripod[joint] == pinch[joint]
    for finger in ("ring", "little"):
        for joint in ("mcp_flex", "pip", "dip"):
            assert tripod[f"{finger}_{joint}"] == point[f"{finger}_{joint}"]

    scene = FakeScene({"lemon": [0.6, -0.1, 0.81]}, {"lemon": box([0.6, -0.1, 0.81], 0.03)})
    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    for extra, shape in (({}, "pinch"), ({"pinch_shape": "tripod"}, "tripod")):
        planner = Planner(scene, start, tip_offset=lambda *args: np.zeros(3))
        planner._pinch_grasp(planner.sides["right"], "right", {"object": "lemon", "style": "pinch"} | extra)
        assert any(k.grasp == shape and k.grip == 1.0 for k in planner.sides["right"].keys)
        assert not any(k.grasp in {"pinch", "tripod"} - {shape} for k in planner.sides["right"].keys)


def test_pinch_part_aims_at_one_named_geom_and_is_off_by_default():
    """``part: geom`` (a pan's handle): the pinch point goes to that geom's centre, at its share of
    the geom's height; without it the pinch is at the object's centre."""
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    scene = FakeScene({"pan": [0.5, 0.2, 0.78]}, {"pan": ([0.42, 0.02, 0.78], [0.58, 0.28, 0.81])},   # the pan
                      geom_extents={"pan_handle": ([0.49, 0.03, 0.79], [0.51, 0.12, 0.81])})   # its handle, toward -y

    start = {s: Key(0.0, np.array([0.3, -0.3, 1.2]), np.eye(3), 1.0, "ready") for s in ("left", "right")}
    grasps = {}
    for part in (None, "pan_handle"):
        planner = Planner(scene, start, tip_offset=lambda *args: np.zeros(3))
        args = {"object": "pan", "style": "pinch"} | ({} if part is None else {"part": part})
        planner._pinch_grasp(planner.sides["right"], "right", args)
        grasps[part] = next(k.pos for k in planner.sides["right"].keys if k.grasp == "pinch" and k.grip == 1.0)
    assert np.allclose(grasps[None], [0.5, 0.2, 0.795])                # the pan's centre, half its height
    assert np.allclose(grasps["pan_handle"], [0.5, 0.075, 0.80])      # the handle's centre, half its height


def test_move_over_puts_the_held_objects_centre_over_the_target_and_aims_it_live():
    """``move: {over: rod, height: h}``: the palm goes where the held ring's centre is h over the
    rod's top centre; with ``aim_held`` the closed loop uses where the ring hangs in the hand now."""
    import numpy as np

    from teleop.control.synthetic.closed_loop import LivePlanner
    from teleop.control.synthetic.motion import Key

    pos = {"ring": [0.44, 0.0, 0.98], "rod": [0.60, 0.10, 0.85]}   # the ring 4 cm ahead of, 2 cm below the hand
    scene = FakeScene(pos, {n: (np.subtract(p, 0.01), np.add(p, [0.01, 0.01, 0.05])) for n, p in pos.items()})

    def palm_over(args: dict) -> np.ndarray:
        start = {s: Key(0.0, np.array([0.40, 0.0, 1.0]), np.eye(3), 1.0, "pinch") for s in ("left", "right")}
        planner = LivePlanner(scene, start, tip_offset=None)
        planner._held["right"] = ("ring", np.array([0.07, 0.0, 0.0]), 0.01)   # the grasp's expectation
        planner._move(planner.sides["right"], "right", {"over": "rod", "height": 0.07, **args})
        return planner.sides["right"].last.pos

    top = np.array([0.60, 0.10, 0.90])
    assert np.allclose(palm_over({}) + [0.07, 0.0, 0.0], top + [0, 0, 0.07])                  # as grasped
    assert np.allclose(palm_over({"aim_held": True}) + [0.04, 0.0, -0.02], top + [0, 0, 0.07])  # as it hangs
    assert np.allclose(palm_over({"offset": [-0.008, 0.0, 0.0]}) + [0.07, 0.0, 0.0], top + [-0.008, 0, 0.07])


def test_move_over_with_a_part_puts_that_geom_over_the_target():
    """``move: {over: nail, part: hammer_head}``: the palm goes where the held hammer's head (a named
    geom 10 cm out along the handle), not the hammer's centre, is ``height`` over the nail's top."""
    import numpy as np

    from teleop.control.synthetic.closed_loop import LivePlanner
    from teleop.control.synthetic.motion import Key

    pos = {"hammer": [0.45, 0.0, 1.0], "nail": [0.60, 0.10, 0.85]}   # the hammer 5 cm ahead of the hand
    scene = FakeScene(pos, {n: (np.subtract(p, 0.01), np.add(p, [0.01, 0.01, 0.05])) for n, p in pos.items()},
                      geoms={"hammer_head": np.add(pos["hammer"], [0.10, 0.0, 0.006])})   # its head 10 cm further

    start = {s: Key(0.0, np.array([0.40, 0.0, 1.0]), np.eye(3), 1.0, "pinch") for s in ("left", "right")}
    for aim_held in (False, True):   # planned offset == live offset here
        planner = LivePlanner(scene, start, tip_offset=None)
        planner._held["right"] = ("hammer", np.array([0.05, 0.0, 0.0]), 0.01)
        planner._move(planner.sides["right"], "right",
                      {"over": "nail", "part": "hammer_head", "height": -0.03, "aim_held": aim_held})
        head = planner.sides["right"].last.pos + [0.05, 0.0, 0.0] + [0.10, 0.0, 0.006]
        assert np.allclose(head, [0.60, 0.10, 0.90 - 0.03])


def test_move_over_with_low_end_puts_the_held_objects_lowest_point_over_the_target_and_is_off_by_default():
    """``move: {over: glass, low_end: true}``: the palm goes where the held rod's low end as it hangs
    now (a rod held tilted, its low end 3 cm ahead of and 8 cm below its centre), not its centre, is
    ``height`` over the glass's top centre; without it, its centre (as before)."""
    import numpy as np

    from teleop.control.synthetic.closed_loop import LivePlanner
    from teleop.control.synthetic.motion import Key

    pos = {"rod": [0.45, 0.0, 1.0], "glass": [0.60, 0.10, 0.80]}
    scene = FakeScene(pos, {n: (np.subtract(p, 0.01), np.add(p, [0.01, 0.01, 0.10])) for n, p in pos.items()},
                      lowest={"rod": np.add(pos["rod"], [0.03, 0.0, -0.08])})

    start = {s: Key(0.0, np.array([0.40, 0.0, 1.0]), np.eye(3), 1.0, "pinch") for s in ("left", "right")}
    top = np.array([0.60, 0.10, 0.90])
    for low_end in (False, True):
        planner = LivePlanner(scene, start, tip_offset=None)
        planner._held["right"] = ("rod", np.array([0.05, 0.0, 0.0]), 0.01)
        args = {"over": "glass", "height": -0.02, "aim_held": True} | ({"low_end": True} if low_end else {})
        planner._move(planner.sides["right"], "right", args)
        palm = planner.sides["right"].last.pos
        aimed = palm + [0.05, 0.0, 0.0] + ([0.03, 0.0, -0.08] if low_end else 0.0)   # live offset == planned
        assert np.allclose(aimed, top + [0, 0, -0.02])


def test_scene_query_lowest_point_is_a_tilted_rods_low_end():
    """``SceneQuery.lowest_point``: the centre of the lowest face of the lowest geom's box: a capsule
    tilted 60 degrees from the table has it on its axis, at its low tip; lying flat, under its centre."""
    import mujoco
    import numpy as np

    from teleop.control.synthetic.scene_query import SceneQuery

    xml = """<mujoco><worldbody><body name="rod" pos="0 0 1"><freejoint/>
      <geom type="capsule" size="0.02 0.08" quat="0.7071068 0 0.7071068 0"/></body></worldbody></mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    for pitch in (np.pi / 3, 0.0):           # the rod's x axis tipped down by ``pitch``
        data.qpos[3:7] = [np.cos(pitch / 2), 0.0, np.sin(pitch / 2), 0.0]
        mujoco.mj_kinematics(model, data)
        low = SceneQuery(model, data).lowest_point("rod")
        tip = np.array([0.0, 0.0, 1.0]) + 0.10 * np.array([np.cos(pitch), 0.0, -np.sin(pitch)])
        assert np.allclose(low, tip if pitch else [0.0, 0.0, 1.0 - 0.02], atol=1e-6)


def test_let_go_spread_false_leaves_the_thumb_where_the_open_hand_has_it():
    """The default let-go opens the hand, then swings the thumb out (the ``release`` shape);
    ``spread: false`` stops after opening (a thumb in a threaded ring's hole would lift it off)."""
    import numpy as np

    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner, SidePlan

    def let_go(args: dict) -> list[tuple[float, str]]:
        plan = SidePlan(Key(0.0, np.zeros(3), np.eye(3), 1.0, "pinch"))
        Planner._let_go(plan, args)
        return [(k.grip, k.grasp) for k in plan.keys[1:]]

    assert let_go({}) == [(0.0, "pinch"), (1.0, "release")]
    assert let_go({"spread": False}) == [(0.0, "pinch")]


def test_move_over_site_puts_a_named_site_of_the_held_object_on_a_named_site():
    """``move: {over_site: tree_hook1, part_site: mug_hang}`` (opt-in): the palm goes where the held
    mug's handle site (not its centre) is ``height`` over the peg's site (not a target's top centre)."""
    import numpy as np

    from teleop.control.synthetic.closed_loop import LivePlanner
    from teleop.control.synthetic.motion import Key

    # the mug's centre 5 cm ahead of the hand, its handle site 5 cm further; a site target has no extent
    scene = FakeScene({"mug": [0.45, 0.0, 1.0]},
                      sites={"mug_hang": [0.50, 0.0, 1.03], "tree_hook1": [0.62, -0.05, 0.98]})

    start = {s: Key(0.0, np.array([0.40, 0.0, 1.0]), np.eye(3), 1.0, "power") for s in ("left", "right")}
    planner = LivePlanner(scene, start, tip_offset=None)
    planner._held["right"] = ("mug", np.array([0.05, 0.0, 0.0]), 0.04)
    planner._move(planner.sides["right"], "right", {"over_site": "tree_hook1", "part_site": "mug_hang",
                                                     "height": 0.02, "offset": [0.0, -0.01, 0.0]})
    handle = planner.sides["right"].last.pos + [0.05, 0.0, 0.0] + [0.05, 0.0, 0.03]
    assert np.allclose(handle, [0.62, -0.06, 1.00])


def test_move_held_heading_turns_the_palm_by_the_smaller_turn_onto_the_heading():
    """``move: {held_heading: h}`` (opt-in): the palm turns by what takes the held object's own axis
    (either way along it) onto heading h from where it points now: at most 90 degrees."""
    import numpy as np

    from teleop.control.synthetic.grasp_steps import palm_rotation
    from teleop.control.synthetic.motion import Key
    from teleop.control.synthetic.planner import Planner

    def palm_yaw(start_yaw: float, mug_heading: float) -> float:
        q = FakeScene({"mug": [0.45, 0.0, 1.0]}, yaws={"mug": mug_heading})
        start = {s: Key(0.0, np.array([0.40, 0.0, 1.0]), palm_rotation(0.6, start_yaw), 1.0, "power")
                 for s in ("left", "right")}
        planner = Planner(q, start, tip_offset=None)
        planner._held["right"] = ("mug", np.array([0.05, 0.0, 0.0]), 0.04)
        planner._move(planner.sides["right"], "right", {"held_heading": 0.0, "pitch": 0.6})
        rot = planner.sides["right"].last.rot
        assert np.allclose(rot[:, 2][2], -np.sin(0.6))                      # the pitch kept
        return float(np.arctan2(rot[1, 2], rot[0, 2]))

    assert np.isclose(palm_yaw(0.3, 1.0), 0.3 - 1.0)               # handle at 57 deg: turn it back
    assert np.isclose(palm_yaw(0.0, 2.0), np.pi - 2.0)             # at 115 deg: on to 180, not back 115
    assert np.isclose(palm_yaw(0.2, -0.5), 0.7)
