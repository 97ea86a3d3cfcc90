"""The grasps the synthetic operator's proven scripts use, per library object, for the grasp bench.

A person picks a grasp for the thing in front of them: a mango is taken with the fingers steeply
down, a whisk by its balloon, a can from above and low. The proven scripts say how the operator
takes each object it has completed a task with; the grasp bench measures whether *those* grasps
hold under a 1 g shake (the planner's size-based default is what objects no proven script grasps
get). Only the arguments that shape the grasp carry over: where the task's scene put the thing
(a world ``yaw`` or ``offset``) and how high the task lifts it do not.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import NamedTuple

from teleop.control.synthetic.script import load_script, scripted_tasks
from teleop.tasks.proven import proven_ids
from teleop.tasks.spec import ObjectSpec, TaskSpec

# Arguments of a grasp step that describe the grasp itself (the rest belong to the task's scene).
GRASP_SHAPE_ARGS = ("style", "grasp", "pitch", "height", "preshape", "draw", "reach", "align", "along", "part",
                    "slide", "standoff", "clearance", "descend_s", "approach_s", "close_s", "settle_s", "lift_s")


Key = tuple[str, str]     # a library object: (kind, its parameters as sorted JSON)


class OperatorGrasp(NamedTuple):
    task: str          # the proven task whose script grasps the object this way
    args: dict         # the grasp step's shape arguments, the object renamed to the bench's


def object_key(obj: ObjectSpec) -> Key:
    """Identical declarations (kind and parameters) are one library object."""
    return obj.kind, json.dumps(obj.params, sort_keys=True)


def _shape_args(args: dict, script_name: str) -> dict | None:
    """The grasp-shaping arguments, a ``part`` made relative to the object's name (``whisk_balloon``
    -> ``_balloon``); None when the part is not one of the object's own geoms."""
    out = {k: args[k] for k in GRASP_SHAPE_ARGS if k in args}
    if "part" in out:
        if not str(out["part"]).startswith(f"{script_name}_"):
            return None
        out["part"] = str(out["part"])[len(script_name):]
    return out


def operator_grasps(specs: Iterable[TaskSpec], proven: Iterable[str] | None = None) -> dict[Key, OperatorGrasp]:
    """Library object key -> the first grasp of it in a proven task's script (tasks in ``specs``
    order, steps in script order). ``proven``: the proven task ids (default: the committed record)."""
    proven_set = set(proven_ids() if proven is None else proven)
    scripted = set(scripted_tasks())
    out: dict[Key, OperatorGrasp] = {}
    for spec in specs:
        if spec.id not in proven_set or spec.id not in scripted:
            continue
        objects = {o.name: o for o in spec.objects}
        for step in load_script(spec.id).steps:
            name = step.args.get("object")
            if step.do != "grasp" or name not in objects:
                continue
            args = _shape_args(step.args, name)
            if args is not None:
                out.setdefault(object_key(objects[name]), OperatorGrasp(spec.id, args))
    return out


def bench_args(grasp: OperatorGrasp | None, name: str) -> dict:
    """The grasp step arguments for the bench's object ``name`` (its part named after it)."""
    if grasp is None:
        return {}
    args = dict(grasp.args)
    if "part" in args:
        args["part"] = f"{name}{args['part']}"
    return args
