"""Task specs: YAML files loaded into frozen dataclasses and checked on load.

See ``docs/tasks.md`` for the file format. Every error is a :class:`SpecError` naming the file,
the field (dotted path) and the valid choices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from teleop.core.errors import choices
from teleop.tasks.args import NameSpace, SpecError, check_args
from teleop.tasks.cues import CueSpec
from teleop.tasks.objects import KINDS, kind_defaults

SPEC_DIR = Path(__file__).parent / "specs"
AXES = ("generalization", "instruction_following", "limited_demonstrations", "long_horizon", "memory")
COLOURS = {"red": (0.85, 0.12, 0.1, 1), "green": (0.15, 0.7, 0.2, 1), "blue": (0.12, 0.3, 0.85, 1),
           "yellow": (0.95, 0.85, 0.1, 1), "none": (0.85, 0.85, 0.85, 1)}
TABLE = "table"
TABLE_X, TABLE_Y = (0.25, 0.8), (-0.5, 0.5)      # where task objects may be placed


@dataclass(frozen=True)
class Spawn:
    center: tuple[float, float]          # world xy on the table, or relative to the support ``on``
    extent: tuple[float, float] = (0.0, 0.0)   # half extents of the uniform xy region
    yaw: tuple[float, float] = (0.0, 0.0)      # radians
    on: str = TABLE                      # rest on the table or on another object's support surface
    clearance: float | None = None       # placement radius override (m)


@dataclass(frozen=True)
class ObjectSpec:
    name: str
    kind: str
    params: dict[str, Any]
    spawn: Spawn
    fixed: bool = False                  # a fixture welded to the world (spawn extent must be zero)
    parked: bool = False                 # starts off the table (revealed by a scene event)
    colour: str | None = None            # logical colour, for colour predicates and events
    joint_init: float = 0.0              # articulated: initial joint fraction of its range
    covers: str | None = None            # covers (memory caps): the object it is placed over


@dataclass(frozen=True)
class PredicateSpec:
    type: str
    args: dict[str, Any]
    field: str = ""


@dataclass(frozen=True)
class EventSpec:
    type: str
    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class SubtaskSpec:
    name: str
    weight: int
    must_hold: bool
    latch_violation: bool
    predicates: tuple[PredicateSpec, ...]
    after: tuple[int, ...]               # indices of prerequisite subtasks (ordered tasks)


@dataclass(frozen=True)
class Segment:
    text: str
    until_step: int | None = None


@dataclass(frozen=True)
class TaskSpec:
    id: str
    axis: str
    instruction: str
    ordered: bool
    objects: tuple[ObjectSpec, ...]
    subtasks: tuple[SubtaskSpec, ...]
    language_schedule: tuple[Segment, ...] | None = None
    max_steps: int | None = None
    distractors: tuple[str, ...] = ()
    events: tuple[EventSpec, ...] = ()
    path: str = ""
    extra: dict = field(default_factory=dict)
    demos: int = 100                 # accepted takes to collect (the catalog's count: 100, or 30)
    cue: CueSpec | None = None       # memory tasks: what the decision depends on (teleop.tasks.cues)

    def object(self, name: str) -> ObjectSpec:
        return next(o for o in self.objects if o.name == name)

    def instruction_at(self, step: int) -> str:
        """The active instruction text at control step ``step`` (language schedules switch)."""
        if not self.language_schedule:
            return self.instruction
        for seg in self.language_schedule:
            if seg.until_step is None or step < seg.until_step:
                return seg.text
        return self.language_schedule[-1].text


def _req(raw: dict, key: str, typ, where: str):
    if key not in raw:
        raise SpecError(f"{where}{key}", "missing required field")
    value = raw[key]
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise SpecError(f"{where}{key}", f"must be {getattr(typ, '__name__', typ)}, got {value!r}")
    return value


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _floats(value, n: int, where: str) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n or not all(_is_number(v) for v in value):
        raise SpecError(where, f"must be a list of {n} numbers, got {value!r}")
    return tuple(float(v) for v in value)


def _flag(raw: dict, key: str, where: str) -> bool:
    """An optional true/false field (absent: false); anything else is refused, not truth-tested."""
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise SpecError(f"{where}{key}", f"must be true or false, got {value!r}")
    return value


def _number(raw: dict, key: str, where: str, default: float | None, low: float, high: float = math.inf,
            low_open: bool = False) -> float | None:
    """An optional number field within [low, high] (``low_open``: strictly above ``low``)."""
    value = raw.get(key, default)
    if value is default:
        return value
    if not _is_number(value) or value < low or (low_open and value == low) or value > high:
        span = f"> {low:g}" if low_open and high == math.inf else f"between {low:g} and {high:g}"
        raise SpecError(f"{where}{key}", f"must be a number {span}, got {value!r}")
    return float(value)


def _names(raw: dict, key: str, where: str) -> list:
    """An optional list field (absent: empty); a bare string would otherwise be read letter by letter."""
    value = raw.get(key) or []
    if not isinstance(value, list):
        raise SpecError(f"{where}{key}", f"must be a list, got {value!r}")
    return value


def _parse_params(where: str, kind: str, raw: dict) -> dict:
    decl = KINDS[kind].params
    params = kind_defaults(kind)
    for key in KINDS[kind].required:
        if key not in raw:
            raise SpecError(f"{where}.{key}", f"missing required parameter of kind {kind!r}")
    for key, value in raw.items():
        if key not in decl:
            raise SpecError(f"{where}.{key}", f"unknown parameter for kind {kind!r}; valid choices: "
                            f"{choices(sorted(decl))}")
        problem = decl[key].problem(value)          # type, list length and range, from the kind's data
        if problem:
            raise SpecError(f"{where}.{key}", f"{problem} (parameter of kind {kind!r})")
        params[key] = float(value) if decl[key].type is float else value
    return params


OBJECT_KEYS = ("name", "kind", "spawn", "fixed", "parked", "colour", "joint_init", "covers")


def _parse_object(i: int, raw: Any, names: list[str], fixed_names: tuple[str, ...] = ()) -> ObjectSpec:
    where = f"objects[{i}]"
    if not isinstance(raw, dict):
        raise SpecError(where, "must be a mapping")
    name = _req(raw, "name", str, f"{where}.")
    kind = _req(raw, "kind", str, f"{where}.")
    if kind not in KINDS:
        raise SpecError(f"{where}.kind", f"unknown kind {kind!r}; valid choices: {choices(sorted(KINDS))}")
    params = _parse_params(where, kind, {k: v for k, v in raw.items() if k not in OBJECT_KEYS})
    colour = raw.get("colour")
    if colour is not None and (not isinstance(colour, str) or colour not in COLOURS):
        raise SpecError(f"{where}.colour", f"unknown colour {colour!r}; valid choices: {choices(list(COLOURS))}")
    if colour is not None and "rgba" not in raw:
        params["rgba"] = list(COLOURS[colour])
    sp = raw.get("spawn")
    if not isinstance(sp, dict):
        raise SpecError(f"{where}.spawn", "missing spawn mapping (center, extent, yaw, on)")
    on = sp.get("rest_on", TABLE)
    if on != TABLE and on not in names:
        raise SpecError(f"{where}.spawn.rest_on", f"unknown support {on!r} (declare it before this object); "
                        f"valid choices: {choices([TABLE, *names])}")
    spawn = Spawn(_floats(sp.get("center"), 2, f"{where}.spawn.center"),
                  _floats(sp.get("extent", [0, 0]), 2, f"{where}.spawn.extent"),
                  _floats(sp.get("yaw", [0, 0]), 2, f"{where}.spawn.yaw"), on,
                  _number(sp, "clearance", f"{where}.spawn.", None, 0.0, low_open=True))
    fixed = _flag(raw, "fixed", f"{where}.")
    parked = _flag(raw, "parked", f"{where}.")
    covers = raw.get("covers")
    if covers is not None and not isinstance(covers, str):
        raise SpecError(f"{where}.covers", f"must be the name of the object this one covers, got {covers!r}")
    if fixed and on != TABLE and on not in fixed_names:
        raise SpecError(f"{where}.spawn.rest_on", f"a fixed object can only rest on a fixed one; valid choices: "
                        f"{choices([TABLE, *fixed_names])}")
    if fixed and (spawn.extent != (0.0, 0.0) or spawn.yaw[0] != spawn.yaw[1]):
        raise SpecError(f"{where}.spawn", "a fixed object needs a single pose (zero extent, one yaw)")
    if on == TABLE and not parked:
        x, y = spawn.center
        ex, ey = spawn.extent
        if x - ex < TABLE_X[0] or x + ex > TABLE_X[1] or y - ey < TABLE_Y[0] or y + ey > TABLE_Y[1]:
            raise SpecError(f"{where}.spawn.center", f"spawn region must lie within x {TABLE_X}, y {TABLE_Y}")
    return ObjectSpec(name, kind, params, spawn, fixed, parked, colour,
                      _number(raw, "joint_init", f"{where}.", 0.0, 0.0, 1.0), covers)


def automatic_events(objects: tuple[ObjectSpec, ...]) -> tuple[EventSpec, ...]:
    """The events objects bring by their kind (:attr:`Kind.auto_events`, e.g. a button's
    ``{name}.presses`` counter), in object order; they come before the spec's own events."""
    return tuple(EventSpec(a.type, f"{o.name}.{a.suffix}", {a.arg: o.name})
                 for o in objects for a in KINDS[o.kind].auto_events)


def namespace(objects: tuple[ObjectSpec, ...], events: list[str]) -> NameSpace:
    names = tuple(o.name for o in objects)
    return NameSpace(names, tuple(o.name for o in objects if KINDS[o.kind].container),
                     tuple(o.name for o in objects if KINDS[o.kind].articulated), tuple(events), tuple(COLOURS))


def parse_predicate(where: str, raw: Any, ns: NameSpace) -> PredicateSpec:
    from teleop.tasks.predicates import PREDICATES
    if not isinstance(raw, dict) or "type" not in raw:
        raise SpecError(where, "a predicate must be a mapping with a 'type'")
    ptype = raw["type"]
    if not isinstance(ptype, str) or ptype not in PREDICATES:
        raise SpecError(f"{where}.type", f"unknown predicate {ptype!r}; valid choices: {choices(sorted(PREDICATES))}")
    return PredicateSpec(ptype, check_args(where, PREDICATES[ptype].args, raw, ns, parse_predicate), where)
