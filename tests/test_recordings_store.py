"""A store many processes share: a live recording is owned by its writer (nobody else finalises
it), finalisation survives a kill at every step, stray journals are cleaned or kept aside, and two
files with one take id are reported instead of swapping in the index."""
import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from recordings.finalize import FINALIZE_STEPS
from recordings.store import TakeStore
from recordings.takefile import read_take
from takes_util import record_take
from teleop.sim import Sim

ROOT = Path(__file__).resolve().parents[1]
TESTS = str(Path(__file__).parent)
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), TESTS]), "PYTHONUNBUFFERED": "1"}

LIVE_RECORDER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from recordings.store import TakeStore
    from retarget import load_config
    from teleop.control.session import Session
    from validation_util import cube_runtime
    store = TakeStore({root!r}); store.open()
    rt = cube_runtime()
    session = Session(rt, load_config().build(rt.sim.scene))
    session.reset(0, 0)
    session.start_recording(store, operator="tester", device="scripted")
    ticks = 0
    while not Path({stop!r}).exists():
        session.tick()
        ticks += 1
        print(ticks, flush=True)
        time.sleep(0.01)
    take = session.stop_recording()
    print(json.dumps({{"ticks": ticks, "length": take.length, "interrupted": take.interrupted,
                       "path": str(take.path)}}), flush=True)
""")


def test_opening_the_store_during_a_recording_leaves_the_live_take_alone(tmp_path):
    """Issue 13.1: `teleop validate` (and any other open) 3 s into a recording destroyed it."""
    root, stop = tmp_path / "store", tmp_path / "stop"
    proc = subprocess.Popen([sys.executable, "-c", LIVE_RECORDER.format(root=str(root), stop=str(stop))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while len(lines) < 20 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert len(lines) >= 20, proc.stderr.read()
    validate = subprocess.run([sys.executable, "-m", "teleop", "validate", "--store", str(root)],
                              capture_output=True, text=True, env=ENV, timeout=300)
    store = TakeStore(root)                              # a second opener, in this process
    report = store.open()
    assert report.recovered == [] and report.quarantined == [] and report.cleaned == []
    assert len(list(store.takes_dir.glob("*.partial"))) == 1           # the live journal is untouched
    store.close()
    stop.touch()
    assert proc.wait(120) == 0, proc.stderr.read()
    reader.join(10)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "validated 0 take(s)" in validate.stdout
    final = json.loads(lines[-1])
    assert not final["interrupted"] and final["length"] == final["ticks"] == len(lines) - 1
    with TakeStore(root) as store:
        (row,) = store.rows()
        assert row.ticks == final["ticks"] and not row.interrupted and not store.open().recovered


def test_a_journal_owned_in_this_process_is_not_recovered(tmp_path, scene):
    with TakeStore(tmp_path / "store") as store:
        writer, _ = record_take(store, Sim(scene), ticks=5, finish=False)
        assert TakeStore(store.root).open().recovered == []       # a second store object, same process
        writer.journal.release()                                  # the owner "dies"
        (recovered,) = TakeStore(store.root).open().recovered
        assert read_take(recovered).interrupted and read_take(recovered).length == 5


FINISHER = textwrap.dedent("""
    import os, sys
    import recordings.faults as faults
    from recordings.store import TakeStore
    from teleop.sim import Sim
    from teleop.sim.scene import build_scene
    from takes_util import record_take
    store = TakeStore({root!r}); store.open()
    writer, _ = record_take(store, Sim(build_scene()), ticks=50, name="victim", finish=False)
    print(writer.meta.take_id, flush=True)
    faults.checkpoint = lambda step: os._exit(70) if step == {step!r} else None
    writer.finish()
    os._exit(0)
""")
REOPEN = textwrap.dedent("""
    import os
    import recordings.faults as faults
    from recordings.store import TakeStore
    faults.checkpoint = lambda step: os._exit(70) if step == {step!r} else None
    TakeStore({root!r}).open()
