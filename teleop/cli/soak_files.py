"""The soak benchmark's hostile inputs and its audit (see :mod:`teleop.cli.benches.soak`).

Hostile inputs are dropped straight into a live store's takes folder: garbage bytes, a truncated
copy of a take, a copy with a corrupted heap, an exact copy under another name (a duplicate take
id), and a *tampered* take (a readable file under a new take id whose states moved 10 cm, marked
accepted) that validation must fail and export must never ship.
"""
from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from recordings.checks import take_digest
from recordings.errors import TakeError
from recordings.takefile import Review, read_take, write_take_h5
from teleop.sim import HEADER

KINDS = ("garbage", "truncated", "heap", "duplicate", "tampered")


def _place(data: bytes, takes_dir: Path, name: str) -> Path:
    """Write aside, then rename in: the store sees the file whole, as a copy tool would leave it."""
    tmp = takes_dir.parent / f".incoming-{name}"
    tmp.write_bytes(data)
    target = takes_dir / name
    os.replace(tmp, target)
    return target


def drop(kind: str, takes_dir: Path, source: Path | None, rng: np.random.Generator, k: int) -> tuple[Path, str]:
    """Put one hostile file of ``kind`` into ``takes_dir``; returns (its path, its take id or "")."""
    if source is None or not source.exists():
        kind = "garbage"                     # nothing finished yet to copy from
    name = f"dropped-{k:03d}-{kind}.h5"
    if kind == "garbage":
        return _place(b"\x89HDF\r\n\x1a\n" + rng.bytes(4096), takes_dir, name), ""
    data = source.read_bytes()
    if kind == "truncated":
        return _place(data[: len(data) // 3], takes_dir, name), ""
    if kind == "heap":
        heap = data.find(b"HEAP")
        broken = bytearray(data)
        broken[heap + 16: heap + 24] = b"\xff" * 8      # h5py: RuntimeError "bad heap free list"
        return _place(bytes(broken), takes_dir, name), ""
    take = read_take(source)
    if kind == "duplicate":
        return _place(data, takes_dir, name), take.meta.take_id
    take_id = f"{take.meta.take_id}-tampered{k}"
    states = take.arrays["states"].copy()
    states[1:, HEADER + 1] += 0.10                       # the first position entry, 10 cm, after tick 0
    tmp = takes_dir.parent / f".incoming-{take_id}.h5"
    write_take_h5(tmp, replace(take.meta, take_id=take_id), {**take.arrays, "states": states},
                  Review(status="accepted"), False)
    target = takes_dir / f"{take_id}.h5"
    os.replace(tmp, target)
    return target, take_id


def digest_of(path: Path) -> str | None:
    try:
        return take_digest(read_take(path))
    except TakeError:
        return None


def exported_take_ids(dataset: Path) -> list[str]:
    """Take ids of a complete dataset's episodes (empty if it is not complete)."""
    episodes = dataset / "meta" / "bidex_episodes.jsonl"
    if not episodes.exists():
        return []
    return [json.loads(line)["take_id"] for line in episodes.read_text().splitlines() if line.strip()]


def audit_recordings(store, recordings: list[dict], hz: float) -> dict:
    """Compare every recording the soak ran with what the store holds now."""
    lost = corrupted = recovered = 0
    seconds_lost = 0.0
    for rec in recordings:
        take_id = rec.get("take_id")
        if not take_id:
            continue                         # killed before its journal existed: nothing to keep
        path = store.takes_dir / f"{take_id}.h5"
        if not path.exists():
            in_quarantine = list(store.quarantine_dir.glob(f"{take_id}*"))
            corrupted += bool(in_quarantine)
            lost += not in_quarantine
            continue
        try:
            take = read_take(path)
        except TakeError:
            corrupted += 1
            continue
        if rec.get("finished"):
            # finished before any kill: unchanged, never re-marked interrupted
            corrupted += take.interrupted or take.length != rec["length"] or take_digest(take) != rec["digest"]
        else:
            recovered += take.interrupted
            seconds_lost = max(seconds_lost, max(0, rec.get("ticks", 0) - take.length) / hz)
    return {"takes_lost": lost, "takes_corrupted": int(corrupted), "max_seconds_lost": round(seconds_lost, 3),
            "recovered_interrupted": recovered}
