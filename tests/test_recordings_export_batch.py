"""The batch runner (inline, local processes, Ray) and the streaming statistics."""
import os

import numpy as np
import pytest

from recordings.batch import run_batch, summarize
from recordings.errors import RecordingsError
from recordings.stats import ChannelStats, GroupStats
from teleop.core.errors import TeleopError


def square_or_fail(x: int) -> int:
    if x == 3:
        raise ValueError("three is not allowed")
    if x == 5:
        os._exit(9)            # a worker that dies outright (segfault, OOM kill)
    return x * x


def test_inline_batch_survives_an_item_error():
    results = run_batch(square_or_fail, [1, 2, 3, 4], progress=False)
    assert [r.index for r in results] == [0, 1, 2, 3]
    assert [r.value for r in results if r.ok] == [1, 4, 16]
    assert not results[2].ok and results[2].error == "ValueError: three is not allowed"
    s = summarize(results, 1.0, "inline")
    assert (s.total, s.ok, s.failed) == (4, 3, 1)


def test_process_batch_survives_errors_and_a_dead_worker():
    items = [1, 2, 3, 4, 5, 6, 7]
    results = run_batch(square_or_fail, items, workers=2, progress=False)
    by_item = dict(zip(items, results))
    assert [by_item[x].value for x in (1, 2, 4, 6, 7)] == [1, 4, 16, 36, 49]
    assert "three is not allowed" in by_item[3].error
    assert not by_item[5].ok and "worker process died" in by_item[5].error


def test_bad_worker_count_is_refused():
    with pytest.raises(TeleopError, match="at least 1"):
        run_batch(square_or_fail, [1], workers=0, progress=False)


def test_ray_batch_on_a_local_instance():
    ray = pytest.importorskip("ray", reason="ray is not installed (optional extra 'cluster')")
    try:
        results = run_batch(square_or_fail, [1, 2, 3, 4], workers=2, ray_address="local", progress=False)
    finally:
        ray.shutdown()
    assert [r.value for r in results] == [1, 4, None, 16]
    assert "three is not allowed" in results[2].error


def test_channel_stats_exact_and_streamed():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, (1000, 4))
    stats = ChannelStats("t", 4)
    for chunk in np.array_split(data, 7):
        stats.update(chunk)
    r = stats.result()
    assert r["count"] == 1000 and r["exact_percentiles"]
    np.testing.assert_allclose(r["mean"], data.mean(0), rtol=1e-10)
    np.testing.assert_allclose(r["std"], data.std(0), rtol=1e-10)
    np.testing.assert_allclose(r["p01"], np.percentile(data.astype(np.float32), 1, axis=0), rtol=1e-6)
    np.testing.assert_allclose(r["max"], data.max(0))


def test_reservoir_percentiles_are_close_and_deterministic():
    data = np.random.default_rng(1).uniform(0, 1, (20000, 2))
    results = []
    for _ in range(2):
        stats = ChannelStats("mix", 2, reservoir=2000)
        for chunk in np.array_split(data, 13):
            stats.update(chunk)
        results.append(stats.result())
    assert results[0] == results[1] and not results[0]["exact_percentiles"]
    np.testing.assert_allclose(results[0]["p99"], 0.99, atol=0.01)
    np.testing.assert_allclose(results[0]["p01"], 0.01, atol=0.01)


def test_group_stats_and_empty_group():
    g = GroupStats({"a": 2})
    g.update("t1", {"a": np.ones((3, 2))})
    g.update("t2", {"a": np.zeros((1, 2))})
    r = g.result()
    assert r["tasks"]["t1"]["a"]["mean"] == [1.0, 1.0] and r["mixture"]["a"]["mean"] == [0.75, 0.75]
    with pytest.raises(RecordingsError, match="no frames"):
        ChannelStats("empty", 3).result()
