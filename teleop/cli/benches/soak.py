"""Store soak: recordings killed with -9, concurrent validate/export processes, hostile files.

``--recordings`` real sessions (synthetic operator, paced at 25 Hz, each in its own process)
record one after another into one store; a seeded random share is ``kill -9``-ed mid-take. While
each records, a ``teleop validate`` runs against the same store (some killed), during the middle
take a ``teleop export`` too (killed at a random moment unless already done), and a hostile file is dropped
into the takes folder (garbage, truncated, corrupt heap, duplicate id, or a tampered take marked
accepted). Finished takes are accepted by this process, concurrently. At the end a clean
``teleop validate`` runs, every killed export is re-run to resume, and a fresh export is made;
then the audit:

``takes_lost`` (a started take with no file), ``takes_corrupted`` (unreadable, quarantined, or a
finished take changed / re-marked interrupted), ``bad_takes_exported`` (an episode in any dataset
whose take is not a genuine validated pass), ``max_seconds_lost`` (ticks a killed recording had
appended but its recovered take lacks, in seconds). Goals: 0, 0, 0, <= 1.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

NAME = "soak"
HZ = 25.0


def add_arguments(parser) -> None:
    parser.add_argument("--recordings", type=int, default=6, help="recordings to run (default 6)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")
    parser.add_argument("--task", default="pick_up_peach", help="task the synthetic operator records")
    parser.add_argument("--kill-fraction", type=float, default=0.5, help="share of recordings killed (0.5)")
    parser.add_argument("--keep", help="keep the store and datasets in this folder (default: a temp folder)")


def _env() -> dict:
    root = str(Path(__file__).resolve().parents[3])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p),
            "PYTHONUNBUFFERED": "1"}


class Child:
    """A child process with its stdout collected line by line on a thread."""

    def __init__(self, kind: str, argv: list[str], kill_at: float | None = None, out: Path | None = None):
        self.kind, self.kill_at, self.killed, self.out = kind, kill_at, False, out
        self.proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=_env(), start_new_session=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=lambda: self.lines.extend(self.proc.stdout), daemon=True)
        self._reader.start()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def poll_kill(self, now: float) -> None:
        if self.kill_at is not None and now >= self.kill_at and self.alive():
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.killed = True

    def wait(self, timeout: float = 300) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            code = self.proc.wait()
        self._reader.join(10)
        return code


def _record_child(store: str, task: str, episode: int) -> None:
    """Runs in the recorder process: one paced synthetic episode, printing its progress."""
    from recordings.store import TakeStore
    from teleop.control.episode import Episode, EpisodeOptions

    ep = Episode(EpisodeOptions(task=task, device="synthetic", episode_index=episode, realtime=True))
    with TakeStore(Path(store)) as takes:
        def on_connect(_device):
            print("START", ep.session.recorder.take_id, flush=True)

        def on_tick(_report):
            rec = ep.session.recorder
            if rec is not None:
                print("T", rec.writer.ticks, flush=True)
        _, take = ep.run(takes, operator="soak", on_tick=on_tick, on_connect=on_connect)
        print("DONE", take.path, take.length, flush=True)


def _parse(child: Child) -> dict:
    rec: dict = {"killed": child.killed}
    for line in list(child.lines):
        if not line.endswith("\n"):
            continue                         # the last line of a killed process may be torn
        word, _, rest = line.strip().partition(" ")
        if word == "START":
            rec["take_id"] = rest
        elif word == "T":
            rec["ticks"] = int(rest)
        elif word == "DONE":
            path, length = rest.rsplit(" ", 1)
            rec["finished"], rec["path"], rec["length"] = True, path, int(length)
    return rec


def _export_argv(store: Path, out: Path) -> list[str]:
    return ["-m", "teleop", "export", "--store", str(store), "--out", str(out), "--width", "64", "--height", "48",
            "--json"]


def run(args) -> dict:
    from recordings.errors import TakeError
    from recordings.quarantine import quarantined
    from recordings.store import TakeStore
    from teleop.cli.soak_files import KINDS, audit_recordings, digest_of, drop, exported_take_ids
    from teleop.core.seeding import stable_rng

    rng = stable_rng("soak", args.seed)
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="soak-"))
    store_root = work / "store"
    t0 = time.monotonic()
    counts = {"validate_runs": 0, "validate_killed": 0, "export_runs": 0, "export_killed": 0,
              "files_dropped": 0, "tampered_dropped": 0}
    recordings, outs, killed_outs, hostile, tampered = [], [], [], [], []
    # every kind once per five recordings, in a seeded order after one that needs no source take
    kinds = ["garbage", *(str(k) for k in rng.permutation([k for k in KINDS if k != "garbage"]))]
    store = TakeStore(store_root)
    store.open()
    background: list[Child] = []
    try:
        for i in range(args.recordings):
            recorder = Child("record", ["-m", "teleop.cli.benches.soak", "record", str(store_root), args.task, str(i)])
            deadline = time.monotonic() + 120
            while not any(line.startswith("START") for line in recorder.lines) and recorder.alive() \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            start = time.monotonic()
            if rng.random() < args.kill_fraction:
                recorder.kill_at = start + rng.uniform(0.3, 7.0)
            events = {"validate": start + rng.uniform(0.2, 2.0), "drop": start + rng.uniform(0.0, 5.0)}
            if i == args.recordings // 2:        # once earlier takes are validated: worth exporting
                events["export"] = start + rng.uniform(0.5, 2.0)
            while recorder.alive() or events:
                now = time.monotonic()
                recorder.poll_kill(now)
                for name, when in list(events.items()):
                    if now < when:
                        continue
                    del events[name]
                    # a validate run takes a few seconds, an export tens: kill within that span, 40 % of
                    # validate runs and the export (unless it is done by then: a re-run must resume it)
                    span = {"validate": (0.5, 4.0), "export": (3.0, 15.0)}.get(name, (0.0, 0.0))
                    doomed = name == "export" or (name == "validate" and rng.random() < 0.4)
                    kill_at = now + rng.uniform(*span) if doomed else None
                    if name == "validate":
                        background.append(Child("validate", ["-m", "teleop", "validate", "--store", str(store_root),
                                                             "--json"], kill_at))
                        counts["validate_runs"] += 1
                    elif name == "export":
                        out = work / f"dataset-{i}"
                        outs.append(out)
                        background.append(Child("export", _export_argv(store_root, out), kill_at, out))
                        counts["export_runs"] += 1
                    else:
                        kind = kinds[counts["files_dropped"] % len(kinds)]
                        sources = [p for p in (store.takes_dir / f"{r['take_id']}.h5" for r in recordings
                                               if r.get("take_id")) if p.exists()]
                        source = sources[int(rng.integers(len(sources)))] if sources else None
                        path, take_id = drop(kind, store.takes_dir, source, rng, counts["files_dropped"])
                        counts["files_dropped"] += 1
                        if kind == "tampered" and take_id:
                            tampered.append(take_id)
                        else:
                            hostile.append(path.name)
                        counts["tampered_dropped"] += kind == "tampered" and bool(take_id)
                for child in background:
                    child.poll_kill(now)
                if not recorder.alive() and events:      # nothing left to overlap with: run the rest now
                    events = {k: now for k in events}
                time.sleep(0.05)
            recorder.wait()
            rec = _parse(recorder)
            if rec.get("finished"):
                rec["digest"] = digest_of(Path(rec["path"]))
                try:
                    store.accept(rec["take_id"])         # this process writes too, concurrently
                except TakeError as exc:                 # counted by the audit if the take is gone
                    rec["accept_error"] = str(exc)
            recordings.append(rec)
        for child in background:
            child.wait()
            counts[f"{child.kind}_killed"] += child.killed
            if child.kind == "export" and child.killed:
                killed_outs.append(child.out)
        final_validate = Child("validate", ["-m", "teleop", "validate", "--store", str(store_root), "--json"])
        final_validate.wait()
        final_out = work / "dataset-final"
        closing = [Child("export", _export_argv(store_root, out)) for out in (*killed_outs, final_out)]
        resumed = [child.wait() for child in closing][:-1]     # resumes and a fresh export, side by side
        outs.append(final_out)
        store.close()
        store = TakeStore(store_root)
        store.open()
        figures = audit_recordings(store, recordings, HZ)
        genuine_pass = {r.take_id for r in store.rows() if r.take_id not in tampered and
                        (r.report or {}).get("passed") is True}
        exported = [tid for out in outs for tid in exported_take_ids(out)]
        final_ids = exported_take_ids(final_out)
        figures.update({
            "bad_takes_exported": sum(tid not in genuine_pass for tid in exported),
            "recordings": len(recordings), "killed_recordings": sum(r["killed"] for r in recordings),
            "finished_recordings": sum(bool(r.get("finished")) for r in recordings), **counts,
            "exports_resumed_ok": sum(code == 0 for code in resumed), "exports_resumed": len(resumed),
            "quarantined_files": len(list(store.quarantine_dir.glob("*.reason.txt"))),
            "quarantined_duplicates": sum("duplicate take id" in why for _, why in quarantined(store.quarantine_dir)),
            "hostile_left_in_store": sum((store.takes_dir / name).exists() for name in hostile),
            "tampered_failed_validation": sum(getattr(store.index.get(t), "status", "") == "validated_fail"
                                              for t in tampered),
            "tampered_exported": sum(tid in tampered for tid in exported),
            "validated_pass": len(genuine_pass), "final_export_episodes": len(final_ids),
            "final_export_complete": sorted(final_ids) == sorted(genuine_pass),
            "seconds": round(time.monotonic() - t0, 1), "load_average_1min": round(os.getloadavg()[0], 2),
            "seed": args.seed, "task": args.task,
        })
        return figures
    finally:
        for child in background:
            if child.alive():
                os.killpg(child.proc.pid, signal.SIGKILL)
        store.close()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":           # the recorder child: python -m teleop.cli.benches.soak record STORE TASK EPISODE
    if sys.argv[1:2] == ["record"]:
        _record_child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
