"""The embodiment: it compiles cleanly, is stable, tracks targets, grasps, and mirrors."""
import mujoco
import numpy as np
import pytest

from grasping import cube_item, cylinder_item, grasp_and_lift, scene_with
from helpers import arm_indices, hand_indices
from teleop.robot import SIDES, load_params
from teleop.core.seeding import stable_rng
from teleop.sim import Sim


def test_layout_has_58_actions_in_documented_order(scene):
    names = scene.layout.action_joints
    assert len(names) == 58 == scene.model.nu == len(set(names))
    assert names[:7] == tuple(f"left_arm_j{i}" for i in range(1, 8))
    assert names[7:14] == tuple(f"right_arm_j{i}" for i in range(1, 8))
    assert all(n.startswith("left_") for n in names[14:36])
    assert all(n.startswith("right_") for n in names[36:])
    for side in SIDES:
        hand = scene.layout.hands[side]
        assert len(hand.joints) == 22 and len(hand.keypoints) == 21 and len(hand.fingertips) == 5
        for site in hand.keypoints:
            scene.model.site(site)            # raises if a keypoint site is missing
    assert scene.layout.cameras == ("head", "left_wrist", "right_wrist")
    assert scene.model.opt.timestep == 0.002 and scene.substeps == 20
    assert scene.model.opt.integrator == mujoco.mjtIntegrator.mjINT_IMPLICITFAST


def test_arm_matches_fr3_limits(scene):
    params = load_params()
    for side in SIDES:
        for name, link in zip(scene.layout.arm_joints[side], params.arm.links):
            np.testing.assert_allclose(scene.model.jnt_range[scene.model.joint(name).id], link.range)


def test_random_targets_for_two_seconds_stay_stable(scene):
    sim = Sim(scene)
    sim.reset(0)
    rng = stable_rng("stability")
    for tick in range(50):                     # 2 s at 25 Hz
        if tick % 5 == 0:
            target = rng.uniform(sim.ctrl_low, sim.ctrl_high)
        obs = sim.step(target)
        assert np.all(np.isfinite(obs))
        assert np.all(np.abs(sim.data.qvel) < 50.0), "joint speeds blew up"
    assert all(w.number == 0 for w in sim.data.warning), [w.number for w in sim.data.warning]


def test_every_actuator_tracks_a_step_target(scene):
    sim = Sim(scene)
    sim.reset(0)
    start = sim.joint_positions
    span = sim.ctrl_high - sim.ctrl_low
    # A step of 15% of each joint's range, toward the middle of the range.
    direction = np.sign((sim.ctrl_low + sim.ctrl_high) / 2 - start)
    direction[direction == 0] = 1
    target = start + 0.15 * span * direction
    for _ in range(25):                        # 1 s
        sim.step(target)
    err = np.abs(sim.joint_positions - target)
    worst = int(np.argmax(err))
    assert err.max() < 0.03, f"{scene.layout.action_joints[worst]} off by {err[worst]:.4f} rad"
    assert np.abs(sim.data.qvel[sim.qvel_idx]).max() < 0.05   # settled, no oscillation


@pytest.mark.parametrize("make_item", [cube_item, cylinder_item], ids=["cube_5cm", "cylinder_300g"])
def test_scripted_grasp_lifts_and_holds(make_item):
    item = make_item()
    sim = Sim(scene_with(item))
    sim.reset(0)
    trace = grasp_and_lift(sim, item, lift=0.10, hold=2.0)
    lifted = trace[-1][2] - item.pos[2]
    assert lifted > 0.08, f"{item.name} lifted only {lifted * 100:.1f} cm"
    assert np.linalg.norm(trace[-1] - trace[0]) < 0.02, f"{item.name} slipped during the 2 s hold"
    assert all(w.number == 0 for w in sim.data.warning)


def _palm_frame_tips(sim: Sim, side: str) -> np.ndarray:
    """Fingertip and keypoint positions (21, 3) in the side's palm frame."""
    d, m = sim.data, sim.model
    palm = m.body(sim.scene.layout.hands[side].palm_body).id
    rot, origin = d.xmat[palm].reshape(3, 3), d.xpos[palm]
    pts = np.array([d.site_xpos[m.site(s).id] for s in sim.scene.layout.hands[side].keypoints])
    return (pts - origin) @ rot


def test_left_hand_is_a_true_mirror(scene):
    sim = Sim(scene)
    sim.reset(0)
    rng = stable_rng("mirror")
    li, ri = hand_indices(sim, "left"), hand_indices(sim, "right")
    for _ in range(5):
        q = rng.uniform(sim.ctrl_low[ri], sim.ctrl_high[ri])
        sim.data.qpos[sim.qpos_idx[li]] = q    # mirrored joint vector = the same values
        sim.data.qpos[sim.qpos_idx[ri]] = q
        mujoco.mj_kinematics(sim.model, sim.data)
        left, right = _palm_frame_tips(sim, "left"), _palm_frame_tips(sim, "right")
        np.testing.assert_allclose(left, right * [1, -1, 1], atol=1e-9)
    np.testing.assert_array_equal(sim.ctrl_low[li], sim.ctrl_low[ri])


def test_ready_pose_is_mirror_symmetric_in_the_world(scene):
    sim = Sim(scene)
    sim.reset(0)
    for lsite, rsite in zip(scene.layout.hands["left"].keypoints, scene.layout.hands["right"].keypoints):
        left = sim.data.site(lsite).xpos
        right = sim.data.site(rsite).xpos
        np.testing.assert_allclose(left, right * [1, -1, 1], atol=2e-4)


def test_the_two_sides_collide_with_each_other_but_never_with_themselves(scene):
    """Robot-robot contacts are on between the two arms/hands (they used to pass through each other),
    off within one side (its links overlap at the joints by construction)."""
    from teleop.robot import ROBOT_BITS
    m = scene.model
    side_of = {}
    for g in range(m.ngeom):
        if m.geom_contype[g] & ROBOT_BITS:
            side_of[g] = "left" if m.geom_contype[g] == 2 else "right"
    assert len(side_of) > 40
    for g1, s1 in side_of.items():
        for g2, s2 in list(side_of.items())[:60]:
            pair = bool(m.geom_contype[g1] & m.geom_conaffinity[g2]) or \
                bool(m.geom_contype[g2] & m.geom_conaffinity[g1])
            assert pair == (s1 != s2), (m.geom(g1).name, m.geom(g2).name)
    table = m.geom("table_top").id
    for g in side_of:                                            # and every robot geom touches the world
        assert m.geom_contype[g] & m.geom_conaffinity[table] or m.geom_contype[table] & m.geom_conaffinity[g]
    # Drive the hands through each other (both shoulders swing inward at 1 rad/s): physics stops them.
    sim = Sim(scene)
    sim.reset(0)
    target = sim.joint_positions
    li, ri = arm_indices(sim, "left"), arm_indices(sim, "right")
    depth = []
    for k in range(60):
        if k < 25:
            target[li[0]] -= 0.04
            target[ri[0]] += 0.04
        sim.step(target)
        d = sim.data
        depth.append(min([d.contact[i].dist for i in range(d.ncon)
                          if {side_of.get(d.contact[i].geom1), side_of.get(d.contact[i].geom2)} == {"left", "right"}],
                         default=np.inf))
    assert np.isfinite(depth).any(), "the two sides never touched"
    assert min(depth) > -0.01                      # pressed together at full torque: soft contact only
    assert depth[-1] > -0.003                      # and at rest they lean on each other, not through
    assert all(w.number == 0 for w in sim.data.warning)
