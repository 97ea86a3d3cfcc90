"""The grasp bench takes each library object the way a proven script takes it (teleop/control/operator_grasps.py)."""
from teleop.control.grasp_objects import holdable_objects
from teleop.control.operator_grasps import GRASP_SHAPE_ARGS, bench_args, object_key, operator_grasps
from teleop.tasks.loader import all_specs, get_spec


def _key(task: str, name: str):
    return object_key(next(o for o in get_spec(task).objects if o.name == name))


def test_only_proven_tasks_scripts_count():
    specs = all_specs()
    assert operator_grasps(specs, proven=[]) == {}
    grasps = operator_grasps(specs, proven=["pick_up_whisk"])
    assert list(grasps) == [_key("pick_up_whisk", "whisk")]


def test_a_part_is_renamed_to_the_bench_object_and_the_task_lift_is_dropped():
    (grasp,) = operator_grasps(all_specs(), proven=["pick_up_whisk"]).values()
    assert grasp.task == "pick_up_whisk"
    assert grasp.args == {"grasp": "power", "pitch": 0.9, "height": 0.08, "align": "across", "part": "_balloon"}
    assert bench_args(grasp, "whisk_2")["part"] == "whisk_2_balloon"
    assert bench_args(None, "whisk") == {}


def test_where_the_scene_put_the_thing_does_not_carry_over():
    """The food bar's grasp has a world yaw (-1.45: its tray's side of the table); the bench lays
    the bar across the fingers itself, so only the grasp's shape is kept."""
    grasps = operator_grasps(all_specs(), proven=["arrange_bar_on_tray_and_cake_on_plate"])
    bar = grasps[_key("arrange_bar_on_tray_and_cake_on_plate", "food_bar")]
    assert bar.args == {"grasp": "pinch", "pitch": 0.9, "height": 0.06}
    assert set(GRASP_SHAPE_ARGS).isdisjoint({"yaw", "offset", "lift", "object", "then"})


def test_the_library_carries_the_operator_grasp_or_the_default():
    """pick_up_whisk is proven in the committed record: its balloon grasp is the whisk's."""
    (whisk,) = holdable_objects(["whisk"], operator=True)
    (default,) = holdable_objects(["whisk"])
    assert whisk.grasp_from == "pick_up_whisk" and whisk.grasp_args["part"] == "whisk_balloon"
    assert whisk.grasp == "top"                   # a part grasp never goes low like a tall thing's
    assert default.grasp_from is None and default.grasp_args == {} and default.grasp == "pinch"   # 5.2 cm high
