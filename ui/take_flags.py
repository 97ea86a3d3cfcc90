"""Why a take should not be accepted without a second look: too short, score 0, no device frames,
the robot never followed the operator, interrupted. Shown in review; accepting a flagged take
needs the accept key twice (a 0.3 s junk take is never accepted by one late key press)."""
from __future__ import annotations

import numpy as np

from recordings.takefile import FLAGS, NO_FRAME_AGE_MS, TIMING, Take

MIN_TAKE_S = 1.0


def take_flags(take: Take) -> list[str]:
    arrays, hz = take.arrays, take.meta.control_hz
    seconds = take.length / hz
    flags = []
    if seconds < MIN_TAKE_S:
        flags.append(f"short ({seconds:.1f} s)")
    progress = arrays["progress"]
    if not len(progress) or float(progress[-1]) <= 0.0:
        flags.append("score 0")
    ages = arrays["timing"][:, TIMING.index("frame_age_ms")] if take.length else np.array([])
    if not take.length or np.all(ages == NO_FRAME_AGE_MS):
        flags.append("no device frames")
    elif not arrays["flags"][:, FLAGS.index("engaged")].any():
        flags.append("the robot never followed the operator")
    if take.interrupted:
        flags.append("interrupted")
    return flags


def score_of(take: Take) -> float:
    progress = take.arrays["progress"]
    return float(progress[-1]) if len(progress) else 0.0