""")


@pytest.mark.parametrize("step", FINALIZE_STEPS)
def test_a_kill_at_any_finalisation_step_loses_no_tick_and_never_remarks_a_finished_take(tmp_path, scene, step):
    """Issue 13.3: recovery re-finalised a finished take (0 ticks, or re-marked interrupted)."""
    root = tmp_path / "store"
    with TakeStore(root) as store:
        earlier, _ = record_take(store, Sim(scene), ticks=8, name="earlier")
        store.add(earlier)
    before = earlier.read_bytes()
    finish = subprocess.run([sys.executable, "-c", FINISHER.format(root=str(root), step=step)],
                            capture_output=True, text=True, env=ENV, timeout=120)
    assert finish.returncode == 70, finish.stderr
    take_id = finish.stdout.split()[0]
    # Recovery itself is killed at the same step (where it passes through it), then runs again.
    again = subprocess.run([sys.executable, "-c", REOPEN.format(root=str(root), step=step)],
                           capture_output=True, text=True, env=ENV, timeout=120)
    assert again.returncode in (0, 70), again.stderr
    with TakeStore(root) as store:
        take = store.load(take_id)
        assert take.length == 50, step                       # every tick, whatever the step
        # finished (its file complete) before the kill: never re-marked interrupted
        assert take.interrupted == (FINALIZE_STEPS.index(step) < FINALIZE_STEPS.index("h5_renamed")), step
        assert earlier.read_bytes() == before
        assert sorted(p.name for p in store.takes_dir.iterdir() if p.name != ".store.lock") == \
            sorted([earlier.name, f"{take_id}.h5"])           # no journal, no temp file left
        assert not store.quarantine_dir.exists()
        assert len(store.rows()) == 2


def test_stray_journals_are_cleaned_or_kept_aside(tmp_path, scene):
    root = tmp_path / "store"
    with TakeStore(root) as store:
        good, _ = record_take(store, Sim(scene), ticks=5)
    takes = root / "takes"
    (takes / "empty.partial").mkdir()                                   # crash while creating a journal
    (takes / "lockonly.partial").mkdir()
    (takes / "lockonly.partial" / "owner.lock").write_text("")
    (takes / "headerless.partial").mkdir()                              # tick bytes, no way to decode them
    (takes / "headerless.partial" / "ticks.bin").write_bytes(b"TKRC" + b"\1" * 100)
    (takes / "badheader.partial").mkdir()
    (takes / "badheader.partial" / "header.json").write_bytes(b"\xff\xfe{not json")
    (takes / "ghost.h5.tmp").write_bytes(b"half a file")                # a finaliser killed mid-write
    store = TakeStore(root)
    report = store.open()
    try:
        assert sorted(p.name for p in report.cleaned) == ["empty.partial", "lockonly.partial"]
        kept = {q.path.name: q for q in report.quarantined}
        assert set(kept) == {"headerless.partial", "badheader.partial"}
        assert "journal could not be recovered" in kept["badheader.partial"].reason
        assert (store.quarantine_dir / "badheader.partial.reason.txt").read_text().startswith("file: ")
        assert sorted(p.name for p in takes.iterdir() if p.name != ".store.lock") == [good.name]
        assert [r.path for r in store.rows()] == [str(good)]
    finally:
        store.close()


def test_two_files_with_one_take_id_are_reported_not_swapped(tmp_path, scene):
    """Issue 13.9: the row swapped between the two files on every open."""
    root = tmp_path / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=5)
        take_id = store.add(path).meta.take_id
    copy = path.with_name("a-copy.h5")
    shutil.copyfile(path, copy)
    store = TakeStore(root)
    report = store.open()
    try:
        assert report.duplicates == [(take_id, path, [copy])]
        (moved,) = report.quarantined
        assert moved.path == copy and f"duplicate take id {take_id!r}" in moved.reason
        assert store.index.get(take_id).path == str(path)
    finally:
        store.close()
    for _ in range(2):
        with TakeStore(root) as store:
            assert store.index.get(take_id).path == str(path) and not store.open().duplicates


def test_a_stale_index_row_is_repaired_from_the_file_on_open(tmp_path, scene):
    """A kill between writing a take file and its index row leaves them disagreeing."""
    root = tmp_path / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=5)
        take_id = store.add(path).meta.take_id
    script = textwrap.dedent(f"""
        import os
        import recordings.faults as faults
        from recordings.store import TakeStore
        faults.checkpoint = lambda step: os._exit(70) if step == "review_written" else None
        store = TakeStore({str(root)!r}); store.open()
        store.set_review({take_id!r}, "accepted")
    """)
    assert subprocess.run([sys.executable, "-c", script], env=ENV, timeout=120).returncode == 70
    assert read_take(path).review.status == "accepted"
    with TakeStore(root) as store:
        assert store.index.get(take_id).status == "accepted"
        store.index.remove(take_id)                          # a row lost: found again from the file
    with TakeStore(root) as store:
        assert store.index.get(take_id).status == "accepted"
        path.unlink()                                        # a file removed behind the store's back
    with TakeStore(root) as store:
        assert store.index.get(take_id) is None


def test_record_carries_on_past_a_corrupt_file_and_names_it(tmp_path, scene, capsys):
    """Issue 13.4: `teleop record` crashed at start on one corrupt take file (h5py RuntimeError)."""
    from takes_util import damage_in_place
    from teleop.cli.main import main

    root = tmp_path / "store"
    with TakeStore(root) as store:
        path, _ = record_take(store, Sim(scene), ticks=5)
    damage_in_place(path)                                    # never indexed: found when the store opens
    code = main(["record", "--device", "synthetic", "--task", "pick_up_peach", "--store", str(root),
                 "--max-seconds", "0.4", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"quarantined {path}: unreadable take file (" in captured.err and "bad heap free list" in captured.err
    saved = json.loads(captured.out.strip().splitlines()[-1])["take"]
    with TakeStore(root) as store:
        assert [r.path for r in store.rows()] == [saved] and not path.exists()


def _open_index_at_once(path, barrier, errors):
    from recordings.index import TakeIndex
    barrier.wait()                              # every process opens the new file at the same moment
    try:
        TakeIndex(path).open().close()
    except Exception as exc:                    # noqa: BLE001 - the parent counts what went wrong
        errors.put(f"{type(exc).__name__}: {exc}")


# fork, not spawn: 60 fresh interpreters would take a minute; the children only open a SQLite file
# and exit, so the other threads' locks that fork copies are never touched.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_processes_opening_a_new_index_at_once_all_get_it(tmp_path):
    """``teleop tasks prove --workers N`` opens a fresh store in N processes at once: SQLite refuses
    the switch to WAL mode without waiting ("database is locked", 21 of 200 opens before the fix)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    errors, opens = ctx.Queue(), 0
    for attempt in range(15):
        path, barrier = tmp_path / f"index{attempt}.sqlite", ctx.Barrier(4)
        procs = [ctx.Process(target=_open_index_at_once, args=(path, barrier, errors)) for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        assert all(p.exitcode == 0 for p in procs)
        opens += len(procs)
    failures = []
    while not errors.empty():
        failures.append(errors.get())
    assert failures == [] and opens == 60
