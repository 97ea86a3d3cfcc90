"""`teleop bench headset`'s step analysis on a made-up timeline whose answers are known."""
from __future__ import annotations

import pytest

from teleop.cli.benches.headset import _step_figures


def test_step_latency_pairs_the_stepped_frame_with_the_first_tick_using_it():
    # The step rides frame 10 at t=1000 ms. Ticks every 40 ms (tick: frame seq, received,
    # started, published); tick 3 is the first to use frame >= 10.
    ticks = {1: (8, 960.0, 965.0, 970.0), 2: (9, 990.0, 1005.0, 1010.0),
             3: (11, 1020.0, 1045.0, 1050.0), 4: (12, 1060.0, 1085.0, 1090.0)}
    # Applied in the page: seq, t, palm x y z. Pose 2 arrives after the step but predates it.
    applied = [[1, 980.0, 0.0, 0.0, 0.0], [2, 1020.0, 0.0, 0.0, 0.0], [3, 1070.0, 0.0, -0.001, 0.0],
               [4, 1110.0, 0.0, -0.003, 0.0], [5, 1150.0, 0.0, -0.02, 0.0], [6, 1190.0, 0.0, -0.04, 0.0]]
    (fig,) = _step_figures([[10, 1000.0, 0.04]], applied, ticks)
    assert fig["latency_ms"] == pytest.approx(70.0)            # pose 3 applied at 1070
    assert fig["motion_latency_ms"] == pytest.approx(110.0)    # 3 mm toward the final place at 1110
    # page -> server, waiting for the tick, the tick, server -> page applied
    assert fig["breakdown"] == pytest.approx((20.0, 25.0, 5.0, 20.0))


def test_a_step_no_tick_used_yet_has_no_latency():
    (fig,) = _step_figures([[50, 1000.0, 0.04]], [[1, 980.0, 0, 0, 0]], {1: (8, 960.0, 965.0, 970.0)})
    assert fig == {"latency_ms": None, "motion_latency_ms": None, "breakdown": None}
