"""Takes a policy trainer can rely on: scene events with their tick and effect (exported, and
re-applied by a plain replay of the actions), robomimic's full HDF5 contract (env_args, rewards,
dones, next_obs: SequenceDataset loads a take), software versions and the source revision."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from recordings.export import export_dataset
from recordings.provenance import PACKAGES, content_hash, git_describe, source_revision
from recordings.replay import Replayer, scene_from_take
from recordings.robomimic_layout import resimulate_last_obs
from recordings.store import TakeStore
from recordings.take_events import apply_events
from recordings.takefile import read_take
from takes_util import record_take
from teleop.cli.main import main
from teleop.sim import HEADER, Sim

TASK = "uncover_red_cube"        # three button presses make the reveal teleport caps over the cubes


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("complete")
    store = root / "store"
    code = main(["record", "--device", "synthetic", "--task", TASK, "--max-seconds", "4.6", "--store", str(store),
                 "--json"])
    assert code == 0
    take = read_take(sorted((store / "takes").glob("*.h5"))[-1])
    return root, take


@pytest.fixture(scope="module")
def exported(recorded):
    root, take = recorded
    with TakeStore(root / "store") as store:
        store.set_review(take.meta.take_id, "validated_pass")
    out = root / "dataset"
    assert export_dataset(root / "store", out, progress=False, mark_exported=False).ok
    return out


def _reveal(take) -> dict:
    reveals = [e for e in take.events if e["type"] == "reveal"]
    assert len(reveals) == 1, take.events
    return reveals[0]


def test_the_reveal_is_recorded_with_its_tick_and_effect(recorded):
    _, take = recorded
    reveal = _reveal(take)
    latched = np.flatnonzero(take.arrays["subtasks"][:, 0])[0] + 1     # subtasks[t] is scored after action t
    assert reveal["event"] and reveal["tick"] == latched
    qpos = reveal["effect"]["qpos"]
    assert len(qpos) >= 7                                             # at least one free cap teleported
    after = take.arrays["states"][reveal["tick"]]                     # states[tick] already includes it
    for index, value in qpos:
        assert after[HEADER + 1 + index] == value
    presses = [e for e in take.events if e["type"] == "press_counter"]
    assert presses and all("userdata" in e["effect"] for e in presses)


def _plain_replay(take, with_events: bool) -> int | None:
    """Step the actions through plain MuJoCo; returns the first tick whose state differs, or None."""
    sim = Sim(scene_from_take(take))
    sim.set_state(take.initial_state)
    events = list(take.events) if with_events else []
    apply_events(sim.model, sim.data, events, 0)
    states = take.arrays["states"]
    for t, action in enumerate(take.arrays["actions"][:-1]):
        sim.step(action.astype(np.float64))
        apply_events(sim.model, sim.data, events, t + 1)
        if not np.array_equal(sim.get_state(), states[t + 1]):
            return t + 1
    return None


def test_a_plain_actions_replay_applies_each_event_at_its_tick_and_reproduces_the_take(recorded):
    _, take = recorded
    assert _plain_replay(take, with_events=True) is None
    first = min(e["tick"] for e in take.events if e["tick"] > 0)
    assert _plain_replay(take, with_events=False) == first        # without them it diverges right there
    replayer = Replayer(take, mode="actions")
    for t in range(1, take.length):
        replayer.step()
        np.testing.assert_array_equal(replayer.sim.get_state(), take.arrays["states"][t])


def test_events_are_exported_as_episode_metadata(recorded, exported):
    _, take = recorded
    episode = json.loads((exported / "meta" / "bidex_episodes.jsonl").read_text().splitlines()[0])
    assert episode["scene_events"] == list(take.events)
    assert _reveal(take) in episode["scene_events"]


def test_robomimic_sequence_dataset_loads_a_take_with_next_obs(recorded):
    ObsUtils = pytest.importorskip("robomimic.utils.obs_utils")
    from robomimic.utils.dataset import SequenceDataset
    from robomimic.utils.file_utils import get_env_metadata_from_dataset
    _, take = recorded
    ObsUtils.initialize_obs_utils_with_obs_specs({"obs": {"low_dim": ["state"]}})
    ds = SequenceDataset(hdf5_path=str(take.path), obs_keys=("state",), dataset_keys=("actions", "rewards", "dones"),
                         load_next_obs=True, frame_stack=1, seq_length=1, pad_frame_stack=True, pad_seq_length=True,
                         get_pad_mask=False, goal_mode=None, hdf5_cache_mode="low_dim", hdf5_use_swmr=True,
                         hdf5_normalize_obs=False, filter_by_attribute=None)
    assert len(ds) == take.length
    for t in (0, 57, take.length - 1):
        item = ds[t]
        np.testing.assert_array_equal(item["obs"]["state"][0], take.arrays["obs"][t])
        np.testing.assert_array_equal(item["actions"][0], take.arrays["actions"][t])
        nxt = take.arrays["obs"][t + 1] if t + 1 < take.length else take.arrays["next_obs"][-1]
        np.testing.assert_array_equal(item["next_obs"]["state"][0], nxt)
    env = get_env_metadata_from_dataset(str(take.path))
    assert env["env_name"] == TASK and env["type"] == 2 and env["env_kwargs"]["task_id"] == TASK
    assert env["task_id"] == TASK                                     # our own keys stay beside
    rewards, dones = take.arrays["rewards"], take.arrays["dones"]
    assert np.isclose(rewards.sum(), take.arrays["progress"][-1] / 100) and rewards.min() >= 0
    assert dones[-1] == 1 and dones[:-1].sum() == 0


def test_the_last_next_obs_is_the_recorders_and_re_simulation_derives_it_exactly(recorded, scene, tmp_path):
    _, take = recorded
    a = take.arrays
    derived = resimulate_last_obs(take.meta.model_xml, take.meta.model_fingerprint, a["states"][-1], a["actions"][-1],
                                  list(take.events), take.length, take.path)
    np.testing.assert_array_equal(derived, a["next_obs"][-1])
    with TakeStore(tmp_path / "store") as store:          # a writer that never saw the last step's
        sim = Sim(scene)                                    # observation: derived at finish
        path, _ = record_take(store, sim, ticks=12)
        np.testing.assert_array_equal(read_take(path).arrays["next_obs"][-1], sim.observation())


def test_software_versions_and_source_revision_are_in_every_take_and_export(recorded, exported):
    _, take = recorded
    for software in (take.meta.software, json.loads((exported / "meta" / "bidex_export.json").read_text())["software"]):
        assert {"python", "app", "revision", *PACKAGES} <= set(software)
        assert software["revision"].startswith("git:") or "+src." in software["revision"]
    episode = json.loads((exported / "meta" / "bidex_episodes.jsonl").read_text().splitlines()[0])
    assert episode["software"] == take.meta.software


def test_without_git_the_revision_is_the_version_plus_a_content_hash(tmp_path):
    tree = tmp_path / "src"
    shutil.copytree(scene_from_take.__code__.co_filename.rsplit("/", 1)[0], tree / "recordings")
    assert git_describe(tree) is None                  # not a repository
    first = source_revision(tree, describe=lambda root: None)
    assert first.endswith("+src." + content_hash(tree)[:12])
    (tree / "recordings" / "replay.py").write_text("# changed\n")
    assert source_revision(tree, describe=lambda root: None) != first
