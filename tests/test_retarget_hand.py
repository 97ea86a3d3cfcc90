"""Hand solver: Jacobians, round trip, limits, step response, missing nodes, config errors."""
import dataclasses

import mujoco
import numpy as np
import pytest

from retarget.config import load_config
from retarget.hand import HandSolver
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng


@pytest.fixture(scope="module")
def cfg():
    return load_config().hand


def _solver(scene, cfg, side="right"):
    return HandSolver(scene.model, cfg, side)


@pytest.mark.parametrize("side", ["left", "right"])
def test_jacobian_matches_mj_jacsite_and_finite_differences(scene, cfg, side):
    hs = _solver(scene, cfg, side)
    rng = stable_rng("hand-jac", side)
    q = hs.q_of(rng.uniform(hs.lo, hs.hi))
    p, J = hs.keypoint_jacobian(q)
    # against MuJoCo's own site Jacobian (world frame, rotated into the palm frame)
    m, d = scene.model, hs.chain.data
    jp = np.zeros((3, m.nv))
    dofs = m.jnt_dofadr[hs.chain.jids]
    mujoco.mj_comPos(m, d)                      # mj_jac* needs cdof, which mj_kinematics leaves out
    for k, name in enumerate(scene.layout.hands[side].keypoints):
        mujoco.mj_jacSite(m, d, jp, None, m.site(name).id)
        np.testing.assert_allclose(J[k], hs.root_rot.T @ jp[:, dofs], atol=1e-12)
    eps = 1e-6
    for j in range(q.size):
        dq = np.zeros(q.size)
        dq[j] = eps
        fd = (hs.keypoints(q + dq) - hs.keypoints(q - dq)) / (2 * eps)
        np.testing.assert_allclose(J[:, :, j], fd, atol=1e-8)


def test_residual_jacobian_finite_differences_and_cost(scene, cfg):
    """The solver's stacked residuals (keypoints + pinch terms): FD Jacobian, and |r|^2 = the cost."""
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-pinch")
    u = rng.uniform(hs.lo, hs.hi)
    target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi)))
    mask = np.ones(21)
    mask[[7, 12]] = 0.0                                           # a joint node and a fingertip
    A = hs.term_matrix(target, mask)
    At = A @ (hs.root_pos + target @ hs.root_rot.T)
    r, Jr = hs.linearise(u, A, At)
    eps = 1e-6
    for j in range(u.size):
        du = np.zeros(u.size)
        du[j] = eps
        fd = (hs.linearise(u + du, A, At)[0] - hs.linearise(u - du, A, At)[0]) / (2 * eps)
        np.testing.assert_allclose(Jr[:, j], fd, atol=1e-7)
    p = hs.keypoints(hs.q_of(u))
    w, pw = hs.weights * mask, hs.pinch_weights(target) * mask[4] * mask[[8, 12, 16, 20]]
    tips = [8, 12, 16, 20]
    cost = np.sum(w * np.sum((p - target) ** 2, axis=1)) + \
        np.sum(pw * np.sum(((p[4] - p[tips]) - (target[4] - target[tips])) ** 2, axis=1))
    assert r @ r == pytest.approx(cost, rel=1e-10)


def test_round_trip_random_joints(scene, cfg):
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-roundtrip")
    errs = []
    for _ in range(20):
        target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi)))
        hs.reset()
        for _ in range(3):                      # three ticks of the same target (warm-started)
            sol = hs.solve(target)
        errs.append(np.median(sol.residual_mm))
        assert np.all(sol.q >= hs.chain.lower) and np.all(sol.q <= hs.chain.upper)
    assert np.median(errs) < 2.0


def test_limits_never_violated_on_unreachable_targets(scene, cfg):
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-far")
    for _ in range(10):
        target = rng.normal(0, 0.15, (21, 3))
        sol = hs.solve(target)
        assert np.all(np.isfinite(sol.q))
        assert np.all(sol.q >= hs.chain.lower - 1e-12) and np.all(sol.q <= hs.chain.upper + 1e-12)
    assert sol.at_limits                      # such targets push joints into their bounds


def test_step_change_response_is_bounded_and_smooth(scene, cfg):
    hs = _solver(scene, cfg)
    a = np.clip(np.zeros(22), hs.lo, hs.hi)
    b = np.clip(a - 0.6, hs.lo, hs.hi)          # a clear curl of every digit
    ta, tb = hs.keypoints(a), hs.keypoints(b)
    hs.reset(a)
    for _ in range(3):
        hs.solve(ta)
    traj = np.array([hs.solve(tb).q for _ in range(15)])
    lo, hi = np.minimum(a, b) - 0.05, np.maximum(a, b) + 0.05
    assert np.all(traj >= lo) and np.all(traj <= hi)      # no overshoot past either pose
    assert np.median(np.linalg.norm(hs.keypoints(traj[-1]) - tb, axis=1)) * 1e3 < 2.0
    # settled: the last steps move the joints by a vanishing amount
    assert np.abs(np.diff(traj[-4:], axis=0)).max() < 1e-3


def test_missing_nodes_get_zero_weight(scene, cfg):
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-missing")
    target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi)))
    mask = np.ones(21)
    mask[[8, 12]] = 0.0
    garbage = target.copy()
    garbage[[8, 12]] = 5.0                     # far away: must be ignored
    for _ in range(4):
        sol = hs.solve(garbage, mask)
    assert np.median(sol.residual_mm[mask > 0]) < 2.0


def test_hand_config_errors(cfg):
    with pytest.raises(ConfigError, match="21 entries"):
        dataclasses.replace(cfg, keypoints=cfg.keypoints[:20])
    with pytest.raises(ConfigError, match="unknown key 'pinky'"):
        dataclasses.replace(cfg, keypoint_weights={"pinky": 1.0})
    with pytest.raises(ConfigError, match="handedness"):
        dataclasses.replace(cfg, handedness="both")


def test_unknown_names_in_model(scene, cfg):
    bad = dataclasses.replace(cfg, joints=(*cfg.joints[:-1], "{side}_little_knuckle"))
    with pytest.raises(ConfigError, match="little_knuckle"):
        HandSolver(scene.model, bad, "right")
    bad = dataclasses.replace(cfg, keypoints=({"site": "{side}_wristy"}, *cfg.keypoints[1:]))
    with pytest.raises(ConfigError, match="wristy"):
        HandSolver(scene.model, bad, "right")
