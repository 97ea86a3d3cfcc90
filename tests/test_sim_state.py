"""Sim core: observation layout, exact state round trip, determinism, wrong-model refusal."""
import mujoco
import numpy as np
import pytest

from grasping import cube_item, scene_with
from teleop.core.errors import StateMismatchError, TeleopError
from teleop.robot import build_robot_spec, load_params
from teleop.sim.scene import build_scene, model_fingerprint
from teleop.core.seeding import stable_rng, stable_seed
from teleop.sim import OBS_DIM, Sim, state_fingerprint


def _actions(sim: Sim, n: int, name: str) -> np.ndarray:
    rng = stable_rng(name)
    walk = np.cumsum(rng.normal(0, 0.02, (n, 58)), axis=0)
    return np.clip(sim.joint_positions + walk, sim.ctrl_low, sim.ctrl_high)


def test_model_builds_without_warnings():
    seen = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(seen.append)
    try:
        spec, _ = build_robot_spec(load_params())
        spec.compile()
        scene = build_scene()
        sim = Sim(scene)
        sim.reset(0)
        for _ in range(10):
            sim.step(sim.joint_positions)
    finally:
        mujoco.set_mju_user_warning(previous)
    assert seen == []
    assert all(w.number == 0 for w in sim.data.warning)


def test_observation_layout(scene):
    sim = Sim(scene)
    obs = sim.reset(0)
    assert obs.shape == (OBS_DIM,) and obs.dtype == np.float32
    np.testing.assert_allclose(obs[:58], sim.joint_positions, atol=1e-6)
    for k, side in enumerate(("left", "right")):
        pose = obs[116 + 7 * k: 123 + 7 * k]
        np.testing.assert_allclose(pose[:3], sim.data.site(f"{side}_wrist").xpos, atol=1e-6)
        assert abs(np.linalg.norm(pose[3:]) - 1) < 1e-5


def test_fingerprint_is_stable_and_model_specific(scene):
    assert build_scene().fingerprint == scene.fingerprint
    assert model_fingerprint(mujoco.MjModel.from_xml_string(scene.xml)) == scene.fingerprint
    assert scene_with(cube_item()).fingerprint != scene.fingerprint


def test_state_round_trip_and_determinism_are_bit_exact():
    scene = scene_with(cube_item())
    sim = Sim(scene)
    sim.reset(0)
    actions = _actions(sim, 40, "determinism")
    for a in actions[:10]:
        sim.step(a)
    saved = sim.get_state()
    assert state_fingerprint(saved) == scene.fingerprint
    reference = []
    for a in actions[10:]:
        sim.step(a)
        reference.append(sim.get_state())
    # A second simulator, restored from the saved vector, must reproduce every state bit for bit.
    other = Sim(scene_with(cube_item()))
    other.set_state(saved)
    np.testing.assert_array_equal(other.get_state(), saved)
    for a, ref in zip(actions[10:], reference):
        other.step(a)
        np.testing.assert_array_equal(other.get_state(), ref)


def test_restoring_into_another_model_fails_clearly(scene):
    cube_sim = Sim(scene_with(cube_item()))
    cube_sim.reset(0)
    state = cube_sim.get_state()
    with pytest.raises(StateMismatchError, match="saved from model .* but this simulator runs model"):
        Sim(scene).set_state(state)
    sim = Sim(scene)
    with pytest.raises(StateMismatchError, match="missing header"):
        sim.set_state(np.zeros(10))
    good = sim.get_state()
    with pytest.raises(StateMismatchError, match="values"):
        sim.set_state(good[:-1])


def test_bad_actions_are_refused(scene):
    sim = Sim(scene)
    sim.reset(0)
    with pytest.raises(TeleopError, match="shape"):
        sim.step(np.zeros(57))
    bad = sim.joint_positions
    bad[3] = np.nan
    with pytest.raises(TeleopError, match="NaN"):
        sim.step(bad)


def test_stable_seed_is_fixed():
    # Pinned value: a change here would silently change every dataset's object placements.
    assert stable_seed("pick_up_peach", 0, 3) == stable_seed("pick_up_peach", 0, 3)
    assert stable_seed("pick_up_peach", 0, 3) != stable_seed("pick_up_peach", 0, 4)
    assert stable_seed("a", 1) == 6861350103018950465


def test_observation_poses_are_the_forward_kinematics_of_the_state_they_describe(scene):
    """After a step, the wrist poses in the observation belong to the same state as its joint
    positions (mj_step alone leaves them one substep behind)."""
    sim = Sim(scene)
    sim.reset(0)
    fresh = Sim(scene)
    for action in _actions(sim, 15, "fk-consistency"):
        obs = sim.step(action)
        fresh.set_state(sim.get_state())             # restores and runs forward kinematics
        np.testing.assert_array_equal(obs, fresh.observation())
