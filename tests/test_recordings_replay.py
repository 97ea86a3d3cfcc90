"""Replay from states (exact) and from actions (open loop), with seeking both ways."""
import numpy as np
import pytest

from recordings.errors import TakeError
from recordings.replay import Replayer, scene_from_take
from recordings.store import TakeStore
from recordings.takefile import read_take
from takes_util import record_take
from teleop.sim import Sim


@pytest.fixture
def take(tmp_path, scene):
    with TakeStore(tmp_path / "store") as store:
        path, _ = record_take(store, Sim(scene), ticks=60)
    return read_take(path)


def test_scene_from_take_reproduces_the_model(take, scene):
    assert scene_from_take(take).fingerprint == scene.fingerprint


@pytest.mark.parametrize("mode", ["states", "actions"])
def test_replay_matches_recorded_states_and_seeks(take, mode):
    rep = Replayer(take, mode=mode, checkpoint_every=10)
    for t in range(take.length):
        np.testing.assert_array_equal(rep.sim.get_state(), take.arrays["states"][t])
        assert rep.step()
    assert not rep.step() and rep.tick == take.length
    final = rep.sim.get_state()
    for target in (37, 5, 52, 0, 59, take.length):
        rep.seek(target)
        assert rep.tick == target
        expected = take.arrays["states"][target] if target < take.length else final
        np.testing.assert_array_equal(rep.sim.get_state(), expected)


def test_frame_reports_instruction_and_progress(take):
    rep = Replayer(take)
    assert rep.frame().instruction == "Do the thing." and rep.frame().progress == 0.0
    rep.seek(45)
    assert rep.frame().instruction == "Now the other." and rep.frame().progress == 100.0
    assert rep.ticks_for(1.0, 2.0) == 50


def test_take_from_another_model_build_is_refused(take):
    tampered = take.meta.__class__(**{**take.meta.__dict__, "model_fingerprint": "0" * 16})
    bad = take.__class__(take.path, tampered, take.arrays, take.review, take.interrupted)
    with pytest.raises(TakeError, match="recorded under 0000000000000000"):
        scene_from_take(bad)
