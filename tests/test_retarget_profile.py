"""Operator profile: defaults, YAML save/load, calibration from held poses."""
import dataclasses

import numpy as np
import pytest

from retarget.nodes import RetargetInputError
from retarget.profile import DEFAULT_PROFILE, CalibrationSample, OperatorProfile, calibrate, finger_length
from teleop.core.errors import ConfigError


def test_save_load_round_trip(tmp_path):
    prof = OperatorProfile(name="ana", upper_arm=0.31, forearm=0.26, shoulder_left=(-0.04, 0.19, -0.24),
                           shoulder_right=(-0.04, -0.19, -0.24), hand_length=0.18)
    path = tmp_path / "ana.yaml"
    prof.save(path)
    assert OperatorProfile.load(path) == prof
    assert DEFAULT_PROFILE.arm_length == pytest.approx(0.57)


def test_load_rejects_bad_files(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: x\nforearm_len: 0.3\n")
    with pytest.raises(ConfigError, match="forearm_len"):
        OperatorProfile.load(path)
    path.write_text("name: x\nforearm: -0.3\n")
    with pytest.raises(ConfigError, match="forearm"):
        OperatorProfile.load(path)
    with pytest.raises(ConfigError, match="cannot read"):
        OperatorProfile.load(tmp_path / "missing.yaml")


def _samples(prof: OperatorProfile, yaw: float, with_elbows: bool):
    c, s = np.cos(yaw), np.sin(yaw)
    head_rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    head = np.array([0.3, -0.2, 1.7])
    out = []
    for pose, dirs in {"t_pose": {"left": [0, 1, 0], "right": [0, -1, 0]},
                       "arms_forward": {"left": [1, 0, 0], "right": [1, 0, 0]}}.items():
        wrists, elbows = {}, {}
        for side in ("left", "right"):
            shoulder = head + head_rot @ prof.shoulder(side)
            d = head_rot @ np.asarray(dirs[side], float)
            elbows[side] = shoulder + prof.upper_arm * d
            wrists[side] = shoulder + prof.arm_length * d
        out.append(CalibrationSample(pose, head, head_rot, wrists, elbows if with_elbows else None))
    return out


@pytest.mark.parametrize("with_elbows", [True, False])
def test_calibration_recovers_the_operator(with_elbows):
    truth = OperatorProfile(upper_arm=0.33, forearm=0.25, shoulder_left=(-0.06, 0.2, -0.27),
                            shoulder_right=(-0.06, -0.2, -0.27))
    prof = calibrate(_samples(truth, yaw=0.4, with_elbows=with_elbows))
    np.testing.assert_allclose(prof.shoulder_left, truth.shoulder_left, atol=1e-9)
    np.testing.assert_allclose(prof.shoulder_right, truth.shoulder_right, atol=1e-9)
    assert prof.arm_length == pytest.approx(truth.arm_length)
    if with_elbows:
        assert prof.upper_arm == pytest.approx(0.33)


def test_calibration_needs_two_poses_and_finite_wrists():
    samples = _samples(DEFAULT_PROFILE, 0.0, False)
    with pytest.raises(RetargetInputError, match="two different poses"):
        calibrate(samples[:1])
    bad = dataclasses.replace(samples[0], wrists={"left": [np.nan] * 3, "right": [0, 0, 0]})
    with pytest.raises(RetargetInputError, match="left wrist"):
        calibrate([bad, samples[1]])
    with pytest.raises(RetargetInputError, match="unknown pose"):
        calibrate([dataclasses.replace(samples[0], pose="y_pose"), samples[1]])


def test_hand_length_from_nodes():
    nodes = np.zeros((21, 3))
    nodes[[9, 10, 11, 12], 2] = [0.1, 0.15, 0.18, 0.2]
    assert finger_length(nodes) == pytest.approx(0.2)
    samples = _samples(DEFAULT_PROFILE, 0.0, False)
    samples[0] = dataclasses.replace(samples[0], hands={"left": nodes, "right": nodes})
    assert calibrate(samples).hand_length == pytest.approx(0.2)
