"""Exact per-channel quantiles of float32 data that never fits in memory at once.

Radix selection on the float32 bit patterns: a float32 maps to a uint32 key with the same order
(flip every bit of negatives, the sign bit of positives), and the k-th smallest key is found one
byte at a time, most significant first. Pass 1 counts the top byte of every value; each further
pass counts the next byte of only the values whose higher bytes match the prefix found so far.
Four passes over the data give the exact order statistics every quantile needs; memory is 256
counters per (channel, target), whatever the number of frames.

Quantiles interpolate linearly between order statistics exactly as ``numpy.quantile`` (method
"linear", float64) does, so the result equals ``np.quantile(all_frames.astype(np.float64), q)``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

Batches = Callable[[], Iterable[np.ndarray]]      # each call iterates over (n, C) float32 batches afresh
PASSES = 4                                        # one byte of the 32-bit key per pass


def sortable_keys(values: np.ndarray) -> np.ndarray:
    """uint32 keys ordered like the float32 ``values`` (no NaN expected)."""
    bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
    negative = (bits >> 31).astype(bool)
    return np.where(negative, ~bits, bits | np.uint32(0x80000000))


def keys_to_values(keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys, np.uint32)
    positive = (keys >> 31).astype(bool)
    bits = np.where(positive, keys & np.uint32(0x7FFFFFFF), ~keys)
    return bits.view(np.float32)


def order_ranks(count: int, quantiles: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower ranks, upper ranks, fractions) that numpy's linear method interpolates between."""
    virtual = np.asarray(quantiles, np.float64) * (count - 1)
    lower = np.floor(virtual)
    upper = np.minimum(lower + 1, count - 1)
    return lower.astype(np.int64), upper.astype(np.int64), virtual - lower


def lerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy's own interpolation (``numpy.lib._function_base_impl._lerp``): exact at both ends."""
    diff = b - a
    out = a + diff * t
    return np.where(t >= 0.5, b - diff * (1 - t), out)


class RankSelector:
    """Finds given order statistics (0-based ranks) of every channel over repeated passes."""

    def __init__(self, channels: int, ranks: np.ndarray | None = None):
        self.channels = channels
        self.level = 0
        self._counts: dict[tuple[int, int], np.ndarray] = {}
        # Per (channel, rank): the key prefix fixed so far and the rank within that prefix. The
        # first pass counts every value's top byte, which needs no ranks: they may be set after
        # it (``set_ranks``), once the number of values is known, which saves a pass.
        self.prefix = np.zeros((channels, 1), np.uint32)
        if ranks is not None:
            self.set_ranks(ranks)

    def set_ranks(self, ranks: np.ndarray) -> None:
        if self.level:
            raise ValueError("ranks must be set before the first pass is finished")
        self.ranks = np.unique(np.asarray(ranks, np.int64))
        self.prefix = np.zeros((self.channels, self.ranks.size), np.uint32)
        self.remaining = np.broadcast_to(self.ranks, (self.channels, self.ranks.size)).copy()

    def _shift(self) -> int:
        return 8 * (PASSES - 1 - self.level)

    def count(self, batch_keys: np.ndarray) -> None:
        """Count one batch (n, C) of keys for the current pass."""
        shift = self._shift()
        for c in range(self.channels):
            col = batch_keys[:, c]
            for prefix in np.unique(self.prefix[c]):
                if self.level == 0:
                    chosen = col
                else:
                    chosen = col[(col >> np.uint32(shift + 8)) == (prefix >> np.uint32(shift + 8))]
                digits = ((chosen >> np.uint32(shift)) & np.uint32(0xFF)).astype(np.int64)
                hist = np.bincount(digits, minlength=256)
                key = (c, int(prefix))
                self._counts[key] = self._counts[key] + hist if key in self._counts else hist

    def finish_pass(self) -> None:
        """Fix this pass's byte of every target from the counts."""
        shift = self._shift()
        for c in range(self.channels):
            for j in range(self.ranks.size):
                hist = self._counts.get((c, int(self.prefix[c, j])))
                cum = np.cumsum(hist)
                digit = int(np.searchsorted(cum, self.remaining[c, j], side="right"))
                self.remaining[c, j] -= int(cum[digit - 1]) if digit else 0
                self.prefix[c, j] |= np.uint32(digit << shift)
        self._counts = {}
        self.level += 1

    @property
    def done(self) -> bool:
        return self.level == PASSES

    def values(self) -> dict[int, np.ndarray]:
        """rank -> (C,) float64 order statistic."""
        return {int(r): keys_to_values(self.prefix[:, j]).astype(np.float64) for j, r in enumerate(self.ranks)}


def exact_quantiles(batches: Batches, channels: int, count: int, quantiles: tuple[float, ...]) -> np.ndarray:
    """(len(quantiles), C) exact quantiles over all rows of ``batches`` (``count`` rows in all)."""
    lower, upper, frac = order_ranks(count, quantiles)
    selector = RankSelector(channels, np.concatenate([lower, upper]))
    while not selector.done:
        for batch in batches():
            if len(batch):
                selector.count(sortable_keys(np.asarray(batch, np.float32).reshape(-1, channels)))
        selector.finish_pass()
    stat = selector.values()
    return np.stack([lerp(stat[int(lo)], stat[int(hi)], t) for lo, hi, t in zip(lower, upper, frac)])
