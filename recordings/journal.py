"""Append-only tick journal: the crash-safe half of a take while it is being recorded.

A journal is a folder ``<take_id>.partial/`` holding ``owner.lock`` (flocked by the writer for its
whole life: see :mod:`recordings.locks`), ``header.json`` (written atomically before the first
tick) and ``ticks.bin``: a sequence of records ``[b"TKRC", u32 length, u32 crc32, payload]``.
The payload packs one tick's columns in the order and layout the header lists. The writer calls
``fsync`` at least once a second, so a crash or ``kill -9`` loses at most the last second; a torn
record at the tail fails its length or CRC check and is dropped on reading, never misread.
"""
from __future__ import annotations

import json
import os
import struct
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from recordings.errors import TakeError
from recordings.locks import OWNER_LOCK, OwnerLock, store_lock

MAGIC = b"TKRC"
HEADER = "header.json"
TICKS = "ticks.bin"
DONE = "finished"           # written once <id>.h5 is complete: the journal is only waiting to be removed
RECORD_HEAD = struct.Struct("<4sII")


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str              # numpy dtype string, e.g. "<f4"
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.dtype(self.dtype).itemsize * int(np.prod(self.shape, dtype=np.int64)))


def atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class JournalWriter:
    """Appends tick records; ``flush_interval`` seconds bounds what a crash can lose."""

    def __init__(self, folder: Path, header: dict, columns: list[Column], flush_interval: float = 0.5):
        self.folder = Path(folder)
        self.columns = columns
        self.flush_interval = flush_interval
        self._fh = None
        self.lock: OwnerLock | None = None
        self._header = {**header, "columns": [[c.name, c.dtype, list(c.shape)] for c in columns]}
        self._last_sync = 0.0
        self.ticks = 0

    def open(self) -> None:
        """Create the journal owned by this writer. Folder, owner lock and header appear under the
        store lock, so recovery (which picks orphans under the same lock) never sees a journal
        that exists but is not yet owned."""
        with store_lock(self.folder.parent):
            self.folder.mkdir(exist_ok=False)
            self.lock = OwnerLock.try_acquire(self.folder / OWNER_LOCK)
            if self.lock is None:       # impossible for a folder we just made; never write unowned
                raise TakeError(self.folder, "could not take the journal's owner lock")
            self.lock.describe_owner()
            atomic_write_text(self.folder / HEADER, json.dumps(self._header))
        self._fh = open(self.folder / TICKS, "ab")
        self._last_sync = time.monotonic()

    def append(self, values: dict[str, np.ndarray]) -> None:
        parts = []
        missing = [c.name for c in self.columns if c.name not in values]
        if missing:
            raise TakeError(self.folder, f"tick without column(s) {missing}; every tick needs "
                                         f"{[c.name for c in self.columns]}")
        for col in self.columns:
            arr = np.asarray(values[col.name], dtype=col.dtype)
            if arr.shape != col.shape:
                raise TakeError(self.folder, f"column {col.name!r}: shape {arr.shape}, expected {col.shape}")
            parts.append(arr.tobytes())
        payload = b"".join(parts)
        self._fh.write(RECORD_HEAD.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload)
        self.ticks += 1
        if time.monotonic() - self._last_sync >= self.flush_interval:
            self.sync()

    def sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Flush and close the tick file; the owner lock stays held (finalising needs it)."""
        if self._fh is not None:
            self.sync()
            self._fh.close()
            self._fh = None

    def release(self) -> None:
        """Close and give up ownership without finalising, as a crash would: the journal stays on
        disk and the next store open recovers it as an interrupted take."""
        self.close()
        if self.lock is not None:
            self.lock.release()


@dataclass(frozen=True)
class JournalContents:
    header: dict
    columns: list[Column]
    arrays: dict[str, np.ndarray]   # name -> (T, *shape)
    ticks: int
    dropped_tail_bytes: int         # bytes of a torn last record that were ignored


def read_journal(folder: Path) -> JournalContents:
    """Every complete, CRC-valid record; a torn tail is counted and ignored."""
    folder = Path(folder)
    try:
        header = json.loads((folder / HEADER).read_text())
        raw = (folder / TICKS).read_bytes() if (folder / TICKS).exists() else b""
    except (OSError, ValueError) as exc:      # ValueError: bad JSON or bytes that are not UTF-8
        raise TakeError(folder, f"unreadable journal header: {exc}") from exc
    try:
        columns = [Column(n, d, tuple(s)) for n, d, s in header.get("columns", [])]
        np.dtype([(c.name, c.dtype, c.shape) for c in columns])        # every dtype/shape is valid
    except (AttributeError, TypeError, ValueError) as exc:
        raise TakeError(folder / HEADER, f"field 'columns' is malformed: {exc}") from exc
    if not columns:
        raise TakeError(folder / HEADER, "field 'columns' is missing or empty")
    size = sum(c.nbytes for c in columns)
    records, offset = [], 0
    while offset + RECORD_HEAD.size <= len(raw):
        magic, length, crc = RECORD_HEAD.unpack_from(raw, offset)
        start = offset + RECORD_HEAD.size
        payload = raw[start:start + length]
        if magic != MAGIC or length != size or len(payload) != length or zlib.crc32(payload) != crc:
            break
        records.append(payload)
        offset = start + length
    buf = np.frombuffer(b"".join(records), dtype=np.uint8).reshape(len(records), size)
    arrays, col_offset = {}, 0
    for col in columns:
        chunk = buf[:, col_offset:col_offset + col.nbytes]
        arrays[col.name] = np.ascontiguousarray(chunk).view(col.dtype).reshape(len(records), *col.shape)
        col_offset += col.nbytes
    return JournalContents(header, columns, arrays, len(records), len(raw) - offset)
