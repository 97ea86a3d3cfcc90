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


def _cost_by_definition(hs, u, target, mask, u_prev):
    """The documented objective (retarget/hand.py), written out term by term."""
    cfg = hs.cfg
    p = hs.keypoints(hs.q_of(u))
    w = hs.weights * mask
    tips = [8, 12, 16, 20]
    d = np.linalg.norm(target[4] - target[tips], axis=1)
    near, far = cfg.contact_distance
    x = np.clip((far - d) / (far - near), 0, 1)
    s_f = x * x * (3 - 2 * x) * mask[4] * mask[tips]
    s = np.r_[s_f.max(), s_f]                                    # thumb, index .. little
    nk = hs.neutral_keypoints
    chains = [(1, 2, 3, 4), (5, 6, 7, 8), (9, 10, 11, 12), (13, 14, 15, 16), (17, 18, 19, 20)]
    lo, hi = cfg.curl_contact
    for k, c in enumerate(chains):                               # a curled digit: positions too
        reach = sum(np.linalg.norm(nk[j] - nk[i]) for i, j in zip(c[:-1], c[1:]))
        curl = 1 - np.linalg.norm(target[c[3]] - target[c[0]]) / reach
        y = np.clip((curl - lo) / (hi - lo), 0, 1)
        s[k] = max(s[k], y * y * (3 - 2 * y) * mask[c[0]] * mask[c[3]])
    digit = [-1] + [k for k in range(5) for _ in range(4)]
    node_s = np.array([1.0] + [s[k] for k in digit[1:]])
    node_s[[1, 5, 9, 13, 17]] = 1.0                              # digit bases: always positions
    cost = np.sum(w * node_s * np.sum((p - target) ** 2, axis=1))
    pw = cfg.pinch_weight / (1 + (d / cfg.pinch_distance) ** 2) * mask[4] * mask[tips]
    cost += np.sum(pw * np.sum(((p[4] - p[tips]) - (target[4] - target[tips])) ** 2, axis=1))
    for k, chain in enumerate(chains):
        for i, j in zip(chain[:-1], chain[1:]):
            v = target[j] - target[i]
            want = np.linalg.norm(nk[j] - nk[i]) * v / np.linalg.norm(v)
            bw = cfg.bone_weight * hs.weights[j] * (1 - s[k]) * mask[i] * mask[j]
            cost += bw * np.sum((p[j] - p[i] - want) ** 2)
    cost += cfg.temporal_weight * np.sum((u - u_prev) ** 2) + cfg.rest_weight * np.sum((u - hs.u_rest) ** 2)
    return cost


def test_residual_jacobian_finite_differences_and_cost(scene, cfg):
    """The solver's stacked residuals (keypoints, pinch vectors, bones): FD Jacobian, and |r|^2 +
    regularisers = the documented cost."""
    hs = _solver(scene, cfg)
    assert cfg.bone_weight > 0                                    # the shipped cost has bone terms
    rng = stable_rng("hand-pinch")
    u = rng.uniform(hs.lo, hs.hi)
    u_prev = rng.uniform(hs.lo, hs.hi)
    target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi)))
    target[8] = target[4] + [0.004, 0.01, 0.0]                   # index in a near-pinch: mixed regime
    target[20] = target[17] + 0.45 * (target[20] - target[17])   # little finger curled: mixed regime
    mask = np.ones(21)
    mask[[7, 12]] = 0.0                                           # a joint node and a fingertip
    A, B = hs.terms(target, mask)
    At = hs.world_terms(A, B)
    r, Jr = hs.linearise(u, A, At)
    eps = 1e-6
    for j in range(u.size):
        du = np.zeros(u.size)
        du[j] = eps
        fd = (hs.linearise(u + du, A, At)[0] - hs.linearise(u - du, A, At)[0]) / (2 * eps)
        np.testing.assert_allclose(Jr[:, j], fd, atol=1e-7)
    cost = _cost_by_definition(hs, u, target, mask, u_prev)
    assert hs.objective(u, target, mask, u_prev) == pytest.approx(cost, rel=1e-10)
    reg = cfg.temporal_weight * np.sum((u - u_prev) ** 2) + cfg.rest_weight * np.sum((u - hs.u_rest) ** 2)
    assert r @ r == pytest.approx(cost - reg, rel=1e-10)


def _objective_trace(hs, target, mask, u0, iterations):
    """Objective after 0, 1, ... iterations of one solve warm-started at u0."""
    out = []
    for n in range(iterations + 1):
        hs.u = u0.copy()
        if n == 0:
            out.append(hs.objective(u0, target, mask, u0))
            continue
        sol = hs.solve(target, mask, iterations=n)
        out.append(hs.objective(hs.u, target, mask, u0))
        assert sol.cost == pytest.approx(out[-1], rel=1e-9, abs=1e-15)
    return np.array(out)


def test_solver_never_increases_its_objective(scene, cfg):
    """Proof test of the descent: from random starts (inside the box and on its faces) toward random,
    human-like and unreachable targets, every iteration's objective is <= the one before, and the
    answer's is <= the warm start's."""
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-descent")
    for trial in range(24):
        u0 = rng.uniform(hs.lo, hs.hi)
        if trial % 3 == 1:
            u0 = np.where(rng.random(u0.size) < 0.5, hs.lo, hs.hi)          # every joint on a bound
        kind = trial % 4
        if kind == 0:
            target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi)))
        elif kind == 1:
            target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi))) * rng.uniform(0.8, 1.2)   # other proportions
        elif kind == 2:
            target = hs.keypoints(hs.q_of(u0)) + rng.normal(0, 0.03, (21, 3))
        else:
            target = rng.normal(0, 0.12, (21, 3))                                 # nonsense
        mask = np.ones(21)
        if trial % 5 == 0:
            mask[rng.choice(np.arange(1, 21), 3, replace=False)] = 0.0
        trace = _objective_trace(hs, target, mask, u0, cfg.iterations)
        assert np.all(np.diff(trace) <= 1e-15 * max(1.0, trace[0])), (trial, trace)


def test_solver_started_from_dex_retargetings_answer_does_not_climb(scene, cfg):
    """The issue's observation: the old projected Gauss-Newton, started from dex-retargeting's answer,
    raised its own objective by 54 %. Any start: the answer's objective is at most the start's."""
    hs = _solver(scene, cfg)
    rng = stable_rng("hand-dex-start")
    try:
        from retarget.compare import DexHand, dex_available
        dex = DexHand(hs) if dex_available() else None
    except ImportError:                  # pragma: no cover - the bench extra is optional
        dex = None
    for _ in range(6):
        target = hs.keypoints(hs.q_of(rng.uniform(hs.lo, hs.hi))) * 1.1 + rng.normal(0, 0.002, (21, 3))
        if dex is not None:
            dex.reset(hs.q_of(hs.u_rest))
            for _ in range(5):
                q_dex = dex.solve(target)
            u0 = np.clip(np.linalg.lstsq(hs.C, q_dex - hs.c0, rcond=None)[0], hs.lo, hs.hi)
        else:
            u0 = rng.uniform(hs.lo, hs.hi)
        hs.u = u0.copy()
        sol = hs.solve(target)
        assert sol.cost <= sol.cost_start
        assert sol.cost_start == pytest.approx(hs.objective(u0, target, None, u0), rel=1e-9)


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
