"""Throughput analytics: the maths on hand-made rows (working sessions, breaks, rates, reasons),
latches and tracking loss read from real take files, and ``teleop stats --json``."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from recordings.analytics import ALL, throughput
from recordings.store import TakeStore
from takes_util import record_take
from teleop.cli.main import main
from teleop.sim import Sim


def row(take_id, operator, start, status, reason="", duration=10.0, task="pick_up_peach"):
    return SimpleNamespace(take_id=take_id, operator=operator, task_id=task, status=status, reason=reason,
                           created=start, duration_s=duration, path=f"/nonexistent/{take_id}.h5")


def group(result, operator, task):
    return next(g for g in result["groups"] if g["operator"] == operator and g["task_id"] == task)


def test_rates_sessions_breaks_and_reasons():
    rows = [row("a", "ann", 0, "validated_pass"), row("b", "ann", 15, "rejected", "dropped the object: slipped"),
            row("c", "ann", 30, "accepted"), row("d", "ann", 2000, "exported"),       # after a break
            row("e", "bob", 100, "recorded")]
    result = throughput(rows)
    ann = group(result, "ann", ALL)
    assert (ann["takes"], ann["accepted"], ann["rejected"], ann["undecided"]) == (4, 3, 1, 0)
    assert ann["acceptance_rate"] == 0.75
    assert ann["working_h"] == pytest.approx(50 / 3600, abs=1e-3)       # 0..40 s, then 2000..2010 s
    assert ann["accepted_per_hour"] == pytest.approx(3 / (50 / 3600), rel=1e-3)
    assert ann["between_takes_s"] == {"p50": 5.0, "p90": 5.0, "n": 2}  # the break is not a gap
    assert ann["rejection_reasons"] == {"dropped the object": 1}
    bob = group(result, "bob", "pick_up_peach")
    assert bob["acceptance_rate"] is None and bob["undecided"] == 1
    only_bob = throughput(rows, operator="bob")
    assert only_bob["takes"] == 1 and {g["operator"] for g in only_bob["groups"]} == {"bob"}


def test_latches_and_tracking_loss_come_from_the_take_files(tmp_path, scene, capsys):
    store = TakeStore(tmp_path / "store")
    store.open()
    path, _ = record_take(store, Sim(scene), ticks=30)
    store.add(path)
    store.accept(store.rows()[0].take_id)
    store.close()
    assert main(["stats", "--store", str(tmp_path / "store"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    g = group(result, "tester", "test_task")
    assert g["latch_s"]["reach"] == {"p50": 0.28, "n": 1}                # first latched at tick 6 -> 7 / 25 s
    assert g["latch_s"]["hold"] == {"p50": 0.88, "n": 1}
    assert g["tracking_loss_share"] == 0.0 and g["accepted"] == 1
    assert result["overall"]["takes"] == 1
