"""``teleop validate``: replay accepted takes from their initial state and re-check the goal.

Exit status: 0 when every take asked for got a verdict (PASS or FAIL: a FAIL is a result, kept in
the store); 1 when some could not be validated (an unreadable file, quarantined and named; a crashed
worker; an unknown take id); 2 for a usage error.
"""
from __future__ import annotations

import json
import sys

from teleop.core.paths import default_store


def _asked_for(q, statuses, take_ids) -> bool:
    """A file quarantined while opening the store was one of the takes asked for (a take never
    indexed may have been anything, so it counts too)."""
    if take_ids:
        return q.take_id in take_ids
    return q.status is None or q.status in statuses


def _run(args) -> int:
    from recordings.store import TakeStore
    from recordings.validate_batch import validate_store

    statuses = ("accepted", "validated_pass", "validated_fail") if args.all else ("accepted",)
    with TakeStore(args.store) as store:
        opened = store.open_report
        summary = validate_store(store, args.takes, statuses, args.workers, args.ray,
                                 progress=not args.json and sys.stderr.isatty())
    missed = [q for q in opened.quarantined if _asked_for(q, statuses, args.takes)]
    code = 0 if summary.ok and not missed else 1
    if args.json:
        out = summary.to_json()
        out["quarantined_on_open"] = [{"path": str(q.path), "reason": q.reason, "moved_to": str(q.moved_to)}
                                      for q in opened.quarantined]
        out["ok"] = code == 0
        print(json.dumps(out))
        return code
    print(f"validated {summary.passed + summary.failed} take(s) in {summary.seconds:.1f} s ({summary.backend}): "
          f"{summary.passed} passed, {summary.failed} failed"
          + (f", {len(summary.errors)} not validated" if summary.errors else ""))
    for r in summary.reports:
        mark = "PASS" if r["passed"] else "FAIL"
        errors = f" (max joint error {r['max_joint_error']:.2e} rad)" if r["ticks"] else ""
        print(f"  {mark} {r['take_id']}: {r['reason']}{errors}")
    for e in summary.errors:
        where = f"; moved to {e['moved_to']}" if e["moved_to"] else ""
        print(f"  NOT VALIDATED {e['path'] or e['take_id']}: {e['reason']}{where}")
    if opened.quarantined:
        print(f"quarantined {len(opened.quarantined)} file(s) the store could not use:")
        for q in opened.quarantined:
            print(f"  {q.line()}")
    for path in opened.recovered:
        print(f"recovered interrupted take {path.name}")
    return code


def register(sub) -> None:
    p = sub.add_parser("validate", help="re-validate accepted takes by replaying them from their initial state")
    p.add_argument("--store", default=str(default_store()), help="take store folder")
    p.add_argument("--takes", nargs="+", metavar="TAKE_ID", help="only these takes (default: every accepted take)")
    p.add_argument("--all", action="store_true", help="also re-validate takes already validated")
    p.add_argument("--workers", type=int, default=1, help="local worker processes (default 1)")
    p.add_argument("--ray", metavar="ADDRESS", help="run as Ray tasks: 'auto', 'ray://host:10001' or 'local'")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_run)
