"""Issue 17 item 3: a language switch reaches the operator (window panel, headset HUD) at its step,
the take stores it per tick, a replay reproduces it, and the exported frames' task text switches
exactly there when lerobot's own LeRobotDataset loads them."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from recordings.export import export_dataset
from recordings.export_shard import ExportSettings
from recordings.replay_check import replay_compare
from recordings.store import TakeStore
from recordings.takefile import read_take
from retarget import load_config
from teleop.control.publish import hud_state
from teleop.control.session import Session
from teleop.tasks import TaskRuntime, build_task, load_spec

SPEC = Path(__file__).parent / "data" / "switch_early_test.yaml"
SWITCH = 6               # the schedule's until_step
TICKS = 12
TINY = ExportSettings(width=64, height=48)      # rendering cost is not what this test measures
LeRobotDataset = pytest.importorskip("lerobot.datasets.lerobot_dataset").LeRobotDataset


def _runtime() -> TaskRuntime:
    return TaskRuntime(build_task(load_spec(SPEC)), horizon=100)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    root = tmp_path_factory.mktemp("switch")
    rt = _runtime()
    session = Session(rt, load_config().build(rt.sim.scene))
    session.reset(0, 0)
    with TakeStore(root / "store") as store:
        session.start_recording(store, operator="tester", device="scripted")
        hold = rt.sim.joint_positions
        reports = []
        for _ in range(TICKS):
            session.hold(hold)
            reports.append(session.tick())
        take = session.stop_recording()
    return root, read_take(take.path), reports


def test_the_operator_sees_the_switch_at_its_step(recorded):
    _, take, reports = recorded
    first, second = take.meta.instructions
    # a report is what the window's task panel and the HUD show after tick ``report.tick``
    shown = [r.instruction for r in reports]
    assert shown == [first if r.tick < SWITCH else second for r in reports]
    assert [r.tick for r in reports if r.instruction == second][0] == SWITCH
    hud = [hud_state(r, take.meta.subtask_names, True)["instruction"] for r in reports]
    assert hud == shown


def test_the_take_and_its_replay_switch_at_the_same_tick(recorded):
    _, take, _ = recorded
    index = take.arrays["instruction"]
    np.testing.assert_array_equal(index, (np.arange(TICKS) >= SWITCH).astype(np.int32))
    rt = _runtime()
    rt.restore(take.initial_state)
    replayed = []
    for action in take.arrays["actions"]:
        replayed.append(take.meta.instructions.index(rt.instruction))
        rt.step(action.astype(np.float64))
    assert replayed == index.tolist()
    rt.restore(take.initial_state)
    assert replay_compare(rt, take, exact=True).divergence_tick is None


def test_a_tampered_instruction_index_is_caught_by_replay(recorded):
    _, take, _ = recorded
    arrays = {**take.arrays, "instruction": take.arrays["instruction"].copy()}
    arrays["instruction"][SWITCH] = 0                    # the switch one tick late
    bad = type(take)(take.path, take.meta, arrays, take.review, take.interrupted, take.events)
    rt = _runtime()
    rt.restore(take.initial_state)
    cmp = replay_compare(rt, bad, exact=True)
    assert cmp.divergence_tick == SWITCH and "instruction" in cmp.divergence


def test_exported_frames_switch_task_text_exactly_at_the_step(recorded):
    root, take, _ = recorded
    with TakeStore(root / "store") as store:
        store.set_review(take.meta.take_id, "validated_pass")
    out = root / "dataset"
    assert export_dataset(root / "store", out, progress=False, settings=TINY, mark_exported=False).ok
    ds = LeRobotDataset("bidex/teleop", root=out)
    tasks = [ds[i]["task"] for i in range(len(ds))]
    first, second = take.meta.instructions
    assert tasks == [first] * SWITCH + [second] * (TICKS - SWITCH)
    episode = json.loads((out / "meta" / "bidex_episodes.jsonl").read_text().splitlines()[0])
    assert episode["instructions"] == [first, second]
    assert episode["cue"] is None and episode["cue_hidden_steps"] == 0 and episode["information_gap_steps"] == 0
