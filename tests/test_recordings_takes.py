"""Take files: every field round-trips; crashes lose at most the last second; bad files fail clearly."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from recordings.errors import TakeError
from recordings.store import TakeStore
from recordings.takefile import read_take
from takes_util import FRAME_COLUMNS, SUBTASKS, record_take
from teleop.sim import Sim


@pytest.fixture
def store(tmp_path):
    with TakeStore(tmp_path / "store") as s:
        yield s


def test_every_field_round_trips(store, scene):
    sim = Sim(scene)
    path, actions = record_take(store, sim, ticks=30)
    take = store.add(path)
    assert path.suffix == ".h5" and not list(store.takes_dir.glob("*.partial"))
    assert take.length == 30 and not take.interrupted and take.review.status == "recorded"
    np.testing.assert_array_equal(take.arrays["actions"], actions)
    assert take.arrays["states"].shape == (30, len(take.meta.initial_state))
    np.testing.assert_array_equal(take.arrays["states"][0], take.initial_state)
    assert take.arrays["obs"].shape == (30, 130)
    np.testing.assert_array_equal(take.arrays["instruction"], [0] * 15 + [1] * 15)
    assert take.arrays["subtasks"].shape == (30, 2) and take.arrays["progress"][-1] == 100.0
    np.testing.assert_array_equal(take.arrays["frame"][:, 1], np.arange(30))
    meta = take.meta
    assert meta.model_xml == scene.xml and meta.model_fingerprint == scene.fingerprint
    assert meta.subtask_names == SUBTASKS and meta.frame_columns == FRAME_COLUMNS
    assert meta.instructions == ("Do the thing.", "Now the other.")
    assert meta.software["mujoco"] and meta.device == "synthetic" and meta.operator == "tester"
    with h5py.File(path) as h5:                      # robomimic layout, readable without our code
        demo = h5["data/demo_0"]
        assert demo["actions"].shape == (30, 58) and demo["obs/state"].shape == (30, 130)
        assert json.loads(demo.attrs["env_args"])["task_id"] == "test_task"
        assert demo.attrs["model_file"].startswith("<mujoco")
        assert h5["data"].attrs["total"] == 30


def test_states_replay_exactly_from_the_recorded_initial_state(store, scene):
    sim = Sim(scene)
    path, _ = record_take(store, sim, ticks=20)
    take = read_take(path)
    replay = Sim(scene)
    replay.set_state(take.initial_state)
    for t in range(take.length):
        np.testing.assert_array_equal(replay.get_state(), take.arrays["states"][t])
        replay.step(take.arrays["actions"][t])


def test_review_status_is_written_to_the_file_and_index(store, scene):
    path, _ = record_take(store, Sim(scene), ticks=5)
    take = store.add(path)
    with pytest.raises(TakeError, match="needs a reason"):
        store.reject(take.meta.take_id, "  ")
    store.reject(take.meta.take_id, "dropped the cube")
    assert read_take(path).review.status == "rejected"
    store.index.clear()
    store.rebuild_index()                            # the file is the truth
    row = store.index.get(take.meta.take_id)
    assert row.status == "rejected" and row.reason == "dropped the cube"
    with pytest.raises(TakeError, match="is not one of"):
        store.set_review(take.meta.take_id, "approved")


def test_delete_goes_to_trash_and_restores(store, scene):
    path, _ = record_take(store, Sim(scene), ticks=5)
    take_id = store.add(path).meta.take_id
    trashed = store.delete(take_id)
    assert trashed.exists() and not path.exists() and store.index.get(take_id) is None
    store.restore(take_id)
    assert path.exists() and store.index.get(take_id).status == "recorded"


def test_truncated_and_corrupted_files_fail_clearly_without_stopping_a_batch(store, scene):
    good, _ = record_take(store, Sim(scene), ticks=5, name="good")
    bad_paths = []
    for i, damage in enumerate([lambda b: b[: len(b) // 2], lambda b: b[:4096] + b"\0" * 512 + b[4608:],
                                lambda b: b"not an hdf5 file"]):
        p, _ = record_take(store, Sim(scene), ticks=5, name=f"bad{i}")
        p.write_bytes(damage(p.read_bytes()))
        bad_paths.append(p)
    for p in bad_paths:
        with pytest.raises(TakeError) as err:
            read_take(p)
        assert str(p) in str(err.value)
    report = store.rebuild_index()
    assert {p for p, _ in report.unreadable} == set(bad_paths)
    assert store.index.get(read_take(good).meta.take_id) is not None


def test_missing_dataset_is_named(store, scene):
    path, _ = record_take(store, Sim(scene), ticks=5)
    with h5py.File(path, "r+") as h5:
        del h5["data/demo_0/actions"]
    with pytest.raises(TakeError, match="dataset 'data/demo_0/actions' is missing"):
        read_take(path)


RECORDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {tests!r})
    from recordings.store import TakeStore
    from teleop.sim.scene import build_scene
    from teleop.sim import Sim
    from takes_util import record_take
    store = TakeStore({root!r}); store.open()
    sim = Sim(build_scene())
    path, _ = record_take(store, sim, ticks=8, name="earlier")          # a finished take
    writer, _ = record_take(store, sim, ticks=1, name="live", finish=False)
    writer.journal.flush_interval = 0.25
    last_sync = writer.journal._last_sync
    for t in range(100000):
        writer.append(actions=[0.0] * 58, states=sim.get_state(), obs=[0.0] * 130, instruction=0,
                      subtasks=[0, 0], progress=0.0, timing=[t] * 6, frame=[t, t, 1], flags=[1, 0, 0],
                      cue_hidden=0)
        if writer.journal._last_sync != last_sync:       # the writer's own periodic fsync happened
            last_sync = writer.journal._last_sync
            print(writer.ticks, flush=True)
        time.sleep(0.002)
""")


def test_kill_9_mid_take_keeps_earlier_takes_and_recovers_the_flushed_part(tmp_path):
    root = tmp_path / "store"
    script = RECORDER.format(tests=str(Path(__file__).parent), root=str(root))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    synced = 0
    deadline = time.monotonic() + 120
    while synced < 150 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        synced = int(line)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert synced >= 150, "the recorder never got going"
    store = TakeStore(root)
    report = store.open()
    assert len(report.recovered) == 1
    recovered = read_take(report.recovered[0])
    assert recovered.interrupted and recovered.review.reason.startswith("interrupted")
    assert recovered.length >= synced                       # nothing flushed was lost
    np.testing.assert_array_equal(recovered.arrays["frame"][1:synced, 1], np.arange(synced - 1))
    finished = [r for r in store.rows() if not r.interrupted]
    assert len(finished) == 1 and finished[0].ticks == 8
    store.close()
