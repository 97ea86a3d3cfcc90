"""The one way the project reads a hand-written YAML file: every failure a ConfigError naming it.

Task specs, robot parameters, retarget configs, synthetic-operator scripts and grasps, the node map
and operator profiles are all written (and broken) by people, so a bad file must say which file,
where and why, never surface as a raw ``UnicodeDecodeError`` or ``yaml`` traceback.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from teleop.core.errors import ConfigError


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """'line L, column C: problem' when PyYAML knows where (1-based, as editors count)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return problem
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"


def read_text(path: str | Path, what: str) -> str:
    """The file's text, strictly UTF-8; ``what`` names the kind of file in the message."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read {what}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start}); save it as UTF-8") from None


def parse_yaml(text: str, path: str | Path, what: str) -> Any:
    """``yaml.safe_load`` of ``text`` that came from ``path``; syntax errors name the file and line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        # "bad YAML" first: it is what the reader must fix; "cannot read" says what could not load
        raise ConfigError(f"{path}: bad YAML at {_yaml_problem(exc)} (cannot read {what})") from None


def load_yaml(path: str | Path, what: str) -> dict[str, Any]:
    """A YAML file whose top level is a mapping, e.g. ``load_yaml(p, "task spec")``.

    Raises :class:`ConfigError` naming ``path`` for an unreadable file, bytes that are not UTF-8,
    a YAML syntax error (with its line) and a top level that is not a mapping (empty files too).
    """
    raw = parse_yaml(read_text(path, what), path, what)
    if not isinstance(raw, dict):
        got = "an empty file" if raw is None else f"a {type(raw).__name__}"
        raise ConfigError(f"{path}: {what}: the top level must be a YAML mapping (key: value lines), got {got}")
    return raw
