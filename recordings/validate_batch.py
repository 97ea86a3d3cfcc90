"""Validate many takes of a store (local processes or Ray) and record the results in it."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from recordings.batch import backend_name, run_batch
from recordings.store import TakeStore
from recordings.validate import ValidationReport, validate_take


def _validate_path(path: str) -> dict:
    return validate_take(Path(path)).to_dict()


@dataclass(frozen=True)
class ValidationSummary:
    takes: int
    passed: int
    failed: int
    seconds: float
    backend: str
    reports: list = field(default_factory=list)      # ValidationReport dicts

    def to_json(self) -> dict:
        return {"takes": self.takes, "passed": self.passed, "failed": self.failed, "seconds": self.seconds,
                "backend": self.backend, "reports": self.reports}


def validate_store(store: TakeStore, take_ids: list[str] | None = None, statuses=("accepted",), workers: int = 1,
                   ray_address: str | None = None, progress: bool = True) -> ValidationSummary:
    """Validate ``take_ids`` (default: every take whose status is in ``statuses``); each result is
    written to its take file and the index as validated_pass / validated_fail."""
    rows = [store.index.get(t) for t in take_ids] if take_ids else \
        [r for s in statuses for r in store.rows(status=s)]
    rows = [r for r in rows if r is not None]
    t0 = time.perf_counter()
    results = run_batch(_validate_path, [r.path for r in rows], workers, ray_address, progress, desc="validate")
    reports = []
    for row, result in zip(rows, results):
        if result.ok:
            report = ValidationReport(**result.value)
        else:
            report = ValidationReport(row.take_id, row.path, False, f"validation crashed: {result.error}")
        store.set_review(row.take_id, "validated_pass" if report.passed else "validated_fail", report.reason,
                         report.to_dict())
        reports.append(report.to_dict())
    passed = sum(r["passed"] for r in reports)
    return ValidationSummary(len(reports), passed, len(reports) - passed, round(time.perf_counter() - t0, 3),
                             backend_name(workers, ray_address), reports)
