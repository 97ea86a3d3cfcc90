"""Normalisation statistics per channel: mean, std, 1st and 99th percentiles, min, max.

Mean and std are exact for any amount of data (Chan's parallel update of count / mean / M2).
Percentiles are exact while a group holds at most ``RESERVOIR`` frames; beyond that they come
from a deterministic uniform reservoir sample of ``RESERVOIR`` frames (seeded by the group
name), so memory stays bounded however many takes are exported.
"""
from __future__ import annotations

import numpy as np

from recordings.errors import RecordingsError
from teleop.core.seeding import stable_rng

RESERVOIR = 200_000     # frames; 2.2 h at 25 Hz, ~150 MB for 188 float32 channels at most


class ChannelStats:
    """Streaming per-channel statistics of (N, C) batches for one group (a task or the mixture)."""

    def __init__(self, name: str, channels: int, reservoir: int = RESERVOIR):
        self.name, self.channels, self.capacity = name, channels, reservoir
        self.count = 0
        self.mean = np.zeros(channels)
        self.m2 = np.zeros(channels)
        self.min = np.full(channels, np.inf)
        self.max = np.full(channels, -np.inf)
        self._sample = np.empty((0, channels), np.float32)
        self._rng = stable_rng("channel-stats", name)

    def update(self, batch: np.ndarray) -> None:
        """Add frames ``batch`` (N, C)."""
        batch = np.asarray(batch, np.float64).reshape(-1, self.channels)
        n = batch.shape[0]
        if n == 0:
            return
        b_mean = batch.mean(axis=0)
        b_m2 = ((batch - b_mean) ** 2).sum(axis=0)
        total = self.count + n
        delta = b_mean - self.mean
        self.mean = self.mean + delta * n / total
        self.m2 = self.m2 + b_m2 + delta ** 2 * self.count * n / total
        self.min = np.minimum(self.min, batch.min(axis=0))
        self.max = np.maximum(self.max, batch.max(axis=0))
        self._reservoir(batch.astype(np.float32))
        self.count = total

    def _reservoir(self, batch: np.ndarray) -> None:
        """Algorithm R, vectorised: row k of the stream replaces a random slot with prob. cap/(k+1)."""
        room = max(0, self.capacity - self._sample.shape[0])
        if room:
            self._sample = np.concatenate([self._sample, batch[:room]])
        rest = batch[room:]
        if rest.shape[0] == 0:
            return
        first = self.count + room                       # stream position of rest[0]
        slots = self._rng.integers(0, np.arange(first, first + rest.shape[0]) + 1)
        keep = slots < self.capacity
        self._sample[slots[keep]] = rest[keep]          # later rows win, as in the sequential algorithm

    def result(self) -> dict[str, list[float] | int]:
        """JSON-ready ``{count, mean, std, p01, p99, min, max, exact_percentiles}``."""
        if self.count == 0:
            raise RecordingsError(f"statistics group {self.name!r} received no frames")
        std = np.sqrt(self.m2 / self.count)
        p01, p99 = np.percentile(self._sample, [1.0, 99.0], axis=0)
        as_list = lambda a: [float(x) for x in a]  # noqa: E731
        return {"count": int(self.count), "mean": as_list(self.mean), "std": as_list(std),
                "p01": as_list(p01), "p99": as_list(p99), "min": as_list(self.min), "max": as_list(self.max),
                "exact_percentiles": self.count <= self.capacity}


class GroupStats:
    """``action`` and ``observation.state`` statistics per task and for the whole mixture."""

    MIXTURE = "__mixture__"

    def __init__(self, widths: dict[str, int], reservoir: int = RESERVOIR):
        self.widths, self.reservoir = dict(widths), reservoir
        self._groups: dict[str, dict[str, ChannelStats]] = {}

    def _group(self, name: str) -> dict[str, ChannelStats]:
        if name not in self._groups:
            self._groups[name] = {key: ChannelStats(f"{name}/{key}", width, self.reservoir)
                                  for key, width in self.widths.items()}
        return self._groups[name]

    def update(self, task_id: str, arrays: dict[str, np.ndarray]) -> None:
        """Add one take's per-frame arrays (key -> (T, C)) to its task and to the mixture."""
        for group in (task_id, self.MIXTURE):
            for key, stats in self._group(group).items():
                stats.update(arrays[key])

    def result(self) -> dict:
        tasks = {name: {k: s.result() for k, s in g.items()} for name, g in sorted(self._groups.items())
                 if name != self.MIXTURE}
        mixture = {k: s.result() for k, s in self._groups[self.MIXTURE].items()} if self._groups else {}
        return {"mixture": mixture, "tasks": tasks}
