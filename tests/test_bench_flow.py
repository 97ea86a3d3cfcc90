"""``teleop bench flow``: the window driven by its keys through a few takes (fewer than the 20 of
the documented run, for CI); the figures are there and each take cost two inputs. Timing goals
(overhead <= 3 s, stall <= 100 ms) are checked by the documented run, not here: a shared CI
machine's load decides them."""
import json

from teleop.cli.main import main


def test_bench_flow_two_takes(qapp, capsys):
    # ``qapp``: the session's one QApplication. Left to itself the bench would make its own, and
    # destroying it at the end (then making another for the next Qt test) corrupts Qt's state.
    assert main(["bench", "flow", "--json", "--takes", "2"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["accepted"] == 2 and figures["inputs_per_take"] == 2.0
    for key in ("overhead_s_per_take_p50", "ui_stall_ms_max", "accepted_per_hour", "phases_s_p50"):
        assert key in figures
    assert figures["accepted_per_hour"] > 0 and figures["take_s_p50"] > 1.0
