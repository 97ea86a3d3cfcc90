"""Grasp robustness: every hand-holdable library object grasped, lifted 15 cm, shaken at 1 g and carried.

Driven by the synthetic operator through the real loop (operator frames -> engage -> retarget ->
physics). Per object: the share of trials still held after the carry, the slip in the hand (mm)
and the lateral palm acceleration reached; overall: the hold rate over every trial. Each object is
taken with the planner's size-based default grasp (``--grasps default``), or the way the first
proven script that grasps it takes it (``--grasps operator``: a mango steeply, a whisk by its
balloon, a can by its side; the default for objects no proven script grasps).
"""
from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass

from recordings.batch import run_batch
from teleop.control.grasp_objects import GraspObject, holdable, holdable_objects, library
from teleop.control.grasp_trial import LIFT_M, SHAKE_G, STROKE_M, run_trials

NAME = "grasp"
DEFAULT_TRIALS = 2           # placement seeds per object: ~4 s each on one core
GRASP_SOURCES = ("default", "operator")


@dataclass(frozen=True)
class ObjectItem:
    obj: GraspObject
    trials: int


def add_arguments(parser) -> None:
    parser.add_argument("--objects", nargs="+", metavar="NAME", help="only these library objects (default: every "
                                                                     "holdable one)")
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS, help=f"trials per object (default "
                                                                           f"{DEFAULT_TRIALS})")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--grasps", choices=GRASP_SOURCES, default="default",
                        help="default: the planner's size-based grasp for every object; operator: each "
                             "object as a proven script grasps it (the default where none does)")


def _object(item: ObjectItem) -> dict:
    trials = run_trials(item.obj, item.trials, grasp_args=item.obj.grasp_args)
    held = [t for t in trials if t.held]
    slips = [t.slip_mm for t in held if t.slip_mm is not None]
    o = item.obj
    return {"object": o.name, "kind": o.kind, "task": o.task, "grasp": o.grasp, "grasp_from": o.grasp_from,
            "size_mm": [round(v * 1e3) for v in o.extent], "mass_kg": round(o.mass, 3), "trials": len(trials),
            "lifted": round(sum(t.lifted for t in trials) / len(trials), 3),
            "held_after_shake": round(sum(t.shaken for t in trials) / len(trials), 3),
            "held": round(len(held) / len(trials), 3),
            "slip_mm": round(sum(slips) / len(slips), 1) if slips else None,
            "slip_mm_max": max(slips) if slips else None,
            "shake_peak_g": round(sum(t.shake_peak_g for t in trials) / len(trials), 2)}


def run(args) -> dict:
    from teleop.core.errors import ConfigError

    if args.trials < 1:
        raise ConfigError(f"--trials must be at least 1 (got {args.trials})")
    start = time.perf_counter()
    operator = args.grasps == "operator"
    objects = holdable_objects(args.objects, operator)
    results = run_batch(_object, [ObjectItem(o, args.trials) for o in objects], workers=args.workers,
                        progress=False, desc="grasp")
    failed = [{"object": o.name, "error": r.error} for o, r in zip(objects, results) if not r.ok]
    rows = [r.value for r in results if r.ok]
    total = sum(r["trials"] for r in rows)
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    kinds = {k: round(sum(r["held"] * r["trials"] for r in v) / sum(r["trials"] for r in v), 3)
             for k, v in sorted(by_kind.items())}
    skipped = [o.name for o in library(operator) if not holdable(o)] if not args.objects else []
    held = sum(r["held"] * r["trials"] for r in rows)
    return {"objects": rows, "hold_rate": round(held / total, 3) if total else 0.0,
            "hold_rate_by_kind": kinds, "trials": total, "lift_m": LIFT_M, "stroke_m": STROKE_M,
            "shake_planned_g": SHAKE_G, "grasps": args.grasps,
            "not_holdable": skipped, "failed": failed, "wall_s": round(time.perf_counter() - start, 1)}
