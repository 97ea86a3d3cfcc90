"""The bimanual retargeter: config, round trip, health, holding on failure, smoothness."""
import dataclasses
import logging

import numpy as np
import pytest

from retarget import HandInput, OperatorInput, OperatorProfile, RetargetInputError, load_config
from retarget.config import CONFIG_DIR
from retarget.synthetic import RobotToHuman, smooth_trajectory
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng


@pytest.fixture()
def rig(scene):
    rt = load_config().build(scene, OperatorProfile(hand_length=0.185))
    return rt, RobotToHuman(rt, scene)


def _kp_err_mm(h, q_true, q_got):
    a, b = h.robot_keypoints(q_true), h.robot_keypoints(q_got)
    return np.concatenate([np.linalg.norm(a[s][2] - b[s][2], axis=1) for s in a]) * 1e3


def test_round_trip_random_reachable_poses(scene, rig):
    rt, h = rig
    rng = stable_rng("bimanual-roundtrip")
    ready = rt.last.copy()
    lo, hi = scene.model.jnt_range[[scene.model.joint(n).id for n in scene.layout.action_joints]].T
    errs = []
    for _ in range(6):
        q = np.clip(ready + rng.normal(0, 0.25, 58) * np.where(np.arange(58) < 14, 1.0, hi - lo), lo, hi)
        inp = h.operator_input(q)
        for _ in range(25):                  # a jump: the smoothness term spreads it over ticks
            res = rt.step(inp)
        assert res.status == "ok", res.sides
        errs.append(np.median(_kp_err_mm(h, q, res.targets)))
        assert np.all(res.targets >= lo - 1e-9) and np.all(res.targets <= hi + 1e-9)
    assert np.median(errs) < 2.0


def test_result_layout_and_health(scene, rig):
    rt, h = rig
    res = rt.step(h.operator_input(rt.last.copy()))
    assert res.targets.shape == (58,) and set(res.sides) == {"left", "right"}
    right = res.sides["right"]
    assert right.residual_mm.shape == (21,) and right.status == "ok" and right.hand_ms > 0 and right.arm_ms > 0
    assert res.solve_ms > 0


def test_nan_input_holds_last_targets_and_says_so(rig, caplog):
    rt, h = rig
    good = rt.step(h.operator_input(rt.last.copy()))
    inp = h.operator_input(rt.last.copy())
    kp = inp.hands["left"].keypoints.copy()
    kp[4] = np.nan
    bad = OperatorInput(inp.head_pos, inp.head_rot, {**inp.hands, "left": HandInput(kp)})
    with caplog.at_level(logging.WARNING, logger="retarget"):
        res = rt.step(bad)
    assert res.status == "held" and res.sides["left"].status == "held"
    assert "thumb_tip" in res.sides["left"].message and "thumb_tip" in caplog.text
    left = list(rt.idx["left"][0]) + list(rt.idx["left"][1])
    np.testing.assert_array_equal(res.targets[left], good.targets[left])
    assert res.sides["right"].status == "ok"


def test_untracked_hand_reports_no_input(rig):
    rt, h = rig
    inp = h.operator_input(rt.last.copy())
    res = rt.step(OperatorInput(inp.head_pos, inp.head_rot, {"right": inp.hands["right"]}))
    assert res.sides["left"].status == "no_input" and res.status == "no_input"


def test_wrong_shapes_raise(rig):
    rt, h = rig
    inp = h.operator_input(rt.last.copy())
    with pytest.raises(RetargetInputError, match="head_rot"):
        rt.step(OperatorInput(inp.head_pos, np.eye(4), inp.hands))
    with pytest.raises(RetargetInputError, match=r"left keypoints must have shape \(21, 3\)"):
        rt.step(OperatorInput(inp.head_pos, inp.head_rot, {**inp.hands, "left": HandInput(np.zeros((25, 3)))}))
    with pytest.raises(RetargetInputError, match="unknown hand side"):
        rt.step(OperatorInput(inp.head_pos, inp.head_rot, {"middle": inp.hands["left"]}))


def test_stream_is_smooth_and_within_limits(scene, rig):
    rt, h = rig
    rng = stable_rng("bimanual-stream")
    traj = smooth_trajectory(scene, 60, rng)
    lo, hi = scene.model.jnt_range[[scene.model.joint(n).id for n in scene.layout.action_joints]].T
    out = np.array([rt.step(h.operator_input(q)).targets for q in traj])     # noise-free: the solver's own chatter
    assert np.all(out >= lo - 1e-9) and np.all(out <= hi + 1e-9)
    dt = scene.control_dt
    acc_out = np.abs(np.diff(out[5:], 2, axis=0)).max(axis=0) / dt ** 2
    acc_in = np.abs(np.diff(traj[5:], 2, axis=0)).max(axis=0) / dt ** 2
    assert np.median(acc_out) < 3 * np.median(acc_in) + 1.0       # no chatter on top of the motion


def test_step_change_of_wrist_target_is_bounded(scene, rig):
    rt, h = rig
    q0 = rt.last.copy()
    q1 = q0.copy()
    # both arms swing outward (the inward step would bring the hands 1 cm apart, inside the
    # separation margin: test_hands_brought_together_keep_the_separation_margin)
    q1[:14] += np.tile([0.25, 0.2, 0.0, 0.2, 0.0, 0.0, 0.0], 2) * np.repeat([1, -1], 7)
    for _ in range(3):
        rt.step(h.operator_input(q0))
    path = np.array([rt.step(h.operator_input(q1)).targets for _ in range(12)])
    err = [np.median(_kp_err_mm(h, q1, q)) for q in path]
    assert err[-1] < 3.0
    assert max(err[3:]) <= err[2] + 1.0                           # converges without overshoot growth


