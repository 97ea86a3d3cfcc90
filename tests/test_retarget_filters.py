"""One-Euro input filters: identity when off, noise reduction at rest, little lag when fast, tracking gaps."""
import numpy as np
import pytest

from retarget.arm import rotation
from retarget.filters import FilterConfig, OneEuro, RotationOneEuro, orthonormalize
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng

DT = 0.04
ON = FilterConfig(min_cutoff_hz=1.0, beta=20.0, d_cutoff_hz=1.0)


def test_disabled_filter_is_the_identity():
    f = OneEuro(FilterConfig())
    x = stable_rng("f-off").normal(size=(21, 3))
    for _ in range(3):
        np.testing.assert_array_equal(f(x, DT), x)


def test_still_noisy_points_are_smoothed():
    rng = stable_rng("f-still")
    base = rng.normal(size=(21, 3))
    f = OneEuro(ON)
    out = np.array([f(base + rng.normal(0, 1e-3, base.shape), DT) for _ in range(300)])[50:]
    raw_step = np.sqrt(2) * 1e-3                                   # tick-to-tick change of raw noise
    step = np.sqrt(np.mean(np.diff(out, axis=0) ** 2))
    assert step < 0.3 * raw_step
    assert np.abs(out.mean(axis=0) - base).max() < 1e-3              # no bias


def test_fast_motion_passes_with_little_lag():
    t = np.arange(100) * DT
    x = np.stack([0.3 * t, np.zeros_like(t), np.zeros_like(t)], axis=1)[:, None, :]   # 0.3 m/s ramp
    slow, fast = OneEuro(FilterConfig(min_cutoff_hz=1.0)), OneEuro(ON)
    lag_slow = x[-1, 0, 0] - [slow(p, DT) for p in x][-1][0, 0]
    lag_fast = x[-1, 0, 0] - [fast(p, DT) for p in x][-1][0, 0]
    assert lag_fast < 0.25 * lag_slow and lag_fast < 0.3 * DT           # under a third of a tick of travel


def test_untracked_rows_pass_through_and_restart():
    f = OneEuro(ON)
    x = np.zeros((3, 3))
    f(x, DT)
    mask = np.array([1, 0, 1])
    y = f(x + 1.0, DT, mask)
    assert y[1, 0] == 1.0 and 0 < y[0, 0] < 1.0                      # untracked: raw value
    z = f(x + 5.0, DT, np.ones(3))
    assert z[1, 0] == 5.0                                            # reappeared: restarts at the new value
    f.reset()
    np.testing.assert_array_equal(f(x, DT), x)


def test_rotation_filter_stays_a_rotation_and_follows():
    f = RotationOneEuro(ON)
    axis = np.array([0.0, 0.6, 0.8])
    for k in range(60):
        R = f(rotation(axis, 0.05 * k), DT)
        np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0)
    err = np.degrees(np.arccos((np.trace(R.T @ rotation(axis, 0.05 * 59)) - 1) / 2))
    assert err < 3.0                                                 # 1.25 rad/s: follows within ~2 ticks
    np.testing.assert_allclose(orthonormalize(np.eye(3) * 2), np.eye(3))


def test_filter_config_errors():
    with pytest.raises(ConfigError, match="beta"):
        FilterConfig(min_cutoff_hz=1.0, beta=-1.0)
    with pytest.raises(ConfigError, match="d_cutoff_hz"):
        FilterConfig(min_cutoff_hz=1.0, d_cutoff_hz=0.0)
    with pytest.raises(ConfigError, match="min_cutoff_hz"):
        FilterConfig(min_cutoff_hz=float("nan"))
