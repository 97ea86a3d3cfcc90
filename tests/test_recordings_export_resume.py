"""Export ships only what a replay reproduces, carries on past a corrupt take (quarantined, named),
and resumes after a kill at any point of its end phase, cleanup included."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import numpy as np
import pytest

from recordings.export import ExportIncomplete, export_dataset
from recordings.export_finish import EXPORT_STEPS
from recordings.export_shard import ExportSettings
from recordings.store import TakeStore
from takes_util import damage_in_place, record_take
from teleop.cli.main import main
from teleop.sim import HEADER, Sim

LeRobotDataset = pytest.importorskip("lerobot.datasets.lerobot_dataset").LeRobotDataset
ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)])}
SMALL = ExportSettings(width=64, height=48)


def _store(root: Path, scene, n: int = 2, ticks: int = 8) -> list:
    """``n`` takes marked validated_pass; returns their paths."""
    paths = []
    with TakeStore(root) as store:
        for i in range(n):
            path, _ = record_take(store, Sim(scene), ticks=ticks, name=f"t{i}", task_id="pick")
            store.set_review(store.add(path).meta.take_id, "validated_pass")
            paths.append(path)
    return paths


def _edit(path: Path, name: str, fn) -> None:
    with h5py.File(path, "r+") as h5:
        ds = h5["data/demo_0"][name]
        data = ds[()]
        fn(data)
        ds[...] = data


def _loads(out: Path, episodes: int) -> LeRobotDataset:
    ds = LeRobotDataset("bidex/teleop", root=out)
    assert ds.num_episodes == episodes
    assert not [p for p in out.parent.iterdir() if p.name.startswith(out.name + ".")], "leftovers beside out"
    return ds


def test_observations_come_from_the_replay_not_the_recorded_arrays(tmp_path, scene):
    root = tmp_path / "store"
    (path,) = _store(root, scene, n=1)
    with h5py.File(path) as h5:
        true_obs = h5["data/demo_0/obs/state"][()]
    _edit(path, "obs/state", lambda o: o.fill(0.0))          # unchecked recorded observations
    export_dataset(root, tmp_path / "ds", progress=False, settings=SMALL)
    ds = _loads(tmp_path / "ds", 1)
    exported = np.stack([np.asarray(o) for o in ds.hf_dataset["observation.state"]])
    np.testing.assert_array_equal(exported, true_obs)
    stats = json.loads((tmp_path / "ds" / "meta" / "bidex_stats.json").read_text())
    assert stats["mixture"]["observation.state"]["max"][0] != 0.0


def test_states_that_a_replay_does_not_reproduce_are_never_exported(tmp_path, scene):
    root = tmp_path / "store"
    moved, changed, good = _store(root, scene, n=3)
    _edit(moved, "states", lambda s: s.__setitem__((slice(3, None), HEADER + 1), s[3:, HEADER + 1] + 0.1))
    with TakeStore(root) as store:                           # validated, then edited: its digest differs
        take_id = store.add(changed).meta.take_id
        store.set_review(take_id, "validated_pass", report={"digest": "0" * 64})
    with pytest.raises(ExportIncomplete) as err:
        export_dataset(root, tmp_path / "ds", progress=False, settings=SMALL)
    failed = dict(err.value.summary.failed)
    assert len(failed) == 2 and not (tmp_path / "ds").exists()
    assert any("does not reproduce the recorded states at tick 3" in e for e in failed.values())
    assert "changed since it was validated" in failed[take_id]
    assert (tmp_path / "ds.partial" / "shards" / good.stem / "bidex_shard.json").exists()


def test_a_corrupt_take_among_good_ones_is_quarantined_and_the_rest_exported(tmp_path, scene, capsys):
    """Issue 13.4: one corrupt take file made every export crash at start."""
    root = tmp_path / "store"
    paths = _store(root, scene, n=3)
    damage_in_place(paths[1])                                # still trusted by the index
    out = tmp_path / "ds"
    assert main(["export", "--store", str(root), "--out", str(out), "--width", "64", "--height", "48"]) == 1
    text = capsys.readouterr().out
    assert f"FAILED {paths[1].stem}: {paths[1]}: unreadable take file (" in text and "bad heap free list" in text
    assert f"QUARANTINED {paths[1]}: unreadable take file" in text and not paths[1].exists()
    assert (root / "quarantine" / f"{paths[1].name}.reason.txt").exists()
    shards = sorted(p.name for p in (tmp_path / "ds.partial" / "shards").iterdir())
    assert shards == sorted([paths[0].stem, paths[2].stem])   # the others were still rendered
    summary = export_dataset(root, out, progress=False, settings=SMALL)      # the rest, from those shards
    assert summary.ok and summary.episodes == 2 and summary.resumed == 2 and summary.rendered == 0
    _loads(out, 2)


KILLED_EXPORT = textwrap.dedent("""
    import os
    import recordings.faults as faults
    from recordings.export import export_dataset
    from recordings.export_shard import ExportSettings
    faults.checkpoint = lambda step: os._exit(70) if step == {step!r} else None
    export_dataset({store!r}, {out!r}, progress=False, overwrite={overwrite},
                   settings=ExportSettings(width=64, height=48))
    os._exit(0)
