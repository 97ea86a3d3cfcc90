"""Review decisions written off the UI thread.

``TakeStore.set_review`` writes the decision into the take file (the truth) and re-reads the whole
file to refresh its index row: 30–500 ms on a busy disk, a visible freeze after every Accept. The
window splits it: the file half runs here on one worker thread (in order, so a later decision
never lands before an earlier one), the index half stays on the UI thread (the only thread that
touches the index): :meth:`ReviewWriter.poll` hands back the re-read takes to upsert. The index
is also updated at once from the take in memory, so the browser never waits for the disk.
"""
from __future__ import annotations

import dataclasses
import queue
import threading
import time

from recordings.takefile import STATUSES, Review, Take, read_take, update_review
from teleop.core.errors import TeleopError


class ReviewWriter:
    def __init__(self, store):
        self.store = store
        self._jobs: queue.Queue = queue.Queue()
        self._done: queue.Queue = queue.Queue()
        self._pending = 0
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="review-writer", daemon=True)
        self._thread.start()

    def write(self, take_id: str, status: str, reason: str = "", report: dict | None = None,
              take: Take | None = None, after=None) -> None:
        """Record a decision (UI thread). ``take``: the take in memory, indexed at once.
        ``after()`` runs on the UI thread once the file is written: whatever opens the file next
        (a validation, a reload) must wait for it — HDF5 refuses to open a file being written."""
        if status not in STATUSES:
            raise TeleopError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        if status == "rejected" and not reason.strip():
            raise TeleopError(f"take {take_id}: a rejection needs a reason")
        review = Review(status, reason, report or {}, time.time())
        if take is not None:
            self.store.index.upsert(dataclasses.replace(take, review=review))
        with self._cond:
            self._pending += 1
        self._jobs.put((self.store.path(take_id), review, after))

    def close(self, timeout: float = 10.0) -> None:
        """Write what is pending, then end the writer's thread (the window is closing)."""
        self.flush(timeout)
        self._jobs.put(None)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            path, review, after = job
            try:
                update_review(path, review)
                self._done.put((read_take(path), after))
            except Exception as exc:  # noqa: BLE001 - reported through poll(), never lost silently
                self._done.put((exc, after))
            with self._cond:
                self._pending -= 1
                self._cond.notify_all()

    def poll(self) -> tuple[int, list[str]]:
        """(UI thread) Index the takes written since the last call: (how many, the errors as text)."""
        indexed, errors = 0, []
        while True:
            try:
                result, after = self._done.get_nowait()
            except queue.Empty:
                return indexed, errors
            if isinstance(result, Exception):
                errors.append(str(result))
            else:
                self.store.index.upsert(result)
                indexed += 1
            if after is not None:
                after()

    def flush(self, timeout: float = 10.0) -> tuple[int, list[str]]:
        """Wait for every pending write, then index them (the window is closing; tests)."""
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0, timeout)
        return self.poll()
