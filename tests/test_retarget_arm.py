"""Arm solver: analytic gradient, closed-form wrist, round trip, unreachable targets, limits."""
import numpy as np
import pytest

from retarget.arm import ArmSolver, rotation
from retarget.config import load_config
from teleop.core.seeding import stable_rng


def _solver(scene, side="right"):
    cfg = load_config().arm
    ready = scene.layout.ready_qpos(scene.params)
    q0 = np.array([ready[n] for n in cfg.joint_names(side)])
    return ArmSolver(scene.model, cfg, side, q0), q0


@pytest.mark.parametrize("side", ["left", "right"])
def test_cost_gradient_matches_finite_differences(scene, side):
    arm, q0 = _solver(scene, side)
    rng = stable_rng("arm-grad", side)
    p_star, R_star = arm.pose(q0 + rng.normal(0, 0.3, 7))
    x, wrist, x_prev = q0[:5] + rng.normal(0, 0.2, 5), q0[5:], q0[:5]
    g = arm.gradient(x, wrist, p_star, R_star, x_prev)
    eps = 1e-6
    fd = [(arm.cost(x + e, wrist, p_star, R_star, x_prev) - arm.cost(x - e, wrist, p_star, R_star, x_prev)) / (2 * eps)
          for e in np.eye(5) * eps]
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)


def test_preconditioner_whitens_the_gauss_newton_hessian(scene):
    arm, q0 = _solver(scene)
    S = arm._preconditioner(q0[:5], q0[5:])
    assert np.all(np.isfinite(S)) and abs(np.linalg.det(S)) > 0


def test_closed_form_wrist_recovers_the_last_two_joints(scene):
    arm, q0 = _solver(scene)
    rng = stable_rng("arm-wrist")
    for _ in range(10):
        q = np.clip(q0 + rng.normal(0, 0.5, 7), arm.chain.lower, arm.chain.upper)
        _, R = arm.pose(q)
        w = arm.wrist_closed_form(q[:5], R, q)
        _, R2 = arm.pose(np.concatenate([q[:5], w]))
        np.testing.assert_allclose(R2, R, atol=1e-9)


def test_rotation_is_rodrigues():
    axis = np.array([0.0, 0.0, 1.0])
    np.testing.assert_allclose(rotation(axis, np.pi / 2) @ [1, 0, 0], [0, 1, 0], atol=1e-12)


def test_round_trip_random_reachable_poses(scene):
    arm, q0 = _solver(scene)
    rng = stable_rng("arm-roundtrip")
    pos, rot = [], []
    for _ in range(15):
        q = np.clip(q0 + rng.normal(0, 0.3, 7), arm.chain.lower, arm.chain.upper)
        p, R = arm.pose(q)
        arm.reset(q0)
        for _ in range(6):
            sol = arm.solve(p, R)
        pos.append(sol.pos_err_mm)
        rot.append(sol.rot_err_deg)
        assert np.all(sol.q >= arm.chain.lower) and np.all(sol.q <= arm.chain.upper)
    assert np.median(pos) < 2.0 and np.median(rot) < 1.0


def test_unreachable_target_gives_closest_pose_without_error(scene):
    arm, q0 = _solver(scene)
    far = arm.shoulder + np.array([3.0, 0.0, 0.0])
    fingers_forward = rotation(np.array([0.0, 1.0, 0.0]), np.pi / 2)     # palm z along +x
    for _ in range(10):
        sol = arm.solve(far, fingers_forward)
    assert np.all(np.isfinite(sol.q))
    assert np.all(sol.q >= arm.chain.lower) and np.all(sol.q <= arm.chain.upper)
    p, _ = arm.pose(sol.q)
    reach = np.linalg.norm(p - arm.shoulder)
    assert reach > 0.75                                  # stretched toward the target
    direction = (p - arm.shoulder) / reach
    assert direction @ [1, 0, 0] > 0.99
    assert sol.pos_err_mm == pytest.approx((3.0 - reach) * 1e3, rel=0.05)


def test_direct_slsqp_driver_matches_scipy_minimize(scene):
    """The lean SLSQP driver (retarget.slsqp) and scipy.optimize.minimize give the same solves."""
    rng = stable_rng("arm-slsqp-driver")
    fast, q0 = _solver(scene)
    slow, _ = _solver(scene)
    slow.direct_slsqp = False
    for _ in range(8):
        p_star, R_star = fast.pose(np.clip(q0 + rng.normal(0, 0.3, 7), fast.chain.lower, fast.chain.upper))
        a, b = fast.solve(p_star, R_star), slow.solve(p_star, R_star)
        np.testing.assert_allclose(a.q, b.q, atol=1e-9)
        assert a.iterations == b.iterations
