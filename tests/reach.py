"""Reference inverse kinematics for tests: is a palm pose reachable by the arm at all?

Multi-start bounded least squares (scipy) over all seven joints, from the solver's own answer and
a fixed spread of starts. Slow; tests call it only where the retargeter's answer misses.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from teleop.core.seeding import stable_rng


def best_reach(arm, p_star, R_star, extra_starts=(), starts: int = 24) -> tuple[float, float, np.ndarray]:
    """(position error mm, orientation error deg, joints) of the best pose found for
    (p_star (3,), R_star (3, 3)), orientation weighted as in the arm solver's cost."""
    lo, hi = arm.lower, arm.upper
    w = np.sqrt(arm.cfg.orientation_weight / 2)

    def res(q):
        p, R = arm.pose(q)
        return np.concatenate([p - p_star, w * (R - R_star).ravel()])

    rng = stable_rng("reference-ik")
    seeds = [*extra_starts, arm.rest, *(rng.uniform(lo, hi) for _ in range(starts))]
    best = None
    for s in seeds:
        r = least_squares(res, np.clip(s, lo + 1e-9, hi - 1e-9), bounds=(lo, hi), xtol=1e-12, ftol=1e-12,
                          gtol=1e-12, max_nfev=300)
        if best is None or r.cost < best.cost:
            best = r
    p, R = arm.pose(best.x)
    rot = np.degrees(np.arccos(np.clip((np.trace(R_star.T @ R) - 1) / 2, -1, 1)))
    return float(np.linalg.norm(p - p_star) * 1e3), float(rot), best.x


def reachable(arm, p_star, R_star, extra_starts=()) -> bool:
    """A joint vector within the limits puts the palm at the pose (1 mm, 1 deg)."""
    e, r, _ = best_reach(arm, p_star, R_star, extra_starts)
    return e < 1.0 and r < 1.0
