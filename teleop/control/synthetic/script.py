"""Synthetic-operator scripts: YAML files of steps, checked on load.

    task: put_peach_in_fruit_bowl
    steps:
      - {side: auto, do: grasp, object: peach, grasp: power}
      - {side: auto, do: place, target: fruit_bowl}
      - {side: left, do: press, object: button, times: 3, sync: true}

Each side keeps its own clock; steps of different sides overlap in time unless a step says
``sync: true`` (it starts when everything before it has finished). ``side: auto`` takes the
hand on the object's side of the table (y >= 0 is the left hand) and keeps it for the steps
that follow until another object is named.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from teleop.core.errors import ConfigError, choices
from teleop.core.yamlio import load_yaml

SCRIPT_DIR = Path(__file__).with_name("scripts")
STEP_KINDS = ("grasp", "place", "press", "pull", "hook", "swing", "move", "release", "wait", "rest", "expect")
SIDE_CHOICES = ("left", "right", "auto")


@dataclass(frozen=True)
class Step:
    do: str
    side: str
    args: dict = field(default_factory=dict)
    sync: bool = False


@dataclass(frozen=True)
class Script:
    task: str
    steps: tuple[Step, ...]
    path: str = ""


def parse_script(raw, source: str) -> Script:
    if not isinstance(raw, dict) or "task" not in raw or "steps" not in raw:
        raise ConfigError(f"{source}: a script needs 'task' and 'steps'")
    steps = []
    for i, item in enumerate(raw["steps"] or []):
        where = f"{source}: steps[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: expected a mapping")
        item = dict(item)
        kind = item.pop("do", None)
        if kind not in STEP_KINDS:
            raise ConfigError(f"{where}.do: {kind!r} is not one of {choices(STEP_KINDS)}")
        side = item.pop("side", "auto")
        if side not in SIDE_CHOICES:
            raise ConfigError(f"{where}.side: {side!r} is not one of {choices(SIDE_CHOICES)}")
        steps.append(Step(kind, side, item, bool(item.pop("sync", False))))
    return Script(str(raw["task"]), tuple(steps), source)


def load_script(task_id: str, folder: Path = SCRIPT_DIR) -> Script:
    path = Path(folder) / f"{task_id}.yaml"
    if not path.exists():
        known = sorted(p.stem for p in Path(folder).glob("*.yaml"))
        raise ConfigError(f"no synthetic-operator script for task {task_id!r}; scripted tasks: {choices(known)}")
    script = parse_script(load_yaml(path, "synthetic-operator script"), str(path))
    if script.task != task_id:
        raise ConfigError(f"{path}: task is {script.task!r}, expected {task_id!r}")
    return script


def scripted_tasks(folder: Path = SCRIPT_DIR) -> list[str]:
    return sorted(p.stem for p in Path(folder).glob("*.yaml"))
