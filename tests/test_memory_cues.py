"""Issue 17 item 4: memory tasks declare their cue; every take records, tick by tick, whether the
scene provably hides it (reproduced by replay); the export and ``tasks list`` carry MIKASA-Robo-VLA's
information gap (the longest interval the cue is provably absent)."""
from __future__ import annotations

import copy
import json

import mujoco
import numpy as np
import pytest

from recordings.cue_gap import InformationGap, information_gap
from recordings.export import export_dataset
from recordings.export_shard import ExportSettings
from recordings.replay_check import replay_compare
from recordings.store import TakeStore
from recordings.takefile import read_take
from teleop.cli.main import main
from teleop.core.errors import ConfigError
from teleop.core.yamlio import load_yaml
from teleop.tasks import TaskRuntime, all_specs, parse_spec
from teleop.tasks.cues import CUE_KINDS
from teleop.tasks.loader import SPEC_DIR

TASK = "uncover_red_cube"        # three presses teleport the caps over the cubes: the red cube's cap hides it
TINY = ExportSettings(width=64, height=48)


def test_information_gap_is_the_longest_hidden_run():
    assert information_gap([0, 1, 1, 0, 1, 1, 1, 0]) == InformationGap(5, 3)
    assert information_gap([1, 1, 0, 0, 1]) == InformationGap(3, 2)
    assert information_gap([0, 0, 0]) == InformationGap(0, 0)
    assert information_gap(np.ones(7, np.uint8)) == InformationGap(7, 7)


def test_every_shipped_memory_task_declares_a_cue():
    memory = [s for s in all_specs() if s.axis == "memory"]
    assert len(memory) == 10
    for spec in memory:
        assert spec.cue is not None and spec.cue.kind in CUE_KINDS and spec.cue.what, spec.id
    assert {s.cue.kind for s in memory} == set(CUE_KINDS)        # every kind is used by a shipped task


def _raw(task_id: str = TASK) -> dict:
    return load_yaml(SPEC_DIR / f"{task_id}.yaml", "task spec")


@pytest.mark.parametrize("change, field, expect", [
    (lambda r: r["cue"].update(kind="smell"), "cue.kind", "valid choices: 'covered_object'"),
    (lambda r: r.pop("cue"), "cue", "valid kinds: 'covered_object'"),
    (lambda r: r["cue"].update(objects=["red_cube", "green_cube"]), "cue.covers", "equal lengths"),
    (lambda r: r["cue"].update(covers=["lid"]), "cue.covers[0]", "valid choices: 'yellow_button'"),
    (lambda r: r["cue"].update(colour="red"), "cue.colour", "valid choices: 'covers' or 'objects'"),
    (lambda r: r.update(cue={"kind": "insertion_order", "what": "x", "event": "caps_appear"}), "cue.event",
     "needs a order_tracker event; valid choices: none defined"),
    (lambda r: r["cue"].pop("what"), "cue.what", "must say in words"),
])
def test_a_bad_cue_names_the_file_field_and_choices(change, field, expect):
    raw = copy.deepcopy(_raw())
    change(raw)
    with pytest.raises(ConfigError) as err:
        parse_spec(raw, "specs/uncover_red_cube.yaml")
    assert str(err.value).startswith(f"specs/uncover_red_cube.yaml: {field}: ") and expect in str(err.value)