""")


def _killed_export(store: Path, out: Path, step: str, overwrite: bool = False) -> None:
    script = KILLED_EXPORT.format(step=step, store=str(store), out=str(out), overwrite=overwrite)
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 70, done.stderr[-3000:]


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory, scene):
    root = tmp_path_factory.mktemp("resume") / "store"
    _store(root, scene, n=1, ticks=5)
    return root


@pytest.mark.parametrize("step", [s for s in EXPORT_STEPS if s != "cleaned"])
def test_a_kill_at_any_end_step_resumes_with_a_plain_rerun(shared_store, tmp_path, step):
    """Issue 13.6: after a kill during cleanup the complete dataset answered 'already exists'."""
    out = tmp_path / "ds"
    _killed_export(shared_store, out, step)
    summary = export_dataset(shared_store, out, progress=False, settings=SMALL)
    assert summary.ok and summary.episodes == 1 and summary.rendered == 0
    _loads(out, 1)
    with TakeStore(shared_store) as store:
        assert {r.status for r in store.rows()} == {"exported"}
        assert {r.report["exported_to"] for r in store.rows()} == {str(out)}


def test_overwrite_works_after_a_kill_during_cleanup_and_after_a_torn_work_folder(shared_store, tmp_path):
    """Issue 13.6: --overwrite failed on a shard whose marker survived its deleted videos."""
    out = tmp_path / "ds"
    _killed_export(shared_store, out, "shard_removed")
    _killed_export(shared_store, out, "shard_removed", overwrite=True)
    assert export_dataset(shared_store, out, progress=False, overwrite=True, settings=SMALL).ok
    _loads(out, 1)
    # What the old cleanup left: the complete dataset, plus a work folder whose shards kept their
    # markers but lost their videos. Both --overwrite and a plain re-run get past it.
    for extra in (["--overwrite"], []):
        _killed_export(shared_store, out, "marked", overwrite=True)
        for videos in (out.with_name("ds.partial") / "shards").glob("*/videos"):
            shutil.rmtree(videos)
        assert main(["export", "--store", str(shared_store), "--out", str(out), *extra,
                     "--width", "64", "--height", "48"]) == 0
        _loads(out, 1)


def test_a_second_export_to_the_same_out_is_refused_while_the_first_runs(tmp_path):
    from recordings.export_finish import export_lock
    from teleop.core.errors import TeleopError

    out = tmp_path / "ds"
    with export_lock(out):                   # as if another process were exporting there
        with pytest.raises(TeleopError, match="another export to .* is running"):
            export_dataset(tmp_path / "store", out, progress=False)
    assert not (tmp_path / "ds.partial").exists()
