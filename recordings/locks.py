"""Advisory file locks (``flock``) that make one take store safe to share between processes.

Two kinds:

* The **owner lock** of a journal (``<id>.partial/owner.lock``): held by the writer for the whole
  life of the recording, released by the kernel when the writer's process dies (``kill -9``
  included). Recovery touches a journal only after taking its owner lock itself, so a live
  recording is never finalised, moved or removed by anyone else.
* The **store lock** (``<takes>/.store.lock``): held for a few milliseconds around the moments
  that must not interleave — a journal being created (folder, owner lock, header), recovery
  choosing which journals are orphans, a take file being replaced, a file being quarantined.

``flock`` (not ``fcntl``/``lockf`` POSIX locks) because its locks belong to an open file
description: a second open in the same process conflicts as it would in another process, and
closing an unrelated descriptor never drops a lock (POSIX locks would do both).
"""
from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import threading
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Iterator

STORE_LOCK = ".store.lock"
OWNER_LOCK = "owner.lock"

# The store lock is re-entrant per process: a thread that holds it may take it again (e.g. a
# quarantine inside recovery) instead of deadlocking on its own second flock.
_mutex = threading.RLock()
_held: dict[str, list[int]] = {}          # lock path -> [depth, fd]


@contextmanager
def store_lock(folder: Path) -> Iterator[None]:
    """Hold the store lock of ``folder`` (a takes folder), blocking until it is free."""
    path = str(Path(folder) / STORE_LOCK)
    with _mutex:                           # also serialises this process's threads
        entry = _held.get(path)
        if entry is None:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
            entry = _held[path] = [0, fd]
        entry[0] += 1
        try:
            yield
        finally:
            entry[0] -= 1
            if entry[0] == 0:
                del _held[path]
                fcntl.flock(entry[1], fcntl.LOCK_UN)
                os.close(entry[1])


class OwnerLock:
    """An exclusive, non-blocking ``flock`` on one file, held until :meth:`release`."""

    def __init__(self, path: Path, fd: int):
        self.path, self._fd = Path(path), fd

    @classmethod
    def try_acquire(cls, path: Path, create: bool = True) -> OwnerLock | None:
        """The lock, or None when another open file description holds it (or ``path`` is gone
        and ``create`` is False)."""
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        try:
            fd = os.open(path, flags, 0o644)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return None
            raise
        return cls(path, fd)

    def describe_owner(self) -> None:
        """Write who holds the lock into the lock file (for people reading the folder; the lock
        itself, not this text, is what recovery trusts)."""
        info = json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, info, 0)

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1
