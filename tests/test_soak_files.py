"""The soak benchmark's hostile files do what they say, and its audit counts what it says
(the full soak is `teleop bench soak`, too long for the test suite)."""
import numpy as np

from recordings.checks import array_problems
from recordings.store import TakeStore
from recordings.takefile import read_take
from takes_util import record_take
from teleop.cli.soak_files import KINDS, audit_recordings, digest_of, drop
from teleop.core.seeding import stable_rng
from teleop.sim import Sim


def test_hostile_files_are_quarantined_or_fail_validation_and_the_audit_counts(tmp_path, scene):
    root = tmp_path / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=6)
        take = store.add(path)
        dropped = {kind: drop(kind, store.takes_dir, path, stable_rng("t", kind), k) for k, kind in enumerate(KINDS)}
    store = TakeStore(root)
    report = store.open()
    moved = {q.path.name for q in report.quarantined}
    assert moved == {dropped[k][0].name for k in ("garbage", "truncated", "heap", "duplicate")}
    assert report.duplicates[0][0] == take.meta.take_id
    tampered_path, tampered_id = dropped["tampered"]
    assert store.index.get(tampered_id).status == "accepted"
    tampered = read_take(tampered_path)                     # sound arrays, tick 0 untouched: only a replay tells
    assert array_problems(tampered) == []
    assert np.isclose(np.abs(tampered.arrays["states"][1:] - take.arrays["states"][1:]).max(), 0.1)
    records = [
        {"take_id": take.meta.take_id, "finished": True, "length": 6, "digest": digest_of(path)},   # intact
        {"take_id": "gone", "ticks": 10},                                                         # lost
        {"take_id": tampered_id, "ticks": 6 + 25},              # "recovered" with 25 ticks fewer than appended
        {"ticks": 3},                                           # killed before its journal existed
    ]
    figures = audit_recordings(store, records, 25.0)
    assert figures["takes_lost"] == 1 and figures["takes_corrupted"] == 0 and figures["max_seconds_lost"] == 1.0
    records[0]["digest"] = "changed"
    assert audit_recordings(store, records, 25.0)["takes_corrupted"] == 1
    store.close()
    assert np.isfinite(figures["max_seconds_lost"])
