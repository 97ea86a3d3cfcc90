"""Validating a store: a corrupt file among good ones is quarantined and named while the rest are
validated; a store of only unreadable files exits non-zero naming them; a kill during validation
keeps every result already finished."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from recordings.store import TakeStore
from recordings.takefile import read_take
from recordings.validate_batch import validate_store
from takes_util import clone_take, damage_in_place, record_take
from teleop.cli.main import main
from teleop.sim import Sim
from validation_util import cube_runtime, record_cube_take

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)])}


@pytest.fixture(scope="module")
def cube_file(tmp_path_factory):
    with TakeStore(tmp_path_factory.mktemp("cube") / "store") as store:
        take, result = record_cube_take(store)
    assert result.strict_success == 1
    return take.path


def _cube_store(root: Path, cube_file: Path, n: int) -> list[str]:
    ids = [f"20260101-000000-pick_up_test_cube-{i:06x}" for i in range(n)]
    with TakeStore(root) as store:
        for take_id in ids:
            store.add(clone_take(cube_file, store.takes_dir, take_id))
            store.accept(take_id)
    return ids


def test_a_corrupt_file_among_good_ones_is_quarantined_and_the_rest_validated(tmp_path, cube_file):
    """Issue 13.4/13.5: one broken take aborted the whole run (raw traceback or rc 2)."""
    root = tmp_path / "store"
    good = _cube_store(root, cube_file, 3)
    rotten = Path(TakeStore(root).takes_dir / f"{good[1]}.h5")
    damage_in_place(rotten)                                   # the index still trusts this file
    junk = root / "takes" / "junk.h5"
    junk.write_bytes(b"\x89HDF\r\n\x1a\n" + os.urandom(3000))  # never readable
    with TakeStore(root) as store:
        assert [q.path for q in store.open_report.quarantined] == [junk]
        summary = validate_store(store, progress=False, runtime_for=cube_runtime)
        assert (summary.passed, summary.failed, len(summary.errors)) == (2, 0, 1) and not summary.ok
        (error,) = summary.errors
        assert error["path"] == str(rotten) and "RuntimeError" in error["reason"]
        assert "bad heap free list" in error["reason"]
        assert Path(error["moved_to"]).parent == store.quarantine_dir and not rotten.exists()
        assert store.index.get(good[1]) is None
        assert [store.index.get(t).status for t in (good[0], good[2])] == ["validated_pass"] * 2
    reasons = sorted(p.name for p in (root / "quarantine").glob("*.reason.txt"))
    assert reasons == sorted([f"{good[1]}.h5.reason.txt", "junk.h5.reason.txt"])


def test_cli_names_unreadable_files_and_exits_non_zero(tmp_path, scene, capsys):
    root = tmp_path / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=5)
        store.accept(store.add(path).meta.take_id)
        bad, _ = record_take(store, Sim(scene), ticks=5, name="bad")
        store.accept(store.add(bad).meta.take_id)
    damage_in_place(bad)
    truncated = root / "takes" / "truncated.h5"
    truncated.write_bytes(path.read_bytes()[:3000])
    assert main(["validate", "--store", str(root)]) == 1
    out = capsys.readouterr().out
    assert "1 failed, 1 not validated" in out                  # test_task is unknown: a FAIL verdict
    assert f"NOT VALIDATED {bad}: unreadable take file" in out and "moved to" in out
    assert f"{truncated}: unreadable take file" in out
    assert main(["validate", "--store", str(root)]) == 0       # nothing left that cannot be read


def test_a_store_of_only_unreadable_files_is_not_a_silent_success(tmp_path, capsys):
    root = tmp_path / "store"
    (root / "takes").mkdir(parents=True)
    for name in ("a.h5", "b.h5"):
        (root / "takes" / name).write_bytes(b"not an hdf5 file")
    assert main(["validate", "--store", str(root)]) == 1
    out = capsys.readouterr().out
    assert "quarantined 2 file(s)" in out
    assert all(f"{root / 'takes' / n}: unreadable take file" in out for n in ("a.h5", "b.h5"))


KILLED_VALIDATE = textwrap.dedent("""
    import os
    import recordings.faults as faults
    from recordings.store import TakeStore
    from recordings.validate_batch import validate_store
    from validation_util import cube_runtime
    written = []
    def checkpoint(step):
        if step == "review_written":
            written.append(step)
            if len(written) == 2:
                os._exit(70)       # the 2nd result is in its file, not yet in the index
    faults.checkpoint = checkpoint
    with TakeStore({root!r}) as store:
        validate_store(store, progress=False, runtime_for=cube_runtime)
""")


def test_a_kill_during_validation_keeps_every_finished_result(tmp_path, cube_file):
    """Issue 13.5: results were written only at the end, and file and index then disagreed."""
    root = tmp_path / "store"
    ids = _cube_store(root, cube_file, 3)
    done = subprocess.run([sys.executable, "-c", KILLED_VALIDATE.format(root=str(root))], env=ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 70, done.stderr
    with TakeStore(root) as store:
        statuses = sorted(store.index.get(t).status for t in ids)
        assert statuses == ["accepted", "validated_pass", "validated_pass"]
        for take_id in ids:                                       # index and files agree again
            assert read_take(store.path(take_id)).review.status == store.index.get(take_id).status
        summary = validate_store(store, progress=False, runtime_for=cube_runtime)   # resumes with the rest
        assert (summary.takes, summary.passed) == (1, 1)
