"""Exact normalisation statistics of an exported dataset, in the ``meta/stats.json`` lerobot reads.

lerobot's own statistics are wrong for training on these datasets: its per-episode variance is
``E[x^2] - E[x]^2`` in float32 (a joint held near 1.5 rad with std 1e-3 gets std 0, so its
normalised values reach 1e5) and its merged quantiles are count-weighted averages of per-episode
quantiles (off by most of a channel's range on a task mixture). So after lerobot has written
``stats.json`` (``save_episode`` and ``aggregate_datasets`` both do), the export replaces the entries
of every float32 data feature with exact ones computed here from the dataset's own parquet rows:

- ``count``, ``min``, ``max``; ``mean`` and ``std`` (population) accumulated in float64 with
  Chan's parallel update (no cancellation);
- ``q01 q10 q50 q90 q99`` (lerobot's ``DEFAULT_QUANTILES``; its normalisers read q01/q99 and
  q10/q90) exact over all frames (:mod:`recordings.exact_quantiles`), equal to ``numpy.quantile``;
- **safe std**: a channel whose exact std is below ``MIN_STD`` (it never moves, or only by float
  noise) gets ``std = SAFE_STD = 1.0``, so MEAN_STD normalisation only centres it instead of
  dividing by ~0 (lerobot adds just 1e-8). Its quantiles, min and max stay exact (lerobot's
  QUANTILES / MIN_MAX modes already guard a zero range). The raw std stays in
  ``bidex_stats.json``.

Video features and lerobot's bookkeeping columns (index, timestamps, ...; no policy normalises
them) keep lerobot's entries. Per-task statistics, in the same schema, go to
``meta/bidex_stats.json`` (lerobot has no per-task slot in ``stats.json``).
"""
from __future__ import annotations

import json
from pathlib import Path
from collections.abc import Iterator

import numpy as np

from recordings.exact_quantiles import PASSES, RankSelector, lerp, order_ranks, sortable_keys
from recordings.errors import RecordingsError

QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)      # lerobot.datasets.compute_stats.DEFAULT_QUANTILES (pinned by a test)
MIN_STD = 1e-6
SAFE_STD = 1.0
MIXTURE = "__mixture__"


def quantile_key(q: float) -> str:
    """lerobot's name for a quantile: 0.01 -> "q01", 0.5 -> "q50"."""
    return f"q{int(round(q * 100)):02d}"


class ExactChannelStats:
    """Moments and exact quantiles of one (group, feature) over ``PASSES`` passes of its rows."""

    def __init__(self, channels: int):
        self.channels = channels
        self.count = 0
        self.mean = np.zeros(channels)
        self.m2 = np.zeros(channels)
        self.min = np.full(channels, np.inf)
        self.max = np.full(channels, -np.inf)
        self.selector = RankSelector(channels)

    def update(self, batch: np.ndarray, first_pass: bool) -> None:
        batch = np.asarray(batch, np.float32).reshape(-1, self.channels)
        if batch.shape[0] == 0:
            return
        if first_pass:
            self._moments(batch.astype(np.float64))
        self.selector.count(sortable_keys(batch))

    def _moments(self, batch: np.ndarray) -> None:
        n = batch.shape[0]
        b_mean = batch.mean(axis=0)
        b_m2 = ((batch - b_mean) ** 2).sum(axis=0)
        total = self.count + n
        delta = b_mean - self.mean
        self.mean = self.mean + delta * n / total
        self.m2 = self.m2 + b_m2 + delta ** 2 * self.count * n / total
        self.min = np.minimum(self.min, batch.min(axis=0))
        self.max = np.maximum(self.max, batch.max(axis=0))
        self.count = total

    def finish_pass(self) -> None:
        if self.selector.level == 0:
            lower, upper, _ = order_ranks(self.count, QUANTILES)
            self.selector.set_ranks(np.concatenate([lower, upper]))
        self.selector.finish_pass()

    def result(self) -> dict:
        """lerobot's keys (safe std; ``count`` an int) plus ``std_raw`` and ``std_floored``
        (the channel indices whose std was made safe)."""
        lower, upper, frac = order_ranks(self.count, QUANTILES)
        stat = self.selector.values()
        std = np.sqrt(self.m2 / self.count)
        floored = std < MIN_STD
        out = {"count": int(self.count), "mean": self.mean.tolist(), "std": np.where(floored, SAFE_STD, std).tolist(),
               "min": self.min.tolist(), "max": self.max.tolist()}
        for q, lo, hi, t in zip(QUANTILES, lower, upper, frac):
            out[quantile_key(q)] = lerp(stat[int(lo)], stat[int(hi)], t).tolist()
        out["std_raw"] = std.tolist()
        out["std_floored"] = np.flatnonzero(floored).tolist()
        return out


