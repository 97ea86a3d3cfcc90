"""Memory cues: what a memory task's decision depends on, and when the scene provably hides it.

A memory task names its cue in its spec (``cue: {kind, what, ...}``). Each cue kind is data: its
typed arguments, the arguments that pair up element by element, the event type an ``event``
argument must have, and its *hiding rule*: the predicates (:mod:`teleop.tasks.predicates`) of
which any one holding means the cue is absent from what the robot can observe at that tick.
Shared code never looks at a task's or a cue's name beyond this table.

The runtime evaluates the rule on the state of every tick (:attr:`TaskRuntime.cue_hidden`); the
recorder stores it per tick (``cue_hidden``) and replay reproduces it. Over an episode,
:func:`recordings.cue_gap.information_gap` gives MIKASA-Robo-VLA's figures: the ticks the cue is
provably hidden and the longest contiguous interval of them (the gap a policy's memory must bridge).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from teleop.core.errors import choices
from teleop.tasks.args import Arg, NameSpace, SpecError, check_args

CUE_FIELDS = ("kind", "what")          # every cue's own fields; the rest are the kind's arguments
NO_COLOUR = "none"                     # colour_is's value once a colour_hide event removed a colour
ORDER_NEEDS = 2                        # an entry order is unreadable once two tracked objects share the container


@dataclass(frozen=True)
class CueSpec:
    kind: str
    what: str                          # the cue in words, e.g. "which cap hides the red cube"
    args: dict[str, Any]


Rule = Callable[[dict, dict], list[Any]]     # (cue args, events by name) -> PredicateSpec list (any holds: hidden)


@dataclass(frozen=True)
class CueKind:
    name: str
    doc: str
    args: dict[str, Arg]
    rule: Rule
    pairs: tuple[str, ...] = ()        # list arguments that pair element by element (equal lengths)
    event_type: str | None = None      # the type an ``event`` argument's event must have (None: any)


def _pred(ptype: str, **args) -> Any:
    from teleop.tasks.spec import PredicateSpec
    return PredicateSpec(ptype, args, "cue")


def _covered(a: dict, events: dict) -> list:
    return [_pred("covered", object=o, cover=c, tol=0.03) for o, c in zip(a["objects"], a["covers"])]


def _removed_colour(a: dict, events: dict) -> list:
    return [_pred("colour_is", object=a["object"], colour=NO_COLOUR)]


def _event_count(a: dict, events: dict) -> list:
    return [_pred("event_count_at_least", event=a["event"], n=1)]


def _insertion_order(a: dict, events: dict) -> list:
    ev = events[a["event"]].args
    objs = ev["objects"]
    return [_pred("count_inside", objects=objs, container=ev["container"], n=n, tol=0.0)
            for n in range(ORDER_NEEDS, len(objs) + 1)]


def _start_container(a: dict, events: dict) -> list:
    return [_pred("not", of=_pred("inside", object=o, container=c, tol=0.01))
            for o, c in zip(a["objects"], a["containers"])]


CUE_KINDS: dict[str, CueKind] = {k.name: k for k in (
    CueKind("covered_object", "Where each object is: hidden while any of its covers sits over it (``covered``).",
            {"objects": Arg("objects"), "covers": Arg("objects")}, _covered, pairs=("objects", "covers")),
    CueKind("removed_colour", "The object's colour: hidden once a colour event removed it (``colour_is`` none).",
            {"object": Arg("object")}, _removed_colour),
    CueKind("event_count", "How often a counting event fired (presses): hidden from its first firing on, since "
            "the count lives only in the event's state and nothing in the scene shows it.",
            {"event": Arg("event")}, _event_count),
    CueKind("insertion_order", "The order objects entered an order tracker's container: hidden while at least "
            "two of them are inside it together.", {"event": Arg("event")}, _insertion_order,
            event_type="order_tracker"),
    CueKind("start_container", "Which container each object started in: hidden while any object is outside its "
            "start container.", {"objects": Arg("objects"), "containers": Arg("objects")}, _start_container,
            pairs=("objects", "containers")),
)}


def parse_cue(raw: Any, ns: NameSpace, events: dict) -> CueSpec:
    """A checked :class:`CueSpec` from the spec's ``cue`` mapping; ``events``: name -> EventSpec
    (the automatic ones included). Errors name the field and the valid choices."""
    if not isinstance(raw, dict):
        raise SpecError("cue", f"must be a mapping {{kind, what, ...}}; valid kinds: {choices(sorted(CUE_KINDS))}")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in CUE_KINDS:
        raise SpecError("cue.kind", f"unknown cue kind {kind!r}; valid choices: {choices(sorted(CUE_KINDS))}")
    what = raw.get("what")
    if not isinstance(what, str) or not what.strip():
        raise SpecError("cue.what", "must say in words what the cue is (e.g. 'which cap hides the red cube')")
    decl = CUE_KINDS[kind]
    args = check_args("cue", decl.args, raw, ns, ignore=CUE_FIELDS)
    lengths = {name: len(args[name]) for name in decl.pairs}
    if len(set(lengths.values())) > 1:
        raise SpecError(f"cue.{decl.pairs[-1]}", f"{' and '.join(decl.pairs)} pair element by element: "
                        f"they need equal lengths, got {lengths}")
    if decl.event_type is not None:
        event = events[args["event"]]
        if event.type != decl.event_type:
            fitting = [n for n, e in events.items() if e.type == decl.event_type]
            raise SpecError("cue.event", f"event {args['event']!r} is a {event.type}; cue kind {kind!r} needs a "
                            f"{decl.event_type} event; valid choices: {choices(fitting) or 'none defined'}")
    return CueSpec(kind, what, args)


class Cue:
    """A task's cue, built for its world: ``hidden(frame)`` says whether the scene hides it now."""

    def __init__(self, world, spec: CueSpec):
        from teleop.tasks.predicates import build_predicate
        events = {e.name: e for e in _all_events(world.spec)}
        self.spec = spec
        self.preds = [build_predicate(world, p) for p in CUE_KINDS[spec.kind].rule(spec.args, events)]

    def reset(self, data) -> None:
        for p in self.preds:
            p.reset(data)

    def hidden(self, frame) -> bool:
        results = [p(frame) for p in self.preds]       # no short-circuit, like the scorer
        return any(results)


def _all_events(spec) -> tuple:
    from teleop.tasks.spec import automatic_events
    return (*automatic_events(spec.objects), *spec.events)