def test_config_validation(tmp_path):
    cfg = load_config()
    with pytest.raises(ConfigError, match="operator_rotation"):
        dataclasses.replace(cfg, operator_rotation=((1, 0, 0), (0, 1, 0), (0, 0, -1)))
    with pytest.raises(ConfigError, match="n_solved"):
        dataclasses.replace(cfg.arm, n_solved=4)
    text = (CONFIG_DIR / "bidex.yaml").read_text().replace("max_iter:", "max_iters:")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="max_iters"):
        load_config(path)
    path.write_text("name: x\n")
    with pytest.raises(ConfigError, match="'arm' and 'hand'"):
        load_config(path)


def _jitter_and_error(scene, cfg, ticks=80, noise_m=1e-3):
    """(RMS extra joint acceleration rad/s^2, median keypoint error mm) on a noisy smooth stream."""
    rt = cfg.build(scene, OperatorProfile(hand_length=0.185))
    h = RobotToHuman(rt, scene)
    rng = stable_rng("bimanual-jitter")
    traj = smooth_trajectory(scene, ticks, rng)
    out, errs = [], []
    for q in traj:
        out.append(rt.step(h.operator_input(q, noise_m, rng)).targets)
        errs.append(_kp_err_mm(h, q, out[-1]))
    out, traj = np.array(out)[10:], traj[10:]
    extra = np.diff(out, 2, axis=0) - np.diff(traj, 2, axis=0)
    return float(np.sqrt(np.mean(extra ** 2))) / scene.control_dt ** 2, float(np.median(errs[10:]))


def test_jitter_on_a_noisy_stream_is_bounded(scene):
    """1 mm keypoint noise: the input filters keep the added joint acceleration low, error stays low."""
    from retarget.filters import FilterConfig
    cfg = load_config()
    jitter, err = _jitter_and_error(scene, cfg)
    assert jitter < 30.0 and err < 4.0
    off = FilterConfig()
    raw = dataclasses.replace(cfg, hand_filter=off, rotation_filter=off, wrist_filter=off,
                              hand=dataclasses.replace(cfg.hand, temporal_weight=1e-5))
    jitter_raw, err_raw = _jitter_and_error(scene, raw)
    assert jitter_raw > 3 * jitter                 # the bound is the filters' doing, not a quiet stream
    assert err < err_raw + 0.5                     # ...and it costs (almost) no accuracy


def test_timestamps_set_the_filter_sample_time(rig):
    rt, h = rig
    inp = h.operator_input(rt.last.copy())
    assert rt._tick_dt(None) == rt.dt
    assert rt._tick_dt(10.0) == rt.dt                 # first stamp: nothing to difference yet
    assert rt._tick_dt(10.02) == pytest.approx(0.02)
    assert rt._tick_dt(10.02) == rt.dt                # repeated / backwards stamps fall back to a tick
    res = rt.step(OperatorInput(inp.head_pos, inp.head_rot, inp.hands, time=11.0))
    assert res.status == "ok"


def test_filter_sections_are_validated(tmp_path):
    text = (CONFIG_DIR / "bidex.yaml").read_text().replace("hand_filter: {min_cutoff_hz: 1.0,",
                                                          "hand_filter: {min_cutoff: 1.0,")
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="hand_filter: unknown field 'min_cutoff'"):
        load_config(path)
    cfg = load_config()
    assert cfg.hand_filter.enabled and cfg.rotation_filter.enabled and not cfg.wrist_filter.enabled


def _geom_separation(scene, q58) -> float:
    """Smallest distance (m) between any left-robot and right-robot collision geom at joints q58."""
    import mujoco
    from teleop.robot import ROBOT_BITS
    m = scene.model
    d = mujoco.MjData(m)
    d.qpos[[m.joint(n).qposadr[0] for n in scene.layout.action_joints]] = q58
    mujoco.mj_kinematics(m, d)
    left = [g for g in range(m.ngeom) if m.geom_contype[g] & ROBOT_BITS == 2]
    right = [g for g in range(m.ngeom) if m.geom_contype[g] & ROBOT_BITS == 4]
    return min(mujoco.mj_geomDistance(m, d, a, b, 0.5, None) for a in left for b in right)


def test_hands_brought_together_keep_the_separation_margin(scene, rig):
    """A target that puts the hands 1 cm apart: the commanded poses stop at the margin (3.5 cm between
    the two sides' collision geometry), every tick of the way, instead of passing into each other."""
    rt, h = rig
    q0 = rt.last.copy()
    q1 = q0.copy()
    q1[:14] += np.tile([0.25, 0.2, 0.0, 0.2, 0.0, 0.0, 0.0], 2) * np.repeat([-1, 1], 7)
    assert _geom_separation(scene, q1) < 0.015
    margin = rt.cfg.separation.margin
    for _ in range(15):
        res = rt.step(h.operator_input(q1))
        assert rt.separation() > margin - 0.002
        assert _geom_separation(scene, res.targets) > 0.02
    assert res.status == "ok", res.sides
