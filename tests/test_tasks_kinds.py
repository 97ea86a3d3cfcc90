"""Object kinds carry their behaviour as data: defaults and automatic events live on the kind."""
from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from teleop.tasks import build_task, parse_spec
from teleop.tasks.args import ARG_KINDS
from teleop.tasks.kinds import AutoEvent, Kind
from teleop.tasks.objects import KINDS, kind_defaults
from teleop.tasks.spec import automatic_events

ROOT = Path(__file__).resolve().parents[1]
SPEC = {
    "id": "bells", "axis": "memory", "instruction": "Ring the bell twice.", "ordered": False,
    "objects": [{"name": "bell", "kind": "button", "fixed": True, "spawn": {"center": [0.5, 0.1]}},
                {"name": "cube", "kind": "box", "size": [0.02, 0.02, 0.02], "spawn": {"center": [0.45, -0.2]}}],
    "subtasks": [{"name": "Ring twice", "weight": 100,
                  "predicates": [{"type": "event_count_exactly", "event": "bell.presses", "n": 2}]}],
    "cue": {"kind": "event_count", "what": "how often the bell rang", "event": "bell.presses"},
}


def _kind_name_comparisons(tree: ast.AST) -> list[int]:
    """Lines comparing something's ``.kind`` (or a ``kind`` variable) with an object kind's name.

    Argument kinds (``Arg.kind``: 'object', 'container', ...) are another vocabulary: left out."""
    names = set(KINDS) - set(ARG_KINDS)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            kindish = any(isinstance(s, ast.Attribute) and s.attr == "kind" or isinstance(s, ast.Name)
                          and s.id in ("kind", "kind_name") for s in sides)
            literals = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
            if kindish and literals & names:
                out.append(node.lineno)
    return out


def test_no_shared_code_compares_an_object_kind_name():
    offenders = []
    for path in [*(ROOT / "teleop").rglob("*.py"), *(ROOT / "ui").rglob("*.py"), *(ROOT / "recordings").rglob("*.py")]:
        if path.parent.name == "synthetic":       # the operator's script steps have kinds of their own
            continue
        offenders += [f"{path.relative_to(ROOT)}:{n}" for n in _kind_name_comparisons(ast.parse(path.read_text()))]
    assert offenders == []


def test_button_behaviour_is_on_its_kind():
    button = KINDS["button"]
    assert button.auto_events == (AutoEvent("press_counter", "presses", "button"),)
    assert kind_defaults("button") == {"radius": 0.025, "travel": 0.008, "rgba": [0.7, 0.7, 0.7, 1.0]}
    assert kind_defaults("nail")["travel"] == 0.03 and kind_defaults("drawer_box").get("travel") is None
    assert all(not k.auto_events for name, k in KINDS.items() if name != "button")


def test_a_new_kind_with_an_automatic_event_needs_no_code_elsewhere(monkeypatch):
    """A doorbell is a button under another name whose counter is called ``rings``: registering
    the kind is all it takes for specs to count its presses (namespace, events, userdata)."""
    bell = KINDS["button"]
    monkeypatch.setitem(KINDS, "doorbell", Kind(bell.build, bell.params, (), True, False, dict(bell.defaults),
                                                (AutoEvent("press_counter", "rings", "button"),)))
    raw = copy.deepcopy(SPEC)
    raw["objects"][0]["kind"] = "doorbell"
    raw["subtasks"][0]["predicates"][0]["event"] = "bell.rings"
    raw["cue"]["event"] = "bell.rings"
    spec = parse_spec(raw, "bells.yaml")
    assert [(e.type, e.name, e.args) for e in automatic_events(spec.objects)] == [
        ("press_counter", "bell.rings", {"button": "bell"})]
    task = build_task(spec)
    assert list(task.world.events) == ["bell.rings"] and task.scene.model.nuserdata == 2
    raw["subtasks"][0]["predicates"][0]["event"] = "bell.presses"          # not a button any more
    with pytest.raises(Exception, match=r"unknown event 'bell.presses'; valid choices: 'bell.rings'"):
        parse_spec(raw, "bells.yaml")


def test_buttons_still_count_presses():
    spec = parse_spec(copy.deepcopy(SPEC), "bells.yaml")
    task = build_task(spec)
    assert list(task.world.events) == ["bell.presses"] and task.scene.model.nuserdata == 2


def test_a_fixture_resting_on_a_fixture_stands_on_its_top():
    """A nail stands in the board's top face: driven home (joint at 0) its 6 mm head lies on the
    board. A box's origin is its centre, so the support's own height over the table counts (the
    nails stood in the board's mid-plane, 2 cm low: a hammer stopped by the board could not drive
    them within 20 % of flush)."""
    import mujoco
    task = build_task("hammer_one_nail_each_hand")
    m = task.scene.model
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    board_top = d.body("board").xpos[2] + 0.02          # box half height 0.02
    head = m.geom("left_up_nail_head")
    top = d.geom("left_up_nail_head").xpos[2] + m.geom_size[head.id][1]
    assert top - board_top == pytest.approx(0.006, abs=1e-6)


@pytest.mark.parametrize("height", [0.25, 0.35])
def test_hard_ice_dropped_into_a_cup_stays_in_it(height):
    """The pour task's three 16 mm, 4 g ice cubes (``hard: true``) dropped together from 25 and 35 cm
    into its 4 cm cup all rest on the cup's 6 mm floor. With MuJoCo's default soft contact they sank
    through it and stayed trapped under the cup (29 of 45 cubes from 25 cm)."""
    import mujoco
    import numpy as np
    from teleop.tasks.world import TABLE_TOP
    task = build_task("pour_ice_between_two_cups")
    m, w = task.scene.model, task.world
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    w.place(d, "left_cup", (0.55, 0.0, TABLE_TOP + 0.002), 0.0)   # between the hands, not under one
    cup = w.objects["left_cup"]
    names = ["ice_1", "ice_2", "ice_3"]
    rng = np.random.default_rng(0)
    for k, n in enumerate(names):
        o = w.objects[n]
        d.qpos[o.qadr:o.qadr + 3] = (0.55 + rng.uniform(-0.02, 0.02), rng.uniform(-0.02, 0.02),
                                     TABLE_TOP + 0.002 + height + 0.02 * k)
        q = rng.normal(size=4)
        d.qpos[o.qadr + 3:o.qadr + 7] = q / np.linalg.norm(q)            # any face or corner first
        d.qvel[o.vadr:o.vadr + 6] = np.r_[0.0, 0.0, 0.0, rng.normal(size=3) * 2.0]
    mujoco.mj_forward(m, d)
    for _ in range(600):                                                 # 1.2 s: fallen and settled
        mujoco.mj_step(m, d)
    mat = d.xmat[cup.body].reshape(3, 3)
    floor_top = cup.shape.interior.floor[2]
    for n in names:
        local = mat.T @ (d.xpos[w.objects[n].body] - d.xpos[cup.body])
        assert np.hypot(local[0], local[1]) < 0.04, (n, local)            # inside the walls
        assert local[2] > floor_top + 0.007, (n, local)                  # resting on the floor, not under it
