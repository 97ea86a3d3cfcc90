"""``teleop validate``: replay accepted takes from their initial state and re-check the goal."""
from __future__ import annotations

import json
import sys

from teleop.core.paths import default_store


def _run(args) -> int:
    from recordings.store import TakeStore
    from recordings.validate_batch import validate_store

    statuses = ("accepted", "validated_pass", "validated_fail") if args.all else ("accepted",)
    with TakeStore(args.store) as store:
        summary = validate_store(store, args.takes, statuses, args.workers, args.ray,
                                 progress=not args.json and sys.stderr.isatty())
    if args.json:
        print(json.dumps(summary.to_json()))
        return 0
    print(f"validated {summary.takes} take(s) in {summary.seconds:.1f} s ({summary.backend}): "
          f"{summary.passed} passed, {summary.failed} failed")
    for r in summary.reports:
        mark = "PASS" if r["passed"] else "FAIL"
        print(f"  {mark} {r['take_id']}: {r['reason']} (max joint error {r['max_joint_error']:.2e} rad)")
    return 0


def register(sub) -> None:
    p = sub.add_parser("validate", help="re-validate accepted takes by replaying them from their initial state")
    p.add_argument("--store", default=str(default_store()), help="take store folder")
    p.add_argument("--takes", nargs="+", metavar="TAKE_ID", help="only these takes (default: every accepted take)")
    p.add_argument("--all", action="store_true", help="also re-validate takes already validated")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--ray", metavar="ADDRESS", help="run as Ray tasks: 'auto', 'ray://host:10001' or 'local'")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)
