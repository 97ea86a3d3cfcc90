"""Per-frame export progress with an estimate of the time left: a terminal bar and/or a callback.

Workers report ``(frames done, frames of the take)`` for their take after every encoded frame
(:func:`recordings.batch.report`); the driver keeps the latest count per take, so a take that
restarts (a Ray task retried after its node died) counts from zero again instead of twice. A
finished take counts as complete, a failed one as nothing; reused shards count at once but not
towards the rate, so the estimate reflects the work that is left.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass
from collections.abc import Callable

import h5py

from recordings.takefile import DEMO

MIN_INTERVAL_S = 0.25          # callbacks at most this often (a GUI needs no more), plus every finished take


@dataclass(frozen=True)
class ExportProgress:
    frames_done: int
    frames_total: int
    takes_done: int
    takes_total: int
    failed: int
    elapsed_s: float
    frames_per_s: float            # frames encoded by this run per second
    eta_s: float | None            # None until there is a rate to extrapolate

    def to_json(self) -> dict:
        # "done"/"total" are the frame counts: what a progress bar shows (the export dialog reads them)
        return {"done": self.frames_done, "total": self.frames_total, **asdict(self)}


def take_frames(path: str) -> int:
    """Ticks in a take file, from the dataset's shape (no array is read)."""
    try:
        with h5py.File(path, "r") as h5:
            return int(h5[DEMO]["actions"].shape[0])
    except (OSError, KeyError):
        return 0                   # unreadable: the shard itself reports the error


class FrameProgress:
    """Aggregates reports; drives a tqdm bar (``show``) and/or ``callback(ExportProgress)``."""

    def __init__(self, frames: list[int], show: bool = False, callback: Callable | None = None):
        self.frames = list(frames)
        self.done = [0] * len(frames)
        self.finished = self.failed = self.reused = 0
        self.reused_frames = 0
        self.callback = callback
        self.t0 = time.perf_counter()
        self._last = 0.0
        self._bar = None
        if show:
            try:
                from tqdm import tqdm
                self._bar = tqdm(total=sum(frames), desc="export", unit="frame", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass

    def frame(self, index: int, payload) -> None:
        """A worker's report: ``(frames done, frames of the take)`` for take ``index``."""
        done, _total = payload
        self.done[index] = int(done)
        self._emit(force=False)

    def take(self, index: int, ok: bool, reused: bool = False) -> None:
        self.finished += 1
        self.failed += not ok
        self.done[index] = self.frames[index] if ok else 0
        if ok and reused:
            self.reused += 1
            self.reused_frames += self.frames[index]
        self._emit(force=True)

    def snapshot(self) -> ExportProgress:
        elapsed = time.perf_counter() - self.t0
        done, total = sum(self.done), sum(self.frames)
        worked = max(done - self.reused_frames, 0)
        rate = worked / elapsed if elapsed > 0 else 0.0
        eta = (total - done) / rate if rate > 0 else None
        return ExportProgress(done, total, self.finished, len(self.frames), self.failed, round(elapsed, 3),
                              round(rate, 2), None if eta is None else round(eta, 1))

    def _emit(self, force: bool) -> None:
        now = time.perf_counter()
        if not force and now - self._last < MIN_INTERVAL_S:
            return
        self._last = now
        p = self.snapshot()
        if self._bar is not None:
            self._bar.n = p.frames_done
            self._bar.set_postfix(takes=f"{p.takes_done}/{p.takes_total}", failed=p.failed, refresh=False)
            self._bar.refresh()
        if self.callback is not None:
            self.callback(p)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
