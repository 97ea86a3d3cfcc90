"""Typed, checked arguments shared by predicates and scene events.

An :class:`Arg` names a *kind* of value; :func:`check_args` validates a raw YAML mapping against a
declaration and returns the resolved values, raising :class:`SpecError` that names the field and
the valid choices.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from teleop.core.errors import ConfigError, choices

HANDS = ("left", "right", "any")
ARG_KINDS = ("object", "objects", "container", "articulated", "hand", "float", "int", "event", "colour",
             "predicate", "str")


class SpecError(ConfigError):
    """A task spec is invalid; ``field`` is a dotted path such as ``subtasks[1].predicates[0].object``."""

    def __init__(self, field: str, message: str, path: str = "<spec>"):
        self.field, self.detail, self.path = field, message, path
        super().__init__(f"{path}: {field}: {message}")

    def at(self, path: str) -> SpecError:
        return SpecError(self.field, self.detail, path)


_MISSING = object()


@dataclass(frozen=True)
class Arg:
    kind: str
    default: Any = _MISSING

    @property
    def required(self) -> bool:
        return self.default is _MISSING


@dataclass(frozen=True)
class NameSpace:
    """What names a spec defines, so arguments can be resolved against them."""
    objects: tuple[str, ...]
    containers: tuple[str, ...]
    articulated: tuple[str, ...]
    events: tuple[str, ...]
    colours: tuple[str, ...]


def _check_one(field: str, kind: str, value: Any, ns: NameSpace, parse_predicate) -> Any:
    if kind in ("object", "container", "articulated"):
        valid = {"object": ns.objects, "container": ns.containers, "articulated": ns.articulated}[kind]
        if not isinstance(value, str) or value not in valid:
            valid_text = choices(valid) or f"none (no {kind} in this spec)"
            raise SpecError(field, f"unknown {kind} {value!r}; valid choices: {valid_text}")
        return value
    if kind == "objects":
        if not isinstance(value, list) or not value:
            raise SpecError(field, "must be a non-empty list of object names")
        return tuple(_check_one(f"{field}[{i}]", "object", v, ns, parse_predicate) for i, v in enumerate(value))
    if kind == "hand":
        if value not in HANDS:
            raise SpecError(field, f"unknown hand {value!r}; valid choices: {choices(HANDS)}")
        return value
    if kind == "event":
        if value not in ns.events:
            raise SpecError(field, f"unknown event {value!r}; valid choices: {choices(ns.events) or 'none defined'}")
        return value
    if kind == "colour":
        if value not in ns.colours:
            raise SpecError(field, f"unknown colour {value!r}; valid choices: {choices(ns.colours)}")
        return value
    if kind in ("float", "int"):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or (kind == "int" and value != int(value)):
            raise SpecError(field, f"must be {'an integer' if kind == 'int' else 'a number'}, got {value!r}")
        return int(value) if kind == "int" else float(value)
    if kind == "str":
        if not isinstance(value, str):
            raise SpecError(field, f"must be a string, got {value!r}")
        return value
    if kind == "predicate":
        return parse_predicate(field, value, ns)
    raise AssertionError(kind)


def check_args(field: str, decl: dict[str, Arg], raw: dict, ns: NameSpace, parse_predicate=None,
               ignore: tuple[str, ...] = ("type",)) -> dict[str, Any]:
    """Validate ``raw`` against ``decl``; unknown and missing arguments are errors."""
    extra = sorted(set(raw) - set(decl) - set(ignore), key=str)
    if extra:
        raise SpecError(f"{field}.{extra[0]}", f"unknown argument; valid choices: {choices(sorted(decl))}")
    out = {}
    for name, arg in decl.items():
        if name not in raw:
            if arg.required:
                raise SpecError(f"{field}.{name}", f"missing required argument ({arg.kind})")
            out[name] = arg.default
            continue
        out[name] = _check_one(f"{field}.{name}", arg.kind, raw[name], ns, parse_predicate)
    return out
