"""Rewind and continue, headless: a take continued from one of its ticks is the recorded prefix
plus the new ticks, replays bit-exactly from its own initial state and validates — through the
session API and through ``teleop record --continue-from TAKE --at TICK``."""
from __future__ import annotations

import json

import numpy as np
import pytest

from recordings.splice import continued_meta
from recordings.takefile import H5_PATHS, read_take
from recordings.validate import validate_take
from teleop.cli.main import main
from teleop.control.session import SessionError
from teleop.sim import Sim
from recordings.replay import scene_from_take

TASK = "pick_up_peach"


def assert_replays_bit_exactly(take) -> None:
    """Open loop from the take's initial state: every recorded state is reached exactly."""
    sim = Sim(scene_from_take(take))
    sim.set_state(take.initial_state)
    states, actions = take.arrays["states"], take.arrays["actions"]
    for t in range(take.length):
        np.testing.assert_array_equal(sim.get_state(), states[t], err_msg=f"diverged at tick {t}")
        sim.step(actions[t].astype(np.float64))


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    store = tmp_path_factory.mktemp("rewind") / "store"
    assert main(["record", "--device", "synthetic", "--task", TASK, "--store", str(store), "--json"]) == 0
    takes = sorted((store / "takes").glob("*.h5"))
    return store, read_take(takes[0])


def test_cli_continue_from_a_tick_splices_and_validates(original, capsys):
    store, take = original
    capsys.readouterr()
    at = 30                                                   # 1.2 s in: before the grasp
    assert main(["record", "--device", "synthetic", "--continue-from", str(take.path), "--at", str(at),
                 "--store", str(store), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["continued_from"] == f"{take.meta.take_id}@{at}" and summary["strict_success"] == 1
    spliced = read_take(summary["take"])
    assert spliced.meta.initial_state == take.meta.initial_state
    assert (spliced.meta.seed_index, spliced.meta.episode_index) == (take.meta.seed_index, take.meta.episode_index)
    for name in H5_PATHS:                                     # the prefix, copied verbatim
        np.testing.assert_array_equal(spliced.arrays[name][:at], take.arrays[name][:at], err_msg=name)
    assert spliced.length > at
    assert_replays_bit_exactly(spliced)
    report = validate_take(spliced.path)
    assert report.passed, report.reason
    assert report.max_joint_error == 0.0 and report.max_object_error == 0.0


def test_continue_refuses_an_impossible_tick_and_the_wrong_task(original, capsys):
    store, take = original
    capsys.readouterr()
    assert main(["record", "--device", "synthetic", "--continue-from", str(take.path), "--at",
                 str(take.length + 1), "--no-save"]) == 2
    assert "outside the take" in capsys.readouterr().err
    assert main(["record", "--device", "synthetic", "--continue-from", str(take.path), "--no-save"]) == 2
    assert "--at TICK" in capsys.readouterr().err
    from teleop.control.episode import Episode, EpisodeOptions
    other = Episode(EpisodeOptions(task="put_peach_in_fruit_bowl", device="synthetic"))
    with pytest.raises(SessionError, match="is of task pick_up_peach"):
        other.session.resume(take, 5)


def test_continued_meta_names_its_source(original):
    _, take = original
    meta = continued_meta(take, 12, operator="someone")
    assert meta.continued_from == f"{take.meta.take_id}@12" and meta.take_id != take.meta.take_id
    assert meta.operator == "someone" and meta.initial_state == take.meta.initial_state
