"""Validate many takes of a store (local processes or Ray) and record the results in it.

Each result is written to its take file and the index the moment its replay finishes, so a kill
loses only the takes still in flight. A take whose file cannot be read is quarantined (after this
process confirms it cannot read it either) and reported by name; the batch carries on.
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

from recordings.batch import ItemResult, backend_name, run_batch
from recordings.errors import TakeError
from recordings.store import TakeStore
from recordings.takefile import read_take
from recordings.validate import ValidationReport, task_runtime, validate_take


def _validate_path(path: str, runtime_for=task_runtime) -> dict:
    return validate_take(Path(path), runtime_for).to_dict()


@dataclass(frozen=True)
class ValidationSummary:
    takes: int
    passed: int
    failed: int                                       # validated, and the verdict is fail
    seconds: float
    backend: str
    reports: list = field(default_factory=list)      # ValidationReport dicts
    errors: list = field(default_factory=list)       # {"take_id", "path", "reason", "moved_to"}: not validated

    @property
    def ok(self) -> bool:
        """Every requested take got a verdict (pass or fail)."""
        return not self.errors

    def to_json(self) -> dict:
        return {"takes": self.takes, "passed": self.passed, "failed": self.failed, "seconds": self.seconds,
                "backend": self.backend, "reports": self.reports, "errors": self.errors, "ok": self.ok}


def validate_store(store: TakeStore, take_ids: list[str] | None = None, statuses=("accepted",), workers: int = 1,
                   ray_address: str | None = None, progress: bool = True,
                   runtime_for=task_runtime) -> ValidationSummary:
    """Validate ``take_ids`` (default: every take whose status is in ``statuses``); each result is
    written to its take file and the index as validated_pass / validated_fail as soon as it is known."""
    errors: list[dict] = []
    if take_ids:
        rows = [store.index.get(t) for t in take_ids]
        for take_id, row in zip(take_ids, rows):
            if row is None:
                errors.append({"take_id": take_id, "path": "", "reason": f"no take {take_id!r} in {store.root}",
                               "moved_to": ""})
        rows = [r for r in rows if r is not None]
    else:
        rows = [r for s in statuses for r in store.rows(status=s)]
    t0 = time.perf_counter()
    reports: list[dict] = []

    def record(result: ItemResult) -> None:
        row = rows[result.index]
        if result.ok:
            report = ValidationReport(**result.value)
        else:
            report = ValidationReport(row.take_id, row.path, False, f"validation crashed: {result.error}")
        if report.unreadable or not result.ok:       # no verdict: the status stays, a re-run retries it
            errors.append(_not_validated(store, row, report, crashed=not result.ok))
            return
        try:
            store.set_review(row.take_id, "validated_pass" if report.passed else "validated_fail", report.reason,
                             report.to_dict())
        except TakeError as exc:             # e.g. deleted by another process meanwhile
            errors.append({"take_id": row.take_id, "path": row.path, "reason": f"result not saved: {exc}",
                           "moved_to": ""})
            return
        reports.append(report.to_dict())

    fn = functools.partial(_validate_path, runtime_for=runtime_for)
    run_batch(fn, [r.path for r in rows], workers, ray_address, progress, desc="validate", on_result=record)
    passed = sum(r["passed"] for r in reports)
    failed = sum(not r["passed"] for r in reports)
    return ValidationSummary(passed + failed + len(errors), passed, failed, round(time.perf_counter() - t0, 3),
                             backend_name(workers, ray_address), reports, errors)


def _not_validated(store: TakeStore, row, report: ValidationReport, crashed: bool) -> dict:
    """A take that got no verdict; an unreadable file is quarantined once this process agrees."""
    entry = {"take_id": row.take_id, "path": row.path, "reason": report.reason, "moved_to": ""}
    if crashed:
        return entry
    try:
        read_take(Path(row.path))
        entry["reason"] += " (readable again now: validate it again)"
    except TakeError as exc:
        moved = store.quarantine(Path(row.path), exc.detail)
        entry["moved_to"] = str(moved.moved_to) if moved else ""
        entry["reason"] = exc.detail if moved else f"{exc.detail} (already moved by another process)"
    return entry
