"""SQLite index of takes (WAL mode): a cache of the HDF5 files, which are the truth.

Each row remembers the file's stamp (inode, mtime, size) when it was read, so opening a store can
tell which rows are stale (a process killed between writing a file and its row) and re-read only
those. A schema change just rebuilds the cache from the files.
"""
from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from recordings.errors import RecordingsError
from recordings.takefile import Take
from teleop.core.errors import choices

SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS takes (
    take_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, operator TEXT NOT NULL, device TEXT,
    seed_index INTEGER, episode_index INTEGER, status TEXT NOT NULL, reason TEXT, report TEXT,
    score REAL, strict_success INTEGER, ticks INTEGER, duration_s REAL, interrupted INTEGER,
    created REAL, updated REAL, path TEXT NOT NULL, file_stamp TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS takes_task ON takes(task_id, status);
"""
ORDER_COLUMNS = ("created", "task_id", "status", "score", "duration_s", "operator")
LOCK_WAIT_S = 60.0    # a writer waits this long for another process's short transaction
WAL_RETRY_S = 0.01    # first pause between tries to switch a fresh file to WAL (doubles each try)
WAL_RETRY_MAX_S = 0.2  # longest pause: the lock is held only while another process makes the switch


@dataclass(frozen=True)
class TakeRow:
    take_id: str
    task_id: str
    operator: str
    device: str
    seed_index: int
    episode_index: int
    status: str
    reason: str
    report: dict
    score: float | None
    strict_success: int | None
    ticks: int
    duration_s: float
    interrupted: bool
    created: float
    updated: float
    path: str
    file_stamp: str = ""       # the file's stamp when this row was read from it


def _enter_wal(db: sqlite3.Connection) -> None:
    """Switch ``db`` to WAL mode. On a fresh file the switch needs an exclusive lock and SQLite
    answers "database is locked" at once, without its busy wait, when another process opens the
    same new file at that moment (prove's workers do): try again until LOCK_WAIT_S."""
    deadline, pause = time.monotonic() + LOCK_WAIT_S, WAL_RETRY_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, WAL_RETRY_MAX_S)


class TakeIndex:
    def __init__(self, db_path: Path):
        self.db_path = Path(db_path)
        self._db: sqlite3.Connection | None = None

    def open(self) -> TakeIndex:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        # timeout: several processes share the index; a writer waits for another's short transaction
        self._db = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None,
                                   timeout=LOCK_WAIT_S)
        _enter_wal(self._db)
        # The index is a cache of the take files (rebuilt from them): in WAL mode NORMAL cannot
        # corrupt it and spares an fsync per statement, which froze the window after each verdict.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("BEGIN IMMEDIATE")       # one process migrates; the others then see version 2
        try:
            if self._db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                self._db.execute("DROP TABLE IF EXISTS takes")     # a cache: rebuilt from the files on open
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            for statement in SCHEMA.strip().split(";"):
                if statement.strip():
                    self._db.execute(statement)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return self

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def upsert(self, take: Take) -> None:
        """Insert or refresh one take's row from the file's contents."""
        meta, review = take.meta, take.review
        progress = take.arrays["progress"]
        report = review.report or {}
        score = report.get("progress", float(progress[-1]) if len(progress) else None)
        row = (meta.take_id, meta.task_id, meta.operator, meta.device, meta.seed_index, meta.episode_index,
               review.status, review.reason, json.dumps(report), score, report.get("strict_success"),
               take.length, take.length / meta.control_hz, int(take.interrupted), meta.created,
               review.updated or meta.created, str(take.path), take.stamp)
        self._db.execute("INSERT OR REPLACE INTO takes VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)

    def remove(self, take_id: str) -> None:
        self._db.execute("DELETE FROM takes WHERE take_id = ?", (take_id,))

    def remove_path(self, path) -> None:
        """Drop the row of the file at ``path`` (if the index points a take id there)."""
        self._db.execute("DELETE FROM takes WHERE path = ?", (str(path),))

    def get(self, take_id: str) -> TakeRow | None:
        rows = self._select("WHERE take_id = ?", (take_id,))
        return rows[0] if rows else None

    def query(self, task_id: str | None = None, status: str | None = None, operator: str | None = None,
              order_by: str = "created", descending: bool = False) -> list[TakeRow]:
        if order_by not in ORDER_COLUMNS:
            raise RecordingsError(f"order_by {order_by!r} is not one of {choices(ORDER_COLUMNS)}")
        clauses, args = [], []
        for column, value in (("task_id", task_id), ("status", status), ("operator", operator)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return self._select(f"{where} ORDER BY {order_by} {'DESC' if descending else 'ASC'}", tuple(args))

    def counts(self, status: str) -> dict[str, int]:
        """task_id -> number of takes with ``status``."""
        cur = self._db.execute("SELECT task_id, COUNT(*) FROM takes WHERE status = ? GROUP BY task_id", (status,))
        return dict(cur.fetchall())

    def clear(self) -> None:
        self._db.execute("DELETE FROM takes")

    def _select(self, tail: str, args: tuple) -> list[TakeRow]:
        cur = self._db.execute(f"SELECT * FROM takes {tail}", args)
        rows = []
        for r in cur.fetchall():
            r = list(r)
            r[8] = json.loads(r[8] or "{}")
            r[13] = bool(r[13])
            rows.append(TakeRow(*r))
        return rows
