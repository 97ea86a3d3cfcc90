"""One-Euro filters on the retargeter's inputs: tracking noise out, little lag on fast motion.

A One-Euro filter (Casiez, Roussel & Vogel, CHI 2012) is a first-order low-pass whose cutoff rises
with the signal's speed: ``fc = min_cutoff + beta * |dx/dt|`` (the speed itself low-passed at
``d_cutoff``). Slow or still hands, where millimetre noise is most visible as joint chatter, are
smoothed hard; fast moves pass with little lag. Each row of an (N, D) array (a keypoint, a wrist
position, a rotation) gets its own cutoff from its own speed, so a moving finger is not held back
by a still one. Rows flagged untracked pass through and restart from their next tracked value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from teleop.core.errors import ConfigError


@dataclass(frozen=True)
class FilterConfig:
    """One-Euro parameters; ``min_cutoff_hz`` <= 0 disables the filter (output = input)."""

    min_cutoff_hz: float = 0.0         # cutoff at rest (Hz)
    beta: float = 0.0                  # cutoff increase per unit of speed (Hz per m/s)
    d_cutoff_hz: float = 1.0           # low-pass of the speed estimate (Hz)
    where: str = "filter"

    def __post_init__(self):
        for name in ("min_cutoff_hz", "beta", "d_cutoff_hz"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v >= 0):
                raise ConfigError(f"{self.where}.{name}: must be a finite number >= 0, got {v!r}")
        if self.min_cutoff_hz > 0 and self.d_cutoff_hz <= 0:
            raise ConfigError(f"{self.where}.d_cutoff_hz: must be > 0 when the filter is on")

    @property
    def enabled(self) -> bool:
        return self.min_cutoff_hz > 0


def _alpha(cutoff_hz, dt: float):
    """Smoothing factor of a first-order low-pass at ``cutoff_hz`` sampled every ``dt`` seconds."""
    return 1.0 / (1.0 + 1.0 / (2.0 * np.pi * cutoff_hz * dt))


class OneEuro:
    """One-Euro filter over an (N, D) array, one adaptive cutoff per row.

    ``speed_scale`` converts a row's rate of change into the unit ``beta`` expects (m/s): 1 for
    positions, a lever arm in metres for a rotation's columns.
    """

    def __init__(self, cfg: FilterConfig, speed_scale: float = 1.0):
        self.cfg, self.scale = cfg, speed_scale
        self.x: np.ndarray | None = None           # (N, D) filtered value
        self.dx: np.ndarray | None = None          # (N, D) filtered derivative
        self.valid: np.ndarray | None = None       # (N,) rows with filter state

    def reset(self) -> None:
        self.x = self.dx = self.valid = None

    def __call__(self, x: np.ndarray, dt: float, tracked: np.ndarray | None = None) -> np.ndarray:
        """Filtered copy of ``x`` (N, D); ``tracked`` (N,) false rows pass through (and later restart)."""
        x = np.asarray(x, float)
        if not self.cfg.enabled:
            return x.copy()
        rows = np.ones(x.shape[0], bool) if tracked is None else np.asarray(tracked) > 0
        if self.x is None or self.x.shape != x.shape:
            self.x, self.dx, self.valid = x.copy(), np.zeros(x.shape), rows.copy()
            return x.copy()
        assert self.dx is not None and self.valid is not None     # set together with self.x
        cfg = self.cfg
        if tracked is None and self.valid.all():            # the common case, without row bookkeeping
            self.dx += _alpha(cfg.d_cutoff_hz, dt) * ((x - self.x) / dt - self.dx)
            speed = np.sqrt(np.einsum("ij,ij->i", self.dx, self.dx)) * self.scale
            self.x += _alpha(cfg.min_cutoff_hz + cfg.beta * speed, dt)[:, None] * (x - self.x)
            return self.x.copy()
        fresh = rows & ~self.valid                          # reappeared: restart these rows
        self.x[fresh], self.dx[fresh] = x[fresh], 0.0
        step = rows & self.valid
        dx = self.dx + _alpha(cfg.d_cutoff_hz, dt) * ((x - self.x) / dt - self.dx)
        speed = np.linalg.norm(dx, axis=1) * self.scale
        a = _alpha(cfg.min_cutoff_hz + cfg.beta * speed, dt)[:, None]
        self.x[step] += a[step] * (x[step] - self.x[step])
        self.dx[step] = dx[step]
        self.valid = rows.copy()
        out = x.copy()
        out[rows] = self.x[rows]
        return out


def orthonormalize(M: np.ndarray) -> np.ndarray:
    """The rotation (3, 3) nearest a blended matrix, keeping its z column's direction first."""
    z = M[:, 2] / np.linalg.norm(M[:, 2])
    x = M[:, 0] - z * (z @ M[:, 0])
    x /= np.linalg.norm(x)
    y = np.array([z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]])   # z x x
    return np.column_stack([x, y, z])


class RotationOneEuro:
    """One-Euro on a rotation (3, 3): the matrix is filtered as one 9-vector, then re-orthonormalised.

    The matrix's rate of change has norm sqrt(2) times the angular speed; ``radius`` (m) turns that
    into a linear speed so one ``beta`` serves positions and rotations.
    """

    def __init__(self, cfg: FilterConfig, radius: float = 0.1):
        self.inner = OneEuro(cfg, radius / np.sqrt(2.0))

    def reset(self) -> None:
        self.inner.reset()

    def __call__(self, R: np.ndarray, dt: float) -> np.ndarray:
        if not self.inner.cfg.enabled:
            return np.array(R, float)
        return orthonormalize(self.inner(np.asarray(R, float).reshape(1, 9), dt).reshape(3, 3))
