"""Single sources: sides and glove nodes are defined once; rates and sizes come from the robot."""
from __future__ import annotations

import ast
from pathlib import Path

import yaml

from teleop.core.conventions import FINGERTIP_NODES, NODE_NAMES, NUM_NODES, SIDES
from teleop.robot import DEFAULT_PARAMS, build_robot_spec, default_control_hz, load_params

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("teleop", "devices", "retarget", "recordings", "ui")
OWNER = ROOT / "teleop" / "core" / "conventions.py"


def _sources():
    for package in PACKAGES:
        yield from (p for p in (ROOT / package).rglob("*.py") if "node_modules" not in p.parts)


def _assigned_names(tree: ast.Module) -> set[str]:
    out = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) else []
        out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


def test_sides_and_node_names_are_defined_once():
    owners = {name: [] for name in ("SIDES", "NODE_NAMES")}
    spelled_sides = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        for name in owners.keys() & _assigned_names(tree):
            owners[name].append(path.relative_to(ROOT).as_posix())
        if path != OWNER:
            spelled_sides += [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(tree)
                              if isinstance(n, (ast.Tuple, ast.List, ast.Set))
                              and [getattr(e, "value", None) for e in n.elts] in (["left", "right"], ["right", "left"])]
    assert owners == {"SIDES": ["teleop/core/conventions.py"], "NODE_NAMES": ["teleop/core/conventions.py"]}
    assert spelled_sides == [], "spell the sides as teleop.core.conventions.SIDES"


def test_the_re_exports_are_the_same_objects():
    import devices
    import retarget
    from devices import frame
    from retarget import nodes
    from teleop import robot
    assert devices.SIDES is frame.SIDES is nodes.SIDES is robot.SIDES is SIDES
    assert devices.NODE_NAMES is retarget.NODE_NAMES is NODE_NAMES
    assert frame.NUM_NODES == nodes.N_NODES == NUM_NODES == 21
    assert nodes.TIPS == FINGERTIP_NODES == (4, 8, 12, 16, 20)


def test_robot_keypoint_sites_follow_the_node_order():
    _, layout = build_robot_spec(load_params())
    for side in SIDES:
        assert layout.hands[side].keypoints == tuple(f"{side}_{n}" for n in NODE_NAMES)
        assert layout.hands[side].fingertips == tuple(layout.hands[side].keypoints[i] for i in FINGERTIP_NODES)


def test_sizes_come_from_the_layout():
    from teleop.sim import ACTION_DIM, OBS_DIM
    _, layout = build_robot_spec(load_params())
    assert (layout.action_dim, layout.obs_dim) == (ACTION_DIM, OBS_DIM) == (len(layout.action_joints), 130)


def _params_at(tmp_path, hz: float):
    raw = yaml.safe_load(DEFAULT_PARAMS.read_text())
    raw["physics"]["control_hz"] = hz
    path = tmp_path / "robot.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_params(path)


def test_the_default_horizon_counts_ticks_of_the_scene_rate(tmp_path):
    from teleop.tasks import TaskRuntime, build_task, get_spec, horizon_steps
    spec = get_spec("pick_up_peach")
    assert spec.max_steps is None
    assert horizon_steps(spec) == round(30 * default_control_hz())
    assert horizon_steps(spec, control_hz=50) == 1500
    rt = TaskRuntime(build_task(spec, _params_at(tmp_path, 50)))
    assert rt.sim.scene.control_dt == 0.02 and rt.scorer.horizon == 1500


def test_rate_defaults_follow_robot_yaml():
    import numpy as np

    from devices.codec import FRAME_COLUMNS
    from devices.replay import ReplayDevice
    from devices.synthetic import SyntheticOperator
    from recordings.takefile import TakeMeta
    hz = load_params().physics.control_hz
    assert default_control_hz() == hz
    meta = TakeMeta(take_id="t", task_id="x", seed_index=0, episode_index=0, operator="o", model_xml="",
                    model_fingerprint="0" * 16, initial_state=(), instructions=(), subtask_names=())
    assert meta.control_hz == hz
    assert SyntheticOperator(lambda *a: None, 1.0).dt == 1.0 / hz
    assert ReplayDevice(np.zeros((1, len(FRAME_COLUMNS)))).dt == 1.0 / hz
