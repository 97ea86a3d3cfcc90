"""Background validation of accepted takes, in worker processes; results land in the take store."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
from pathlib import Path

from recordings.store import TakeStore
from recordings.validate import ValidationReport, task_runtime, validate_take


class ValidationManager:
    """Submit takes; call :meth:`poll` from the UI thread (a timer) to store finished results."""

    def __init__(self, store: TakeStore, workers: int = 1, runtime_for=task_runtime):
        self.store = store
        self.runtime_for = runtime_for
        self._workers = workers
        self._pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))
        self._pending: dict[cf.Future, str] = {}
        self._forgotten: set[str] = set()      # verdicts undone while their validation ran
        self.writer = None                     # a ui.review_writer.ReviewWriter: results stored off the UI thread
        # Start the worker process now: spawning it on the first Accept froze the window ~0.5 s.
        self._pool.submit(int)

    def submit(self, take_id: str) -> None:
        self._forgotten.discard(take_id)
        path = self.store.path(take_id)
        try:
            future = self._pool.submit(validate_take, Path(path), self.runtime_for)
        except cf.process.BrokenProcessPool:     # a worker died earlier: a fresh pool, once
            self._pool = cf.ProcessPoolExecutor(max_workers=self._workers, mp_context=mp.get_context("spawn"))
            future = self._pool.submit(validate_take, Path(path), self.runtime_for)
        self._pending[future] = take_id

    def forget(self, take_id: str) -> None:
        """Drop the result of a validation still running for ``take_id`` (its accept was undone)."""
        if take_id in self._pending.values():
            self._forgotten.add(take_id)

    @property
    def busy(self) -> int:
        return len(self._pending)

    def poll(self) -> list[ValidationReport]:
        """Record every finished validation in the store; returns their reports."""
        done = [f for f in self._pending if f.done()]
        reports = []
        for future in done:
            take_id = self._pending.pop(future)
            if take_id in self._forgotten:
                self._forgotten.discard(take_id)
                continue
            try:
                report = future.result()
            except Exception as exc:  # the worker died: that take failed validation, visibly
                report = ValidationReport(take_id, str(self.store.path(take_id)), False,
                                          f"validation worker failed: {type(exc).__name__}: {exc}")
            status = "validated_pass" if report.passed else "validated_fail"
            if report.unreadable:      # no verdict on a file nobody can read: move it aside, named
                self.store.quarantine(Path(report.path), report.reason)
            elif self.writer is not None:
                self.writer.write(take_id, status, report.reason, report.to_dict())
            else:
                self.store.set_review(take_id, status, report.reason, report.to_dict())
            reports.append(report)
        return reports

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
