"""The batch runner (inline, local processes, Ray)."""
import os

import pytest

from recordings.batch import run_batch, summarize
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
