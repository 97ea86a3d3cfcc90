"""The committed record of which tasks the synthetic operator is proven to complete.

``teleop tasks prove --write-record`` measures it (episodes driven through the real loop, recorded
and re-validated by replay) and writes ``proven.json`` beside this module; ``teleop tasks list``,
``teleop demo`` and the app's task picker read it. A task absent from the record is not proven.

    {"pick_up_peach": {"proven": true, "validated": 5, "episodes": 5, "first_episode": 0,
                       "date": "2026-12-01", "commit": "git:9fda944", "information_gap_median": null}, ...}

``information_gap_median`` (memory tasks): the median over the re-validated episodes of each take's
longest interval with the cue provably hidden (:mod:`recordings.cue_gap`); null without a cue or
an episode to measure. Entries written before it existed lack the key (read as null).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from teleop.core.errors import ConfigError

PROVEN_FILE = Path(__file__).with_name("proven.json")
ENTRY_KEYS = ("proven", "validated", "episodes", "first_episode", "date", "commit")
OPTIONAL_KEYS = ("information_gap_median",)        # added later: older entries lack them


@dataclass(frozen=True)
class ProvenEntry:
    proven: bool
    validated: int          # episodes that re-validated by replay with full success
    episodes: int           # episodes driven
    first_episode: int      # episode indices first_episode .. first_episode + episodes - 1
    date: str               # ISO date of the run
    commit: str             # source revision the run measured
    information_gap_median: float | None = None     # memory tasks: median gap (ticks) of the validated episodes

    def to_json(self) -> dict:
        return asdict(self)


def _entry(task_id: str, raw: object, path: Path) -> ProvenEntry:
    if not isinstance(raw, dict) or not set(ENTRY_KEYS) <= set(raw) <= set(ENTRY_KEYS + OPTIONAL_KEYS):
        got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"{path}: {task_id}: an entry needs exactly the keys {list(ENTRY_KEYS)} (optionally "
                          f"{list(OPTIONAL_KEYS)}), got {got}")
    gap = raw.get("information_gap_median")
    return ProvenEntry(bool(raw["proven"]), int(raw["validated"]), int(raw["episodes"]), int(raw["first_episode"]),
                       str(raw["date"]), str(raw["commit"]), None if gap is None else float(gap))


def load_record(path: Path = PROVEN_FILE) -> dict[str, ProvenEntry]:
    """Task id -> its entry; an absent file is an empty record (nothing proven)."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the proven-task record: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the proven-task record must be a mapping of task id -> entry")
    return {task_id: _entry(task_id, entry, path) for task_id, entry in raw.items()}


def proven_ids(path: Path = PROVEN_FILE) -> list[str]:
    """The ids the record marks proven, sorted."""
    return sorted(t for t, e in load_record(path).items() if e.proven)


def write_record(entries: dict[str, ProvenEntry], path: Path = PROVEN_FILE) -> Path:
    """Merge ``entries`` into the record at ``path`` (other tasks keep theirs) and write it sorted."""
    path = Path(path)
    record = load_record(path)
    record.update(entries)
    text = json.dumps({t: record[t].to_json() for t in sorted(record)}, indent=2) + "\n"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
