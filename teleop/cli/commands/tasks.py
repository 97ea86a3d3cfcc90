"""``teleop tasks list [--json] | show ID [--json] | check [PATH...] [--build]``: the task catalog."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from teleop.cli.tasks_prove import add_parser as add_prove_parser
from teleop.core.errors import TeleopError
from teleop.tasks.loader import all_specs, get_spec, load_spec, spec_paths
from teleop.tasks.proven import PROVEN_FILE, load_record, proven_ids
from teleop.tasks.scorer import horizon_steps
from teleop.tasks.spec import TaskSpec


def task_summary(spec: TaskSpec, proven: bool = False, gap: tuple[float | None, str | None] = (None, None)) -> dict:
    """The ``tasks list --json`` record of one task (keys fixed by issue 3; ``proven`` from issue 16:
    the committed record of ``teleop tasks prove``; ``cue`` and the information gap's median, with
    where it was measured, from issue 17)."""
    sched = None if spec.language_schedule is None else [
        {"text": s.text, "until_step": s.until_step} for s in spec.language_schedule]
    return {"id": spec.id, "axis": spec.axis, "K": len(spec.subtasks), "ordered": spec.ordered,
            "instruction": spec.instruction, "language_schedule": sched,
            "subtasks": [{"name": s.name, "weight": s.weight, "must_hold": s.must_hold,
                          "latch_violation": s.latch_violation} for s in spec.subtasks],
            "proven": proven, "cue": None if spec.cue is None else {"kind": spec.cue.kind, "what": spec.cue.what},
            "information_gap_median": gap[0], "information_gap_source": gap[1]}


def information_gaps(specs, record_path: Path, store: str | None) -> dict[str, tuple[float | None, str | None]]:
    """Per task with a cue: (median information gap in ticks, "proven" | "store" | None): the proven
    record's median over its validated episodes, else the median over ``store``'s takes, else none."""
    from recordings.cue_gap import store_gap_medians      # reads takes only when asked to

    record = load_record(record_path)
    out = {s.id: (record[s.id].information_gap_median, "proven") for s in specs
           if s.cue is not None and s.id in record and record[s.id].information_gap_median is not None}
    missing = [s.id for s in specs if s.cue is not None and s.id not in out]
    if store is not None and missing:
        medians = store_gap_medians(Path(store), missing)
        out.update({t: (m, "store") for t, m in medians.items() if m is not None})
    return out


def task_detail(spec: TaskSpec) -> dict:
    out = task_summary(spec, spec.id in proven_ids())
    out["horizon_steps"] = horizon_steps(spec)
    out["max_steps"] = spec.max_steps
    out["distractors"] = list(spec.distractors)
    out["objects"] = [{"name": o.name, "kind": o.kind, "fixed": o.fixed, "parked": o.parked, "colour": o.colour,
                       "spawn": {"center": o.spawn.center, "extent": o.spawn.extent, "yaw": o.spawn.yaw,
                                 "rest_on": o.spawn.on}, "params": o.params} for o in spec.objects]
    out["events"] = [{"type": e.type, "name": e.name, **e.args} for e in spec.events]
    for rec, sub in zip(out["subtasks"], spec.subtasks):
        rec["after"] = [spec.subtasks[i].name for i in sub.after]
        rec["predicates"] = [_pred(p) for p in sub.predicates]
    return out


def _pred(p) -> dict:
    from teleop.tasks.spec import PredicateSpec
    return {"type": p.type, **{k: _pred(v) if isinstance(v, PredicateSpec) else v for k, v in p.args.items()}}


def _list(args) -> int:
    specs = all_specs()
    record = Path(args.record) if args.record else PROVEN_FILE
    proven = set(proven_ids(record))
    if args.json:
        gaps = information_gaps(specs, record, args.store)
        print(json.dumps([task_summary(s, s.id in proven, gaps.get(s.id, (None, None))) for s in specs]))
        return 0
    for s in specs:
        print(f"{s.id:<52} {s.axis:<24} K={len(s.subtasks)}{' ordered' if s.ordered else ''}"
              f"{' proven' if s.id in proven else ''}")
    print(f"{len(specs)} tasks")
    return 0


def _show(args) -> int:
    detail = task_detail(get_spec(args.id))
    if args.json:
        print(json.dumps(detail, default=list))
        return 0
    print(f"{detail['id']} ({detail['axis']}, K={detail['K']}, horizon {detail['horizon_steps']} steps)")
    print(f"  instruction: {detail['instruction']}")
    for seg in detail["language_schedule"] or []:
        print(f"  segment until {seg['until_step']}: {seg['text']}")
    for o in detail["objects"]:
        print(f"  object {o['name']}: {o['kind']}{' fixed' if o['fixed'] else ''}")
    for i, s in enumerate(detail["subtasks"]):
        flags = "".join([" MH" if s["must_hold"] else "", " LV" if s["latch_violation"] else ""])
        print(f"  [{i}] w={s['weight']:>3}{flags} {s['name']}")
        for p in s["predicates"]:
            print(f"        {p}")
    return 0


def _check_paths(args) -> list[str]:
    """The files to check: the shipped specs, or the given files and every spec in given folders."""
    if not args.paths:
        return [str(p) for p in spec_paths()]
    out = []
    for p in map(Path, args.paths):
        out += [str(f) for f in sorted(p.glob("*.yaml"))] if p.is_dir() else [str(p)]
    return out


def _check_one(path: str, build: bool) -> str | None:
    """None if the spec is good (and, with ``build``, compiles, places and scores tick 0), else why not."""
    try:
        spec = load_spec(path)
        if build:
            from teleop.tasks.runtime import TaskRuntime
            TaskRuntime(spec).reset(0, 0)
    except TeleopError as exc:                 # names the file, the field and the valid choices
        return str(exc)
    except Exception as exc:                   # a checker bug must not stop the files after this one
        return f"{path}: internal error, please report it: {type(exc).__name__}: {exc}"
    return None


def _check(args) -> int:
    paths = _check_paths(args)
    failed = 0
    for path in paths:
        problem = _check_one(path, args.build)
        if problem is not None:
            failed += 1
            print(f"FAIL {problem}", file=sys.stderr)
            continue
        print(f"ok   {path}")
    print(f"{len(paths) - failed} ok, {failed} failed")
    return 1 if failed else 0


def register(sub) -> None:
    parser = sub.add_parser("tasks", help="list, inspect and check task specs")
    tsub = parser.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)
    p = tsub.add_parser("list", help="every shipped task")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--record", help="proven-task record to read (default: the committed teleop/tasks/proven.json)")
    p.add_argument("--store", help="take store whose takes give a memory task's information gap where the "
                                   "record has none")
    p.set_defaults(func=_list)
    p = tsub.add_parser("show", help="one task's objects, subtasks and predicates")
    p.add_argument("id")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=_show)
    p = tsub.add_parser("check", help="validate spec files (default: every shipped spec); non-zero exit on errors")
    p.add_argument("paths", nargs="*", metavar="PATH", help="spec files, or folders of them")
    p.add_argument("--build", action="store_true", help="also compile each scene and place its objects")
    p.set_defaults(func=_check)
    add_prove_parser(tsub)
