"""URDF export of a hand (for dex-retargeting) and the side-by-side comparison helpers."""
import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from retarget.config import CONFIG_DIR, load_config, load_hand_config
from retarget.hand import HandSolver
from retarget.urdf import hand_urdf
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng


@pytest.fixture(scope="module")
def cfg():
    return load_config().hand


def test_urdf_has_our_joints_limits_and_keypoint_links(scene, cfg, tmp_path):
    out = hand_urdf(scene.model, cfg, "right", tmp_path / "hand.urdf")
    root = ET.parse(out.path).getroot()
    joints = {j.get("name"): j for j in root.iter("joint") if j.get("type") == "revolute"}
    assert set(joints) == set(cfg.joint_names("right")) and len(joints) == 22
    for name, j in joints.items():
        lim = j.find("limit")
        np.testing.assert_allclose([float(lim.get("lower")), float(lim.get("upper"))], scene.model.joint(name).range)
    links = {link.get("name") for link in root.iter("link")}
    assert set(out.keypoint_links) <= links and len(out.keypoint_links) == 21
    assert out.root_link == "right_palm" and out.free_joints == out.joint_names


def _check_urdf_fk(out, hs, rng):
    """Pinocchio FK of the exported URDF == our FK of the keypoints, at random (coupled) joints."""
    pin = pytest.importorskip("pinocchio", reason="pinocchio comes with the bench extra (dex-retargeting)")
    model = pin.buildModelFromUrdf(str(out.path))
    data = model.createData()
    names = [n for i, n in enumerate(model.names) if model.nqs[i] > 0]
    order = [names.index(n) for n in out.joint_names]
    for _ in range(3):
        q = hs.q_of(rng.uniform(hs.lo, hs.hi))
        qp = np.zeros(model.nq)
        qp[order] = q
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        got = np.array([data.oMf[model.getFrameId(link, pin.BODY)].translation for link in out.keypoint_links])
        np.testing.assert_allclose(got, hs.keypoints(q), atol=1e-9)


@pytest.mark.parametrize("side", ["left", "right"])
def test_urdf_forward_kinematics_matches_mujoco(scene, cfg, side, tmp_path):
    out = hand_urdf(scene.model, cfg, side, tmp_path / f"{side}.urdf")
    _check_urdf_fk(out, HandSolver(scene.model, cfg, side), stable_rng("urdf-fk", side))


def test_coupled_and_fixed_joints_export(tmp_path):
    pytest.importorskip("gymnasium_robotics", reason="the Shadow hand MJCF ships in gymnasium-robotics")
    sh = load_hand_config(CONFIG_DIR / "shadow_hand.yaml")
    out = hand_urdf(sh.load_model(), sh, "right", tmp_path / "shadow.urdf")
    root = ET.parse(out.path).getroot()
    mimics = {j.get("name"): j.find("mimic") for j in root.iter("joint") if j.find("mimic") is not None}
    assert set(mimics) == {"robot0:FFJ0", "robot0:MFJ0", "robot0:RFJ0", "robot0:LFJ0"}
    assert float(mimics["robot0:FFJ0"].get("multiplier")) == pytest.approx(1.1418)
    assert len(out.free_joints) == 18
    _check_urdf_fk(out, HandSolver(sh.load_model(), sh, "right"), stable_rng("urdf-fk-shadow"))


def test_bad_hand_for_export(scene, cfg, tmp_path):
    with pytest.raises(ConfigError, match="no body"):
        hand_urdf(scene.model, dataclasses.replace(cfg, root_body="{side}_paw"), "right", tmp_path / "x.urdf")
    short = dataclasses.replace(cfg, joints=cfg.joints[:-1])           # little_dip neither solved nor fixed
    with pytest.raises(ConfigError, match="little_dip"):
        hand_urdf(scene.model, short, "right", tmp_path / "x.urdf")


def test_dex_retargeting_follows_a_held_pose(scene, cfg, tmp_path):
    """Joint ordering and frames agree: dex-retargeting recovers a held pose of our hand."""
    pytest.importorskip("dex_retargeting", reason="dex-retargeting is the optional bench extra")
    from retarget import compare
    ours = HandSolver(scene.model, cfg, "right")
    dex = compare.DexHand(ours, tmp_path)
    q_true = ours.q_of(np.clip(ours.u_rest - 0.4, ours.lo, ours.hi))
    targets = np.repeat(ours.keypoints(q_true)[None], 40, axis=0)
    q0 = ours.q_of(ours.u_rest)
    r_dex, r_ours = compare.run_dex(dex, targets, q0), compare.run_ours(ours, targets, q0)
    truth = np.repeat(q_true[None], 40, axis=0)
    assert np.median(compare.keypoint_error_mm(ours, truth[-5:], r_ours.q[-5:])) < 0.5
    start = np.median(compare.keypoint_error_mm(ours, q0[None], q_true[None]))          # ~40 mm away
    # dex-retargeting's SLSQP stops on a loose absolute tolerance, so it settles a few mm off; a
    # wrong joint order or frame would leave it tens of mm away instead.
    assert np.median(compare.keypoint_error_mm(ours, truth[-5:], r_dex.q[-5:])) < min(8.0, 0.2 * start)
    assert r_dex.ms.shape == (40,) and np.all(r_dex.ms > 0)
