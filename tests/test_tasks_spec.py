"""Spec loading and checking: one clear error per bad spec, and the ``teleop tasks`` CLI."""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from pathlib import Path

from teleop.cli.main import main
from teleop.core.errors import ConfigError
from teleop.tasks import PREDICATES, all_specs, load_spec

CATALOG = Path(__file__).resolve().parents[2] / "shared/reference/bidex100_task_catalog.json"
GOOD = {
    "id": "tiny", "axis": "generalization", "instruction": "Put the cube in the bowl.", "ordered": False,
    "objects": [
        {"name": "cube", "kind": "box", "size": [0.02, 0.02, 0.02], "spawn": {"center": [0.45, 0.1]}},
        {"name": "bowl", "kind": "container", "inner": [0.07], "depth": 0.05, "spawn": {"center": [0.65, 0.0]}},
    ],
    "subtasks": [
        {"name": "Pick up the cube", "weight": 40, "predicates": [{"type": "picked_up", "object": "cube"}]},
        {"name": "Cube in bowl", "weight": 60, "must_hold": True,
         "predicates": [{"type": "inside", "object": "cube", "container": "bowl"}]},
    ],
}


def _write(tmp_path, raw, name="tiny.yaml"):
    path = tmp_path / name
    path.write_text(raw if isinstance(raw, str) else yaml.safe_dump(raw, allow_unicode=True))
    return path


def _bad(tmp_path, mutate):
    raw = copy.deepcopy(GOOD)
    mutate(raw)
    with pytest.raises(ConfigError) as info:
        load_spec(_write(tmp_path, raw))
    return str(info.value)


def test_good_spec_loads(tmp_path):
    spec = load_spec(_write(tmp_path, GOOD))
    assert [s.weight for s in spec.subtasks] == [40, 60] and spec.subtasks[1].must_hold


def test_unknown_predicate(tmp_path):
    msg = _bad(tmp_path, lambda r: r["subtasks"][0]["predicates"][0].update(type="levitated"))
    assert "tiny.yaml" in msg and "subtasks[0].predicates[0].type" in msg and "'levitated'" in msg
    assert "'picked_up'" in msg and "'inside'" in msg          # the valid choices are listed


def test_missing_object(tmp_path):
    msg = _bad(tmp_path, lambda r: r["subtasks"][1]["predicates"][0].update(object="ghost"))
    assert "subtasks[1].predicates[0].object" in msg and "'ghost'" in msg and "'cube' or 'bowl'" in msg


def test_weights_summing_to_99(tmp_path):
    msg = _bad(tmp_path, lambda r: r["subtasks"][0].update(weight=39))
    assert "tiny.yaml" in msg and "weight" in msg and "sum to 99" in msg


def test_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match=r"tiny.yaml: bad YAML"):
        load_spec(_write(tmp_path, "id: tiny\nobjects: [unclosed\n"))


@pytest.mark.parametrize("mutate, field, hint", [
    (lambda r: r["subtasks"][1]["predicates"][0].update(container="cube"), "container", "'bowl'"),
    (lambda r: r["subtasks"][0]["predicates"][0].update(hand="middle"), "hand", "'left', 'right' or 'any'"),
    (lambda r: r["subtasks"][0]["predicates"][0].update(height="high"), "height", "a number"),
    (lambda r: r["subtasks"][0]["predicates"][0].update(colour="red"), "colour", "unknown argument"),
    (lambda r: r["objects"][0].update(kind="blob"), "objects[0].kind", "'box'"),
    (lambda r: r.update(axis="speed"), "axis", "'memory'"),
    (lambda r: r["objects"][0]["spawn"].update(center=[1.5, 0.0]), "spawn.center", "within x"),
    (lambda r: r["subtasks"][0].update(after=["nope"]), "after", "unknown prerequisite"),
    (lambda r: r.update(language_schedule=[{"text": "a"}, {"text": "b"}]), "until_step", "non-final"),
    (lambda r: r["subtasks"][0]["predicates"].__setitem__(0, {"type": "button_pressed_exactly", "button": "cube",
                                                               "n": 2}), "button", "none (no articulated"),
    (lambda r: r["subtasks"][0]["predicates"].__setitem__(0, {"type": "not", "of": {"type": "lifted"}}),
     "predicates[0].of.object", "missing required"),
])
def test_argument_kinds_are_checked(tmp_path, mutate, field, hint):
    msg = _bad(tmp_path, mutate)
    assert "tiny.yaml" in msg and field in msg and hint in msg, msg


def test_id_must_match_file_name(tmp_path):
    with pytest.raises(ConfigError, match="must match the file name"):
        load_spec(_write(tmp_path, GOOD, name="other.yaml"))


def test_catalog_has_at_least_30_documented_predicates():
    assert len(PREDICATES) >= 30
    assert all(cls.__doc__ and cls.args for cls in PREDICATES.values())


def test_shipped_tasks_match_the_catalog_quotas():
    ref = {t["id"]: t for t in json.loads(CATALOG.read_text())["tasks"]} if CATALOG.exists() else None
    specs = all_specs()
    axes = [s.axis for s in specs]
    assert len(specs) >= 40 and axes.count("generalization") >= 14 and axes.count("memory") >= 6
    assert axes.count("instruction_following") >= 8 and axes.count("limited_demonstrations") >= 8
    assert axes.count("long_horizon") >= 4
    assert sum(1 for s in specs if s.language_schedule) >= 3
    if ref is None:
        pytest.skip("reference catalog not available")
    for s in specs:
        t = ref[s.id]
        assert (s.axis, s.instruction, s.ordered, len(s.subtasks)) == \
            (t["axis"], t["instruction"], t["ordered"], t["K"])
        assert s.demos == t["demos"]                    # the collection target the UI shows
        assert [(x.name, x.weight, x.must_hold, x.latch_violation) for x in s.subtasks] == \
            [(x["name"], x["weight"], x["must_hold"], x["latch_violation"]) for x in t["subtasks"]]
        sched = t["language_schedule"]
        assert (s.language_schedule is None) == (sched is None)
        if sched:
            assert [(g.text, g.until_step) for g in s.language_schedule] == \
                [(g["text"], g.get("until_step")) for g in sched]


def test_cli_list_json(capsys):
    assert main(["tasks", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(all_specs())
    assert set(rows[0]) == {"id", "axis", "K", "ordered", "instruction", "language_schedule", "subtasks", "proven",
                            "cue", "information_gap_median", "information_gap_source"}
    assert set(rows[0]["subtasks"][0]) == {"name", "weight", "must_hold", "latch_violation"}


def test_cli_show_and_unknown_task(capsys):
    assert main(["tasks", "show", "pick_up_peach", "--json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert detail["subtasks"][0]["predicates"][0]["type"] == "picked_up"
    assert main(["tasks", "show", "no_such_task"]) == 2
    assert "unknown task 'no_such_task'" in capsys.readouterr().err


def test_cli_check_reports_file_and_exits_nonzero(tmp_path, capsys):
    raw = copy.deepcopy(GOOD)
    raw["subtasks"][0]["weight"] = 39
    bad = _write(tmp_path, raw)
    good = _write(tmp_path, GOOD, name="tiny2.yaml")
    good.write_text(good.read_text().replace("id: tiny", "id: tiny2"))
    assert main(["tasks", "check", str(bad), str(good)]) == 1
    out = capsys.readouterr()
    assert "tiny.yaml" in out.err and "sum to 99" in out.err and "1 ok, 1 failed" in out.out
    assert main(["tasks", "check"]) == 0
