"""Quarantine: where a store puts what it cannot use, instead of crashing on it or deleting it.

An unreadable take file, a journal that cannot be decoded, a second file claiming a take id
that another file already has: each is moved to ``<store>/quarantine/`` next to a
``<name>.reason.txt`` that says where it came from and why. Nothing is ever deleted, and the
rest of the store keeps working.
"""
from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from recordings.journal import atomic_write_text, fsync_dir
from recordings.locks import store_lock

log = logging.getLogger(__name__)

QUARANTINE = "quarantine"
REASON_SUFFIX = ".reason.txt"


@dataclass(frozen=True)
class Quarantined:
    path: Path                     # where it was
    moved_to: Path                 # where it is now
    reason: str
    take_id: str | None = None     # as the index knew it (None: never indexed)
    status: str | None = None      # its review status in the index before (None: never indexed)
    task_id: str | None = None

    def line(self) -> str:
        return f"{self.path}: {self.reason} (moved to {self.moved_to})"


def _free_name(folder: Path, name: str) -> Path:
    target = folder / name
    k = 1
    while target.exists() or target.with_name(target.name + REASON_SUFFIX).exists():
        stem, dot, ext = name.partition(".")
        target = folder / f"{stem}-{k}{dot}{ext}"
        k += 1
    return target


def quarantine(path: Path, quarantine_dir: Path, reason: str) -> Path | None:
    """Move ``path`` (a file or a journal folder) into ``quarantine_dir`` with its reason file.

    Returns the new location, or None when ``path`` is already gone (another process moved it
    first). Runs under the store lock of ``path``'s folder: two processes never pick one name."""
    path = Path(path)
    quarantine_dir.mkdir(parents=True, exist_ok=True)
    with store_lock(path.parent):
        if not os.path.lexists(path):
            return None
        target = _free_name(quarantine_dir, path.name)
        os.rename(path, target)          # same file system: the store's own folders
        fsync_dir(path.parent)
        fsync_dir(quarantine_dir)
    atomic_write_text(target.with_name(target.name + REASON_SUFFIX),
                      f"file: {path}\nreason: {reason}\nquarantined: {time.strftime('%Y-%m-%d %H:%M:%S')} "
                      f"by pid {os.getpid()}\n")
    log.warning("quarantined %s: %s (now %s)", path, reason, target)
    return target


def quarantined(quarantine_dir: Path) -> list[tuple[Path, str]]:
    """Everything in quarantine with its reason (the reason file's ``reason:`` line)."""
    out = []
    for reason_file in sorted(Path(quarantine_dir).glob(f"*{REASON_SUFFIX}")):
        lines = dict(line.split(": ", 1) for line in reason_file.read_text().splitlines() if ": " in line)
        out.append((reason_file.with_name(reason_file.name[:-len(REASON_SUFFIX)]), lines.get("reason", "")))
    return out
