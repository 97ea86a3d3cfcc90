"""``teleop stats [--store DIR] [--operator NAME] [--json]``: collection throughput per operator
and task (accepted per hour, acceptance rate, rejection reasons, time between takes, time to each
subtask latch, tracking-loss share; definitions in :mod:`recordings.analytics`)."""
from __future__ import annotations

import json
from pathlib import Path

from teleop.core.paths import default_store


def _fmt(value, unit: str = "") -> str:
    return "—" if value is None else f"{value}{unit}"


def _text(result: dict) -> str:
    by = f" by {result['operator']}" if result["operator"] else ""
    lines = [f"{result['store']}: {result['takes']} takes{by}"]
    for g in [result["overall"], *result["groups"]]:
        who = f"{g['operator']} / {g['task_id']}"
        lines.append(f"{who:<60} {g['accepted']}/{g['takes']} accepted ({_fmt(g['acceptance_rate'])}), "
                     f"{_fmt(g['accepted_per_hour'])}/h, between takes p50 {_fmt(g['between_takes_s']['p50'], ' s')}, "
                     f"tracking loss {_fmt(g['tracking_loss_share'])}")
        for reason, n in g["rejection_reasons"].items():
            lines.append(f"    rejected {n}x: {reason}")
        for name, latch in g["latch_s"].items():
            lines.append(f"    latch p50 {latch['p50']} s (n={latch['n']}): {name}")
    return "\n".join(lines)


def _stats(args) -> int:
    from recordings.analytics import store_throughput
    from recordings.store import TakeStore

    store = TakeStore(Path(args.store))
    store.open()
    try:
        result = store_throughput(store, args.operator)
    finally:
        store.close()
    print(json.dumps(result) if args.json else _text(result))
    return 0


def register(sub) -> None:
    p = sub.add_parser("stats", help="collection throughput per operator and task")
    p.add_argument("--store", default=str(default_store()), help="take store folder")
    p.add_argument("--operator", help="only this operator's takes")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(func=_stats)