def test_each_cue_kind_hides_by_its_rule_in_the_start_state():
    """At reset every cue is visible (nothing covered, recoloured, pressed, inserted or moved)."""
    for task in ("uncover_red_cube", "swap_cup_colors_with_cube", "press_button_then_grasp_mug",
                 "drop_fruits_in_basket_then_remove_in_order", "swap_fruits_between_bowls"):
        rt = TaskRuntime(task)
        rt.reset(0, 0)
        assert rt.cue_hidden is False, task
    rt = TaskRuntime("swap_fruits_between_bowls")          # a fruit out of its start bowl hides where it began
    rt.reset(0, 0)
    peach = rt.world.objects["peach"]
    adr = rt.sim.model.jnt_qposadr[rt.sim.model.body_jntadr[peach.body]]
    rt.sim.data.qpos[adr:adr + 3] = (0.4, 0.0, 0.9)
    mujoco.mj_forward(rt.sim.model, rt.sim.data)
    rt._observe_cue()
    assert rt.cue_hidden is True


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A real take through the real loop: the synthetic operator presses three times, the caps appear."""
    root = tmp_path_factory.mktemp("cue")
    code = main(["record", "--device", "synthetic", "--task", TASK, "--max-seconds", "4.6", "--store",
                 str(root / "store"), "--json"])
    assert code == 0
    return root, read_take(sorted((root / "store" / "takes").glob("*.h5"))[-1])


def _reveal_tick(take) -> int:
    reveals = [e for e in take.events if e["type"] == "reveal"]
    assert len(reveals) == 1, take.events
    return int(reveals[0]["tick"])


def test_the_take_hides_the_cue_from_the_reveal_on(recorded):
    _, take = recorded
    reveal = _reveal_tick(take)                 # states[reveal] is the first with the caps over the cubes
    assert 0 < reveal < take.length - 5
    expected = (np.arange(take.length) >= reveal).astype(np.uint8)     # the cap stays down until the end
    np.testing.assert_array_equal(take.arrays["cue_hidden"], expected)
    assert take.meta.cue == {"kind": "covered_object", "what": "which cap hides the red cube"}


def test_replay_reproduces_the_cue_flags_and_catches_a_changed_one(recorded):
    _, take = recorded
    rt = TaskRuntime(TASK, horizon=take.length + 1)
    rt.restore(take.initial_state)
    assert replay_compare(rt, take, exact=True).divergence_tick is None
    flags = take.arrays["cue_hidden"].copy()
    tick = _reveal_tick(take) - 1
    flags[tick] = 1                                              # claims the cue hid one tick early
    bad = type(take)(take.path, take.meta, {**take.arrays, "cue_hidden": flags}, take.review, take.interrupted,
                     take.events)
    rt.restore(take.initial_state)
    cmp = replay_compare(rt, bad, exact=True)
    assert cmp.divergence_tick == tick and "memory cue is hidden in the recording" in cmp.divergence


def test_export_and_tasks_list_carry_the_information_gap(recorded, capsys):
    root, take = recorded
    gap = take.length - _reveal_tick(take)                      # hand-computed from the scene events
    with TakeStore(root / "store") as store:
        store.set_review(take.meta.take_id, "validated_pass")
    out = root / "dataset"
    assert export_dataset(root / "store", out, progress=False, settings=TINY, mark_exported=False).ok
    episode = json.loads((out / "meta" / "bidex_episodes.jsonl").read_text().splitlines()[0])
    assert episode["cue"]["kind"] == "covered_object"
    assert episode["cue_hidden_steps"] == gap and episode["information_gap_steps"] == gap
    record = root / "proven.json"                               # a record without a gap for this task
    record.write_text(json.dumps({TASK: {"proven": False, "validated": 0, "episodes": 0, "first_episode": 0,
                                         "date": "2026-12-01", "commit": "git:test"}}))
    assert main(["tasks", "list", "--json", "--record", str(record), "--store", str(root / "store")]) == 0
    listed = {t["id"]: t for t in json.loads(capsys.readouterr().out)}
    assert listed[TASK]["information_gap_median"] == gap and listed[TASK]["information_gap_source"] == "store"
    assert listed["pick_up_peach"]["cue"] is None and listed["pick_up_peach"]["information_gap_median"] is None
    assert listed["press_button_then_grasp_mug"]["information_gap_median"] is None      # no takes, no record
    record.write_text(json.dumps({TASK: {"proven": True, "validated": 3, "episodes": 3, "first_episode": 0,
                                         "date": "2026-12-01", "commit": "git:test", "information_gap_median": 41.0}}))
    assert main(["tasks", "list", "--json", "--record", str(record), "--store", str(root / "store")]) == 0
    listed = {t["id"]: t for t in json.loads(capsys.readouterr().out)}
    assert listed[TASK]["information_gap_median"] == 41.0 and listed[TASK]["information_gap_source"] == "proven"


def test_prove_takes_the_median_gap_over_validated_episodes_only(tmp_path):
    from recordings.batch import ItemResult
    from teleop.control.prove import _aggregate
    from teleop.tasks import get_spec
    from teleop.tasks.proven import ProvenEntry, load_record, write_record

    spec = get_spec(TASK)
    proofs = [{"completed": True, "validated": v, "progress": 100.0, "first_failing_subtask": None,
               "information_gap_steps": g} for v, g in ((True, 10), (True, 30), (False, 500), (True, 20))]
    proof = _aggregate(spec, [ItemResult(i, True, p) for i, p in enumerate(proofs)])
    assert proof.information_gap_median == 20.0                   # 500 is an episode that did not re-validate
    path = write_record({TASK: ProvenEntry(True, 3, 4, 0, "2026-12-01", "git:test", 20.0)}, tmp_path / "p.json")
    assert load_record(path)[TASK].information_gap_median == 20.0
