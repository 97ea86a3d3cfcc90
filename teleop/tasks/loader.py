"""Load and check task spec files (``teleop tasks check``)."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from teleop.core.errors import ConfigError, choices
from teleop.core.yamlio import load_yaml
from teleop.tasks.args import SpecError, check_args
from teleop.tasks.cues import CUE_KINDS, CueSpec, parse_cue
from teleop.tasks.spec import (AXES, SPEC_DIR, EventSpec, Segment, SubtaskSpec, TaskSpec, _flag, _names,
                               _parse_object, _req, automatic_events, namespace, parse_predicate)

TOP_KEYS = ("id", "axis", "instruction", "ordered", "objects", "subtasks", "language_schedule", "max_steps",
            "distractors", "events", "notes", "demos", "cue")
CUE_AXIS = "memory"          # the axis whose tasks must declare their cue (their information gap is measured)
SUBTASK_KEYS = ("name", "weight", "must_hold", "latch_violation", "predicates", "after")


def _events(raw: Any, ns_objects) -> list[EventSpec]:
    from teleop.tasks.events import EVENTS
    raw = [] if raw is None else raw
    if not isinstance(raw, list):
        raise SpecError("events", "must be a list")
    out = []
    names = [e.name for e in automatic_events(ns_objects)]          # e.g. every button's press counter
    for i, ev in enumerate(raw):
        where = f"events[{i}]"
        got = ev.get("type") if isinstance(ev, dict) else ev
        if not isinstance(got, str) or got not in EVENTS:
            raise SpecError(f"{where}.type", f"unknown event {got!r}; valid choices: {choices(sorted(EVENTS))}")
        name = ev.get("name", f"event{i}")
        if not isinstance(name, str) or name in names:
            raise SpecError(f"{where}.name", f"must be a new event name, got {name!r}; taken: {choices(names)}")
        ns = namespace(ns_objects, names)
        out.append(EventSpec(ev["type"], name, check_args(where, EVENTS[ev["type"]].args, ev, ns,
                                                           ignore=("type", "name"))))
        names.append(name)
    return out


def _subtask(i: int, raw: Any, ns, earlier: list[str], ordered: bool) -> SubtaskSpec:
    where = f"subtasks[{i}]"
    if not isinstance(raw, dict):
        raise SpecError(where, "must be a mapping")
    extra = sorted(set(raw) - set(SUBTASK_KEYS), key=str)
    if extra:
        raise SpecError(f"{where}.{extra[0]}", f"unknown field; valid choices: {choices(SUBTASK_KEYS)}")
    name = _req(raw, "name", str, f"{where}.")
    weight = _req(raw, "weight", int, f"{where}.")
    if weight < 0:
        raise SpecError(f"{where}.weight", "must be >= 0")
    preds = raw.get("predicates")
    if not isinstance(preds, list) or not preds:
        raise SpecError(f"{where}.predicates", "must be a non-empty list of predicates")
    after_raw = _names(raw, "after", f"{where}.") if "after" in raw else earlier[-1:] if ordered else []
    after = []
    for a in after_raw:
        if a not in earlier:
            raise SpecError(f"{where}.after", f"unknown prerequisite {a!r}; valid choices: {choices(earlier)}")
        after.append(earlier.index(a))
    return SubtaskSpec(name, weight, _flag(raw, "must_hold", f"{where}."), _flag(raw, "latch_violation", f"{where}."),
                       tuple(parse_predicate(f"{where}.predicates[{j}]", p, ns) for j, p in enumerate(preds)),
                       tuple(after))


def _schedule(raw: Any) -> tuple[Segment, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise SpecError("language_schedule", "must be a non-empty list of {text, until_step}")
    segs = []
    for i, s in enumerate(raw):
        last = i == len(raw) - 1
        if not isinstance(s, dict):
            raise SpecError(f"language_schedule[{i}]", f"must be a mapping {{text, until_step}}, got {s!r}")
        text = _req(s, "text", str, f"language_schedule[{i}].")
        until = s.get("until_step")
        if not last and not isinstance(until, int):
            raise SpecError(f"language_schedule[{i}].until_step", "every non-final segment needs an integer until_step")
        segs.append(Segment(text, until if not last else None))
    return tuple(segs)


def parse_spec(raw: Any, path: str = "<spec>") -> TaskSpec:
    """Build a checked :class:`TaskSpec` from parsed YAML; errors carry ``path``."""
    try:
        return _parse(raw, path)
    except SpecError as exc:
        raise exc.at(path) from None


def _parse(raw: Any, path: str) -> TaskSpec:
    if not isinstance(raw, dict):
        raise SpecError("<top>", "a task spec must be a YAML mapping")
    extra = sorted(set(raw) - set(TOP_KEYS), key=str)
    if extra:
        raise SpecError(extra[0], f"unknown field; valid choices: {choices(TOP_KEYS)}")
    axis = _req(raw, "axis", str, "")
    if axis not in AXES:
        raise SpecError("axis", f"unknown axis {axis!r}; valid choices: {choices(AXES)}")
    objs_raw = _req(raw, "objects", list, "")
    objects, names = [], []
    for i, o in enumerate(objs_raw):
        obj = _parse_object(i, o, names, tuple(x.name for x in objects if x.fixed))
        if obj.name in names:
            raise SpecError(f"objects[{i}].name", f"duplicate object name {obj.name!r}")
        objects.append(obj)
        names.append(obj.name)
    objects = tuple(objects)
    for i, o in enumerate(objects):
        if o.covers is not None and (o.covers not in names or o.covers == o.name):
            raise SpecError(f"objects[{i}].covers", f"unknown object {o.covers!r}; valid choices: "
                            f"{choices([n for n in names if n != o.name])}")
    events = _events(raw.get("events"), objects)
    ns = namespace(objects, [e.name for e in (*automatic_events(objects), *events)])
    ordered = _flag(raw, "ordered", "")
    subs, earlier = [], []
    for i, s in enumerate(_req(raw, "subtasks", list, "")):
        subs.append(_subtask(i, s, ns, earlier, ordered))
        earlier.append(subs[-1].name)
    total = sum(s.weight for s in subs)
    if total != 100:
        raise SpecError("subtasks[*].weight", f"weights must sum to 100, they sum to {total}")
    distractors = tuple(_names(raw, "distractors", ""))
    for d in distractors:
        if d not in names:
            raise SpecError("distractors", f"unknown object {d!r}; valid choices: {choices(names)}")
    max_steps = raw.get("max_steps")
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps <= 0):
        raise SpecError("max_steps", f"must be a positive integer, got {max_steps!r}")
    demos = raw.get("demos", 100)
    if not isinstance(demos, int) or isinstance(demos, bool) or demos <= 0:
        raise SpecError("demos", f"must be a positive integer (takes to collect), got {demos!r}")
    return TaskSpec(_req(raw, "id", str, ""), axis, _req(raw, "instruction", str, ""), ordered, objects,
                    tuple(subs), _schedule(raw.get("language_schedule")), max_steps, distractors, tuple(events), path,
                    demos=demos, cue=_cue(raw, axis, ns, (*automatic_events(objects), *events)))


def _cue(raw: dict, axis: str, ns, events) -> CueSpec | None:
    """The spec's cue; a memory task must declare one (its information gap is measured per take)."""
    if "cue" not in raw:
        if axis == CUE_AXIS:
            raise SpecError("cue", f"a {CUE_AXIS} task must declare the cue its decision depends on "
                            f"({{kind, what, ...}}); valid kinds: {choices(sorted(CUE_KINDS))}")
        return None
    return parse_cue(raw["cue"], ns, {e.name: e for e in events})


def load_spec(path: str | Path) -> TaskSpec:
    path = Path(path)
    spec = parse_spec(load_yaml(path, "task spec"), str(path))
    if path.stem != spec.id:
        raise SpecError("id", f"id {spec.id!r} must match the file name {path.stem!r}", str(path))
    return spec


def spec_paths() -> list[Path]:
    return sorted(SPEC_DIR.glob("*.yaml"))


@cache
def all_specs() -> tuple[TaskSpec, ...]:
    """Every shipped task spec, sorted by id."""
    return tuple(load_spec(p) for p in spec_paths())


def get_spec(task_id: str) -> TaskSpec:
    path = SPEC_DIR / f"{task_id}.yaml"
    if not path.exists():
        raise ConfigError(f"unknown task {task_id!r}; valid choices: {choices([p.stem for p in spec_paths()])}")
    return load_spec(path)
