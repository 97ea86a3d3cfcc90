"""The horizon learns from the store's accepted takes (issue 17): which takes count, and the
episode and app paths that use it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from recordings.horizon import accepted_lengths, store_horizon
from recordings.store import TakeStore
from takes_util import record_take
from teleop.control.episode import Episode, EpisodeOptions
from teleop.sim import Sim
from teleop.sim.scene import build_scene
from teleop.tasks import get_spec


@pytest.fixture(scope="module")
def sim():
    return Sim(build_scene())


def _take(store, sim, ticks, status, task="pick_up_peach", name="t"):
    path, _ = record_take(store, sim, ticks=ticks, name=f"{name}-{ticks}-{status}", task_id=task)
    take_id = store.add(path).meta.take_id
    if status != "recorded":
        store.set_review(take_id, status)
    return take_id


def test_only_accepted_uninterrupted_takes_of_the_task_count(tmp_path, sim):
    with TakeStore(tmp_path / "store") as store:
        for ticks, status in ((10, "accepted"), (12, "validated_pass"), (14, "exported"), (40, "rejected"),
                              (41, "recorded"), (42, "validated_fail")):
            _take(store, sim, ticks, status)
        _take(store, sim, 43, "accepted", task="pick_up_pear")
        writer, _ = record_take(store, sim, ticks=44, name="crashed", task_id="pick_up_peach", finish=False)
        store.set_review(store.add(writer.abort()).meta.take_id, "accepted")    # interrupted, yet accepted
        assert sorted(accepted_lengths(store.index, "pick_up_peach")) == [10, 12, 14]
        spec = get_spec("pick_up_peach")
        assert store_horizon(store.index, spec) == math.ceil(1.2 * np.percentile([10, 12, 14], 90))
        assert store_horizon(store.index, get_spec("pick_up_tangerine")) == 750     # none accepted: 30 s


def test_a_recording_episode_takes_its_horizon_from_the_store_and_the_prover_does_not(tmp_path, sim):
    with TakeStore(tmp_path / "store") as store:
        for ticks in (100, 110, 120):
            _take(store, sim, ticks, "validated_pass")
        learnt = math.ceil(1.2 * np.percentile([100, 110, 120], 90))
        ep = Episode(EpisodeOptions(task="pick_up_peach", device="synthetic", horizon_from_store=True))
        _, take = ep.run(store)
        assert ep.horizon.ticks == learnt and take.length <= learnt
        plain = Episode(EpisodeOptions(task="pick_up_peach", device="synthetic"))
        plain.run(store)
        assert plain.horizon.ticks == 750
