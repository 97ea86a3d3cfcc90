"""``teleop demo --out DIR``: record, accept, validate and export with the synthetic operator."""
from __future__ import annotations

import json
import sys
from pathlib import Path


def _run(args) -> int:
    from teleop.control.demo import run_demo

    def on_take(task, episode, result):
        if not args.json:
            print(f"  {task} #{episode}: strict success {result.strict_success}, progress {result.progress:.0f}",
                  flush=True)

    summary = run_demo(Path(args.out), args.tasks, args.episodes, args.workers,
                       progress=not args.json and sys.stderr.isatty(), on_take=on_take)
    if args.json:
        print(json.dumps(summary.to_json()))
    else:
        print(f"takes {summary.takes}, accepted {summary.accepted}, validated {summary.validated_pass} "
              f"(pass rate {summary.pass_rate:.0%}), exported {summary.exported_episodes} episodes / "
              f"{summary.frames} frames ({summary.duration_s:.0f} s recorded)")
        print(f"dataset: {summary.dataset_root}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("demo", help="end to end: synthetic takes -> accept -> validate -> LeRobot dataset")
    p.add_argument("--out", required=True, help="folder for the take store and the dataset")
    p.add_argument("--tasks", nargs="+", help="task ids (default: the proven tasks of teleop/tasks/proven.json)")
    p.add_argument("--episodes", type=int, default=2, help="episodes per task (default 2)")
    p.add_argument("--workers", type=int, default=1, help="processes for validation and export")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)
