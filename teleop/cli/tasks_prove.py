"""``teleop tasks prove [ID ...] [--axis A] [--seeds N] [--first-episode K] [--workers N | --ray ADDRESS]
[--store DIR] [--write-record] [--json]``: measure which tasks the synthetic operator completes.

Exit code 0 when every selected task is proven, 1 when some are not, 2 for bad arguments.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT_SEEDS = 5            # episodes per task: enough for the 60 % rule to mean 3 of 5


def _table(report) -> str:
    lines = [f"{'task':<52} {'axis':<24} {'done':>5} {'valid':>5} {'prog':>6}  first failing"]
    for t in report.tasks:
        mark = "proven" if t.proven else (t.reason or t.first_failing_subtask or "")
        lines.append(f"{t.id:<52} {t.axis:<24} {t.completed:>2}/{t.episodes:<2} {t.validated:>5} "
                     f"{t.mean_progress:>6.1f}  {mark}")
    lines.append(f"{len(report.proven_ids)} of {len(report.tasks)} tasks proven ({report.wall_s:.0f} s)")
    return "\n".join(lines)


def _prove(args) -> int:
    from recordings.provenance import source_revision
    from teleop.control.prove import prove, select_tasks
    from teleop.tasks.proven import PROVEN_FILE, write_record

    specs = select_tasks(args.ids, args.axis)
    revision = source_revision()          # of the code that runs, before anything is edited meanwhile
    report = prove(specs, args.seeds, args.first_episode, workers=args.workers, ray_address=args.ray,
                   store=Path(args.store) if args.store else None, progress=sys.stderr.isatty())
    if args.write_record:
        path = write_record(report.record_entries(revision), Path(args.record or PROVEN_FILE))
        print(f"record written: {path}", file=sys.stderr)
    print(json.dumps(report.to_json()) if args.json else _table(report))
    return 0 if len(report.proven_ids) == len(report.tasks) else 1


def add_parser(tsub) -> None:
    p = tsub.add_parser("prove", help="drive tasks with the synthetic operator, record and re-validate each "
                                      "episode; exit 1 unless every task is proven")
    p.add_argument("ids", nargs="*", metavar="ID", help="task ids (default: every shipped task)")
    p.add_argument("--axis", help="only tasks of this capability axis")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help=f"episodes per task (default {DEFAULT_SEEDS})")
    p.add_argument("--first-episode", type=int, default=0, help="first episode index (placement seed); default 0")
    p.add_argument("--workers", type=int, default=1, help="worker processes (with --ray local: its CPUs); the "
                                                         "results do not depend on it")
    p.add_argument("--ray", metavar="ADDRESS", help="run episodes as Ray tasks ('local', 'auto' or host:port); "
                                                    "--store must then be a folder every node sees")
    p.add_argument("--store", help="keep the takes in this store (default: a temporary one)")
    p.add_argument("--write-record", action="store_true", help="merge the result into the committed record "
                                                               "(teleop/tasks/proven.json)")
    p.add_argument("--record", help="record file to write instead of the committed one (with --write-record)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_prove)
