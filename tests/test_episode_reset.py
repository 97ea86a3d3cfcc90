"""One owner per piece of tick state: an episode recorded after another one, in one station or one
``teleop record --episodes N`` process, replays bit-exactly from its own take in a fresh process —
so nothing of the previous episode (retargeter warm starts, filters, clocks, the engage gate)
leaks into the next. And every take's timing columns hold the real tick times."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from recordings.store import TakeStore
from recordings.takefile import TIMING, read_take
from teleop.cli.main import main
from ui.station import Station

TASK = "put_peach_in_fruit_bowl"
TICK_S = 0.04


def _replayed_actions(take_path, capsys) -> np.ndarray:
    """The CLI's replay of a take's operator stream; the new take's actions."""
    out = take_path.parent.parent / "replayed"
    assert main(["record", "--device", "replay", "--from", str(take_path), "--store", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return read_take(summary["take"]).arrays["actions"]


def _tick_until(station: Station, cond, limit: int = 400) -> None:
    for _ in range(limit):
        t0 = time.monotonic()
        station._tick()                            # the loop thread's tick, driven from the test
        if cond(station.snapshot()):
            return
        time.sleep(max(0.0, TICK_S - (time.monotonic() - t0)))   # a realtime device's pace
    raise AssertionError("station never got there")


def _record(station: Station, ticks: int):
    station.toggle_recording()
    _tick_until(station, lambda s: s.recording and s.recorded_ticks >= ticks)
    station.toggle_recording()
    station._tick()
    return station.finished_takes.get(timeout=30)


def test_second_episode_of_a_station_replays_bit_exactly(tmp_path, capsys):
    store = TakeStore(tmp_path / "store")
    store.open()
    station = Station(store, operator="tester")
    done = []
    station.choose_task(TASK, done=lambda: done.append(True))
    deadline = time.monotonic() + 120
    while not done and time.monotonic() < deadline:
        time.sleep(0.05)
    station._tick()                                 # the task swaps in
    station.choose_device("synthetic")
    station.connect()
    station._tick()
    assert station.snapshot().connected, station.snapshot().message
    first = _record(station, 60)                    # episode 0: the retargeter and gate move on
    station.next_episode()
    station._tick()
    second = _record(station, 60)                   # episode 1 of the same station
    station.stop()
    store.close()
    take0, take1 = read_take(first), read_take(second)
    assert (take0.meta.episode_index, take1.meta.episode_index) == (0, 1)
    assert np.abs(np.diff(take1.arrays["actions"], axis=0)).max() > 0, "the robot never moved"
    np.testing.assert_array_equal(_replayed_actions(second, capsys), take1.arrays["actions"])


def test_record_episodes_runs_consecutive_episodes_on_one_session(tmp_path, capsys):
    store = tmp_path / "store"
    assert main(["record", "--device", "synthetic", "--task", TASK, "--episodes", "2", "--max-seconds", "4",
                 "--store", str(store), "--json"]) == 0
    summaries = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
    assert [s["episode_index"] for s in summaries] == [0, 1]
    assert all(s["ticks"] == 100 for s in summaries)           # --max-seconds 4 at 25 Hz
    take1 = read_take(summaries[1]["take"])
    np.testing.assert_array_equal(_replayed_actions(Path(summaries[1]["take"]), capsys), take1.arrays["actions"])


@pytest.mark.parametrize("column", ["tick_ms", "physics_ms", "score_ms"])
def test_every_take_holds_real_tick_times(tmp_path, capsys, column):
    assert main(["record", "--device", "synthetic", "--task", TASK, "--max-seconds", "1", "--store",
                 str(tmp_path), "--json"]) == 0
    take = read_take(json.loads(capsys.readouterr().out)["take"])
    timing = take.arrays["timing"]
    values = timing[:, TIMING.index(column)]
    assert (values > 0).all() and np.isfinite(values).all()
    assert (timing[:, TIMING.index("tick_ms")] >= values).all()      # a part of the tick
