"""Second embodiment: the Shadow hand from gymnasium-robotics, by configuration only (coupled joints)."""
import numpy as np
import pytest

from retarget.config import CONFIG_DIR, load_hand_config
from retarget.hand import HandSolver
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng

pytest.importorskip("gymnasium_robotics", reason="the Shadow hand MJCF ships in gymnasium-robotics")


@pytest.fixture(scope="module")
def shadow():
    cfg = load_hand_config(CONFIG_DIR / "shadow_hand.yaml")
    return HandSolver(cfg.load_model(), cfg, "right")


def test_couplings_reduce_the_variables_and_hold(shadow):
    assert shadow.C.shape == (22, 18)
    q = shadow.q_of(stable_rng("shadow-c").uniform(shadow.lo, shadow.hi))
    names = shadow.chain.joint_names
    for f in ("FF", "MF", "RF", "LF"):
        j0, j1 = names.index(f"robot0:{f}J0"), names.index(f"robot0:{f}J1")
        assert q[j0] == pytest.approx(1.1418 * q[j1])
    assert np.all(q >= shadow.chain.lower - 1e-12) and np.all(q <= shadow.chain.upper + 1e-12)


def test_coupled_jacobian_finite_differences(shadow):
    u = stable_rng("shadow-jac").uniform(shadow.lo, shadow.hi)
    _, J = shadow.keypoint_jacobian(shadow.q_of(u))
    eps = 1e-6
    for j in range(u.size):
        du = np.zeros(u.size)
        du[j] = eps
        fd = (shadow.keypoints(shadow.q_of(u + du)) - shadow.keypoints(shadow.q_of(u - du))) / (2 * eps)
        np.testing.assert_allclose(J[:, :, j], fd, atol=1e-8)


def test_round_trip(shadow):
    rng = stable_rng("shadow-roundtrip")
    errs = []
    for _ in range(10):
        target = shadow.keypoints(shadow.q_of(rng.uniform(shadow.lo, shadow.hi)))
        shadow.reset()
        for _ in range(3):
            sol = shadow.solve(target)
        errs.append(np.median(sol.residual_mm))
    assert np.median(errs) < 2.0


def test_retargets_our_robot_hands_motion(shadow, scene):
    """Keypoints of the 22-DoF hand, rescaled to the Shadow's size, give a close Shadow pose."""
    from retarget.config import load_config
    ours = HandSolver(scene.model, load_config().hand, "right")
    rng = stable_rng("shadow-cross")
    errs = []
    for _ in range(5):
        q = ours.q_of(np.clip(ours.u_rest + rng.normal(0, 0.3, ours.u.size), ours.lo, ours.hi))
        local = ours.keypoints(q) * shadow.hand_length / ours.hand_length
        target = local @ ours.neutral_frame @ shadow.neutral_frame.T       # our palm frame -> Shadow's
        for _ in range(4):
            sol = shadow.solve(target)
        errs.append(np.median(sol.residual_mm[[4, 8, 12, 16, 20]]))
    assert np.median(errs) < 25.0                         # different kinematics: close, not exact


def test_missing_package_is_a_clear_error():
    from retarget.config import _resolve_model_path
    with pytest.raises(ConfigError, match="not installed"):
        _resolve_model_path("pkg:no_such_package_xyz/hand.xml", "hand")
