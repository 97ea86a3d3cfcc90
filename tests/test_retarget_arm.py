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
    x, x_prev = q0 + rng.normal(0, 0.2, 7), q0
    x[3] = arm.upper[3] - 0.03                       # inside the limit margin: the limit term is active
    g = arm.gradient(x, p_star, R_star, x_prev)
    eps = 1e-6
    fd = [(arm.cost(x + e, p_star, R_star, x_prev) - arm.cost(x - e, p_star, R_star, x_prev)) / (2 * eps)
          for e in np.eye(7) * eps]
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-9)


def test_preconditioner_whitens_the_gauss_newton_hessian(scene):
    arm, q0 = _solver(scene)
    S = arm._preconditioner(q0)
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


def test_wrist_target_past_a_limit_is_unwrapped_not_flipped(scene):
    """The issue's wrist spin: a palm turning steadily past the last joint's range must not make
    joint 7 jump to the opposite limit (the old rule picked the in-range 2*pi-equivalent, 6.1 rad
    away). Unwrapped against the last answer, then clipped: the output never jumps."""
    arm, q0 = _solver(scene)
    q = q0.copy()
    q[6] = arm.upper[6] - 0.2
    arm.reset(q)
    p, R = arm.pose(q)
    axis = R[:, 2]                              # the palm's long axis = joint 7's axis
    prev = q.copy()
    for k in range(40):                         # turn 0.8 rad further, 0.02 rad per tick
        sol = arm.solve(p, rotation(axis, 0.02 * (k + 1)) @ R)
        assert np.max(np.abs(sol.q - prev)) < 0.3, (k, sol.q - prev)
        assert sol.q[6] > 0                                   # never flipped to the far limit
        prev = sol.q
    assert arm._unwrap(3.1, 6, 3.0) == pytest.approx(arm.upper[6])      # clipped at the near limit
    assert arm._unwrap(-3.1 + 2 * np.pi, 6, -3.0) == pytest.approx(arm.lower[6])


def test_trust_region_bounds_every_joint_step(scene):
    arm, q0 = _solver(scene)
    rng = stable_rng("arm-trust")
    q1 = np.clip(q0 + rng.normal(0, 0.8, 7), arm.lower, arm.upper)
    p, R = arm.pose(q1)
    prev = q0.copy()
    for _ in range(30):
        sol = arm.solve(p, R)
        assert np.max(np.abs(sol.q - prev)) <= arm.cfg.max_step + 1e-12
        prev = sol.q
    assert sol.pos_err_mm < 2.0


def test_a_warm_start_on_a_joint_limit_escapes_to_a_configuration_that_reaches(scene):
    """The issue's case: the warm start sits on joint 3's lower limit and misses a target a nearby
    joint vector within the limits reaches exactly. The escape search finds it and the arm moves
    there in bounded steps."""
    arm, q0 = _solver(scene)
    rng = stable_rng("arm-escape")
    found = 0
    for _ in range(16):
        q_true = np.clip(q0 + rng.normal(0, 0.3, 7), arm.lower + 0.3, arm.upper - 0.3)
        q_true[2] = arm.lower[2] + 0.5
        p, R = arm.pose(q_true)
        stuck = q_true + rng.normal(0, 0.3, 7)
        stuck[2] = arm.lower[2]                   # joint 3 on its lower limit, the answer 0.5 rad away
        stuck = np.clip(stuck, arm.lower, arm.upper)
        arm.reset(stuck)
        arm._last_target = (p.copy(), R.copy())   # a steady target, not a jump: only the escape helps
        if arm.solve(p, R).pos_err_mm < arm.cfg.escape_error_mm:
            continue                              # the local walk alone gets there: not this case
        found += 1
        prev = arm.q.copy()
        for _ in range(40):
            sol = arm.solve(p, R)
            assert np.max(np.abs(sol.q - prev)) <= arm.cfg.max_step + 1e-12
            prev = sol.q
        assert sol.pos_err_mm < 10.0, sol
    assert found >= 2


def test_a_jump_picks_the_configuration_family_nearest_the_rest_posture(scene):
    """After a jump of the target, the arm searches starts across the joint box: among answers that
    reach, it takes the one nearest its rest posture, never one farther than where the local walk
    alone would end. The case: from the ready pose to the palm low over the table, fingers forward,
    where the walk alone ends with joint 5 on its limit (a flipped wrist that cannot then follow a
    person's forearm turning) while the ready pose's own family reaches it."""
    import dataclasses
    arm, q0 = _solver(scene, "left")
    walk = ArmSolver(scene.model, dataclasses.replace(arm.cfg, search_starts=0), "left", q0)
    p, R = arm.pose(np.array([-0.55, 1.76, 0.91, -1.6, -0.81, 4.47, 1.57]))
    for _ in range(40):
        sol, local = arm.solve(p, R), walk.solve(p, R)
    assert sol.pos_err_mm < 3.0 and local.pos_err_mm < 3.0
    assert np.sum((sol.q - q0) ** 2) < np.sum((local.q - q0) ** 2) - 3.0
    assert abs(sol.q[4]) < 1.5 and abs(local.q[4]) > 2.8          # joint 5 mid-range vs on its limit
    rng = stable_rng("arm-jump")
    for _ in range(4):                                             # jumps to random reachable poses
        p, R = arm.pose(np.clip(q0 + rng.normal(0, 0.7, 7), arm.lower, arm.upper))
        arm.reset(q0)
        prev = q0
        for _ in range(40):
            sol = arm.solve(p, R)
            assert np.max(np.abs(sol.q - prev)) <= arm.cfg.max_step + 1e-12
            prev = sol.q
        assert sol.pos_err_mm < 3.0 and sol.rot_err_deg < 3.0
