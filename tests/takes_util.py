"""Build real takes quickly for tests: the real Sim, a smooth random action stream."""
from __future__ import annotations

import numpy as np

from recordings.take import meta_for_episode
from recordings.takefile import TIMING
from teleop.core.seeding import stable_rng
from teleop.sim import Sim

SUBTASKS = ("reach", "hold")
FRAME_COLUMNS = ("t", "seq", "engage")


def record_take(store, sim: Sim, ticks: int = 30, name: str = "take", task_id: str = "test_task",
                finish: bool = True):
    """Record ``ticks`` ticks of a smooth random walk; returns (path or writer, actions)."""
    sim.reset(0)
    meta = meta_for_episode(sim, task_id, 0, 0, "tester", ("Do the thing.", "Now the other."), SUBTASKS,
                            FRAME_COLUMNS, device="synthetic")
    rng = stable_rng(name)
    actions = np.clip(sim.joint_positions + np.cumsum(rng.normal(0, 0.01, (ticks, 58)), axis=0),
                      sim.ctrl_low, sim.ctrl_high).astype(np.float32)
    writer = store.writer(meta)
    writer.open()
    for t, action in enumerate(actions):
        state, obs = sim.get_state(), sim.observation()
        sim.step(action)
        writer.append(actions=action, states=state, obs=obs,
                      instruction=int(t >= ticks // 2), subtasks=np.array([t > 5, t > 20], np.uint8),
                      progress=50.0 * (t > 5) + 50.0 * (t > 20), timing=np.arange(len(TIMING)) + t,
                      frame=np.array([t * 0.04, t, 1.0]), flags=np.array([1, 0, 0], np.uint8), cue_hidden=0)
    return (writer.finish() if finish else writer), actions


def record_actions(store, sim: Sim, actions: np.ndarray, task_id: str = "test_task", seed: int = 0):
    """Record a take of exactly ``actions`` (T, 58) from ``sim.reset(seed)``; returns its path."""
    sim.reset(seed)
    meta = meta_for_episode(sim, task_id, seed, seed, "tester", ("Do the thing.",), SUBTASKS, FRAME_COLUMNS)
    writer = store.writer(meta)
    writer.open()
    ticks = len(actions)
    for t, action in enumerate(np.asarray(actions, np.float32)):
        state, obs = sim.get_state(), sim.observation()
        sim.step(action)
        writer.append(actions=action, states=state, obs=obs, instruction=0,
                      subtasks=np.array([t > ticks // 3, t > 2 * ticks // 3], np.uint8),
                      progress=50.0 * (t > ticks // 3) + 50.0 * (t > 2 * ticks // 3),
                      timing=np.zeros(len(TIMING)), frame=np.zeros(3), flags=np.array([1, 0, 0], np.uint8),
                      cue_hidden=0)
        writer.set_last_obs(sim.observation())
    return writer.finish()
def clone_take(path, folder, take_id: str):
    """A copy of the take file at ``path`` under another take id (``folder/<take_id>.h5``)."""
    import json
    import shutil

    import h5py

    target = folder / f"{take_id}.h5"
    shutil.copyfile(path, target)
    with h5py.File(target, "r+") as h5:
        demo = h5["data/demo_0"]
        demo.attrs["meta"] = json.dumps({**json.loads(demo.attrs["meta"]), "take_id": take_id})
    return target


def damage_in_place(path) -> None:
    """Corrupt the free-list offset of the file's first local heap (h5py then raises RuntimeError
    "bad heap free list"), keeping size, inode and mtime: a store that trusts its index sees
    nothing until it reads the file."""
    import os

    st = os.stat(path)
    heap = path.read_bytes().find(b"HEAP")
    assert heap >= 0, path
    with open(path, "r+b") as fh:
        fh.seek(heap + 16)
        fh.write(b"\xff" * 8)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
