"""`teleop tasks prove`: episodes driven, recorded and re-validated; the record it writes and reads."""
import json

import pytest

from recordings.store import TakeStore
from teleop.cli.main import main
from teleop.control.demo import demo_tasks
from teleop.control.prove import PROVEN_SHARE, prove, select_tasks
from teleop.control.synthetic.script import scripted_tasks
from teleop.core.errors import ConfigError
from teleop.tasks import get_spec
from teleop.tasks.loader import all_specs
from teleop.tasks.proven import PROVEN_FILE, ProvenEntry, load_record, proven_ids, write_record

SCRIPTED = "pick_up_peach"                 # the shortest scripted task
# A shipped task without a script (the first by id): a fixed name goes stale as scripts are added.
UNSCRIPTED = min(set(s.id for s in all_specs()) - set(scripted_tasks()))
TASK_KEYS = {"id", "axis", "episodes", "completed", "validated", "mean_progress", "first_failing_subtask", "wall_s",
             "reason", "information_gap_median"}


def _prove_cli(capsys, *args) -> tuple[int, dict]:
    rc = main(["tasks", "prove", *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def test_prove_records_revalidates_and_writes_the_record(capsys, tmp_path):
    record, store = tmp_path / "proven.json", tmp_path / "store"
    rc, out = _prove_cli(capsys, SCRIPTED, UNSCRIPTED, "--seeds", "2", "--store", str(store), "--write-record",
                         "--record", str(record))
    assert set(out) == {"tasks", "summary", "wall_s"}
    assert set(out["summary"]) == {"tasks", "proven", "proven_ids"}
    tasks = {t["id"]: t for t in out["tasks"]}
    assert list(tasks) == [SCRIPTED, UNSCRIPTED] and all(set(t) == TASK_KEYS for t in tasks.values())

    done = tasks[SCRIPTED]
    assert done["episodes"] == 2 and 0 <= done["validated"] <= done["completed"] <= 2
    assert 0 <= done["mean_progress"] <= 100 and done["reason"] is None
    assert done["information_gap_median"] is None                  # not a memory task: no cue
    with TakeStore(store) as s:                  # every episode became a take; accepted = re-validated
        assert len(s.rows()) == 2 and len(s.rows(status="accepted")) == done["validated"]

    none = tasks[UNSCRIPTED]
    assert none["reason"] == "no operator script"
    assert (none["episodes"], none["completed"], none["validated"]) == (0, 0, 0)
    assert none["first_failing_subtask"] == get_spec(UNSCRIPTED).subtasks[0].name

    proven = [t["id"] for t in out["tasks"] if t["episodes"] and t["validated"] >= PROVEN_SHARE * t["episodes"]]
    assert out["summary"] == {"tasks": 2, "proven": len(proven), "proven_ids": proven}
    assert rc == 1                               # one task (the unscripted one) is not proven

    entries = load_record(record)
    assert entries[UNSCRIPTED].proven is False and entries[UNSCRIPTED].episodes == 0
    assert entries[SCRIPTED].validated == done["validated"] and entries[SCRIPTED].episodes == 2
    assert main(["tasks", "list", "--json", "--record", str(record)]) == 0
    listed = {t["id"]: t["proven"] for t in json.loads(capsys.readouterr().out)}
    assert listed[SCRIPTED] is (SCRIPTED in proven) and listed[UNSCRIPTED] is False
    assert sum(listed.values()) == len(proven)

    # The same episodes in two worker processes: the same figures (wall time aside).
    again = prove(select_tasks([SCRIPTED]), 2, workers=2).to_json()["tasks"][0]
    assert {k: v for k, v in again.items() if k != "wall_s"} == {k: v for k, v in done.items() if k != "wall_s"}


def test_bad_arguments_name_the_valid_choices(capsys):
    assert main(["tasks", "prove", "no_such_task", "--json"]) == 2
    assert "valid ids:" in (err := capsys.readouterr().err) and SCRIPTED in err
    assert main(["tasks", "prove", "--axis", "sideways"]) == 2
    assert "'generalization'" in capsys.readouterr().err
    assert main(["tasks", "prove", SCRIPTED, "--seeds", "0"]) == 2
    assert "--seeds must be at least 1" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="no task of axis 'memory'"):
        select_tasks([SCRIPTED], "memory")


def test_a_task_without_a_script_is_reported_without_running(tmp_path):
    report = prove(select_tasks([UNSCRIPTED, UNSCRIPTED]), 3, store=tmp_path)
    (task,) = report.tasks
    assert not task.proven and task.reason == "no operator script" and report.proven_ids == []
    assert not list(tmp_path.rglob("*.h5"))


def test_tasks_list_reads_the_proven_field_from_a_record(capsys, tmp_path):
    record = tmp_path / "proven.json"
    assert main(["tasks", "list", "--json", "--record", str(record)]) == 0          # no record: nothing proven
    assert not any(t["proven"] for t in json.loads(capsys.readouterr().out))
    write_record({SCRIPTED: ProvenEntry(True, 3, 5, 0, "2026-12-01", "git:x"),
                  UNSCRIPTED: ProvenEntry(False, 0, 0, 0, "2026-12-01", "git:x")}, record)
    write_record({"put_peach_in_fruit_bowl": ProvenEntry(True, 5, 5, 0, "2026-12-02", "git:y")}, record)   # merges
    assert proven_ids(record) == [SCRIPTED, "put_peach_in_fruit_bowl"]
    assert main(["tasks", "list", "--json", "--record", str(record)]) == 0
    listed = {t["id"]: t["proven"] for t in json.loads(capsys.readouterr().out)}
    assert [t for t, p in listed.items() if p] == [SCRIPTED, "put_peach_in_fruit_bowl"]
    assert demo_tasks(record) == [SCRIPTED, "put_peach_in_fruit_bowl"]


def test_a_bad_record_or_an_empty_one_fails_clearly(tmp_path):
    bad = tmp_path / "proven.json"
    bad.write_text(json.dumps({SCRIPTED: {"proven": True}}))
    with pytest.raises(ConfigError, match="needs exactly the keys"):
        load_record(bad)
    write_record({SCRIPTED: ProvenEntry(False, 1, 5, 0, "2026-12-01", "git:x")}, tmp_path / "none.json")
    with pytest.raises(ConfigError, match="no proven task"):
        demo_tasks(tmp_path / "none.json")


def test_the_committed_record_names_shipped_scripted_tasks():
    entries = load_record(PROVEN_FILE)
    assert entries, "teleop/tasks/proven.json is missing: run `teleop tasks prove --write-record`"
    for task_id, entry in entries.items():
        get_spec(task_id)                                    # raises for an unknown task
        assert entry.proven == (entry.episodes > 0 and entry.validated >= PROVEN_SHARE * entry.episodes)
        assert not entry.proven or task_id in scripted_tasks()