def compute_group_stats(batches, widths: dict[str, int]) -> dict[str, dict[str, dict]]:
    """``batches()`` yields ``(task_id, {feature: (n, C) float32})`` over every row, afresh per
    call; returns ``{group: {feature: stats}}`` for each task and for ``MIXTURE``."""
    groups: dict[str, dict[str, ExactChannelStats]] = {}
    for level in range(PASSES):
        for task_id, arrays in batches():
            for group in (task_id, MIXTURE):
                if group not in groups:
                    if level:
                        raise RecordingsError(f"statistics: group {group!r} appeared after the first pass")
                    groups[group] = {k: ExactChannelStats(w) for k, w in widths.items()}
                for key, stats in groups[group].items():
                    stats.update(arrays[key], first_pass=level == 0)
        for group in groups.values():
            for stats in group.values():
                stats.finish_pass()
    if MIXTURE not in groups:
        raise RecordingsError("statistics: the dataset has no frames")
    return {g: {k: s.result() for k, s in feats.items()} for g, feats in groups.items()}


def exact_features(features: dict) -> dict[str, int]:
    """The float32 data features (name -> channels) that get exact statistics."""
    bookkeeping = {"timestamp", "frame_index", "episode_index", "index", "task_index"}
    return {k: int(np.prod(f["shape"])) for k, f in features.items()
            if f["dtype"] == "float32" and k not in bookkeeping}


def parquet_batches(root: Path, widths: dict[str, int], episode_tasks: list[str]) -> Iterator[tuple[str, dict]]:
    """The dataset's rows file by file, split by task (episode index -> task id)."""
    import pyarrow.parquet as pq

    files = sorted((Path(root) / "data").glob("chunk-*/file-*.parquet"))
    tasks = np.asarray(episode_tasks)
    for path in files:
        table = pq.read_table(path, columns=["episode_index", *widths])
        episodes = table.column("episode_index").to_numpy()
        arrays = {k: _column(table, k, w) for k, w in widths.items()}
        for task in np.unique(tasks[episodes]):
            rows = tasks[episodes] == task
            yield str(task), {k: a[rows] for k, a in arrays.items()}


def _column(table, key: str, width: int) -> np.ndarray:
    column = table.column(key).combine_chunks()
    values = column.flatten() if hasattr(column, "flatten") else column
    return np.asarray(values.to_numpy(zero_copy_only=False), np.float32).reshape(-1, width)


def lerobot_entry(stats: dict) -> dict:
    """Only the keys lerobot's ``stats.json`` carries (what its loaders and normalisers read);
    lerobot stores ``count`` as a one-element list."""
    out = {k: stats[k] for k in ("min", "max", "mean", "std", *map(quantile_key, QUANTILES))}
    return {**out, "count": [stats["count"]]}


def write_exact_stats(root: Path, features: dict, episode_tasks: list[str]) -> dict:
    """Replace ``meta/stats.json``'s data features with exact statistics (the mixture) and write
    ``meta/bidex_stats.json`` (mixture and per task, with ``std_raw``); returns the latter."""
    root = Path(root)
    widths = exact_features(features)
    groups = compute_group_stats(lambda: parquet_batches(root, widths, episode_tasks), widths)
    path = root / "meta" / "stats.json"
    stats = json.loads(path.read_text()) if path.exists() else {}
    stats.update({k: lerobot_entry(v) for k, v in groups[MIXTURE].items()})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(stats, indent=4))
    tmp.replace(path)
    side = {"mixture": groups[MIXTURE], "tasks": {g: v for g, v in sorted(groups.items()) if g != MIXTURE},
            "quantiles": list(QUANTILES), "min_std": MIN_STD, "safe_std": SAFE_STD}
    for group in (side["mixture"], *side["tasks"].values()):
        for entry in group.values():             # the names bidex_stats.json has always had
            entry["p01"], entry["p99"], entry["exact_percentiles"] = entry["q01"], entry["q99"], True
    (root / "meta" / "bidex_stats.json").write_text(json.dumps(side))
    return side
