"""Run one function over many items: in this process, in local worker processes, or as Ray tasks.

Used by validation and export alike (both parallelise per take). One item's failure never stops
the batch: every item gets an :class:`ItemResult` (in input order) with either its value or the
error text. ``fn`` and the items must be picklable (a module-level function and plain data).
"""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
import time
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable, Iterable

from teleop.core.errors import TeleopError

# A worker process that dies (segfault, OOM kill) takes every in-flight item with it; those are
# retried this many times in a fresh pool before being reported as failed.
POOL_RETRIES = 1


@dataclass(frozen=True)
class ItemResult:
    index: int                 # position in the input
    ok: bool
    value: Any = None
    error: str = ""            # "ExceptionType: message" when not ok
    seconds: float = 0.0


@dataclass(frozen=True)
class BatchSummary:
    total: int
    ok: int
    failed: int
    seconds: float
    backend: str               # "inline", "processes:N" or "ray:ADDRESS"


# Reports from inside an item (e.g. frames done) to the driver: ``report(payload)`` in the worker
# reaches ``run_batch(..., reports=fn)`` as ``fn(index, payload)`` in the driver. The channel is a
# queue installed per worker process (local pools), a Ray queue actor (Ray) or a direct call
# (inline). Reporting is best effort: it never fails an item.
_CHANNEL: Any = None
_INDEX: int | None = None


def report(payload: Any) -> None:
    """Send ``payload`` to the driver's ``reports`` callback (no-op outside a reporting batch)."""
    if _CHANNEL is None or _INDEX is None:
        return
    try:
        _CHANNEL.put((_INDEX, payload))
    except Exception:  # noqa: BLE001 - progress must never break the work
        pass


def _install_channel(channel: Any) -> None:
    global _CHANNEL
    _CHANNEL = channel


def _call(fn: Callable, index: int, item: Any, channel: Any = None) -> ItemResult:
    """Run one item, turning any exception into a failed result (runs inside the worker)."""
    global _CHANNEL, _INDEX
    if channel is not None:
        _CHANNEL = channel
    _INDEX = index
    t0 = time.perf_counter()
    try:
        return ItemResult(index, True, fn(item), seconds=time.perf_counter() - t0)
    except Exception as exc:  # noqa: BLE001 - the batch must survive any one item
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ItemResult(index, False, error=detail, seconds=time.perf_counter() - t0)
    finally:
        _INDEX = None


class _Direct:
    """The inline channel: a report is delivered at once, in the caller's thread."""

    def __init__(self, deliver: Callable[[int, Any], None]):
        self.deliver = deliver

    def put(self, message) -> None:
        self.deliver(*message)


def _drain_queue(q, deliver: Callable[[int, Any], None] | None) -> None:
    if q is None or deliver is None:
        return
    while True:
        try:
            index, payload = q.get_nowait()
        except Exception:  # noqa: BLE001 - queue.Empty, or a channel already closed
            return
        deliver(index, payload)


class _Progress:
    """A tqdm bar on stderr when ``enabled`` is True; ``enabled`` may instead be a callback
    ``fn(done, total, failed)`` (a GUI's progress bar); otherwise silent. ``on_result(result)``
    sees every result the moment it is known (so callers can persist it before the batch ends)."""

    def __init__(self, total: int, desc: str, enabled, on_result: Callable[[ItemResult], None] | None = None):
        self._bar = None
        self._on_result = on_result
        self._callback = enabled if callable(enabled) else None
        self.total, self.done = total, 0
        if enabled is True:
            try:
                from tqdm import tqdm
                self._bar = tqdm(total=total, desc=desc, unit="item", file=sys.stderr, dynamic_ncols=True)
            except ImportError:
                pass
        self.failed = 0

    def update(self, result: ItemResult) -> None:
        self.failed += not result.ok
        self.done += 1
        if self._on_result is not None:
            self._on_result(result)
        if self._callback is not None:
            self._callback(self.done, self.total, self.failed)
        if self._bar is not None:
            self._bar.set_postfix(failed=self.failed, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_batch(fn: Callable[[Any], Any], items: Iterable[Any], workers: int = 1, ray_address: str | None = None,
              progress: bool | Callable = True, desc: str = "",
              reports: Callable[[int, Any], None] | None = None,
              on_result: Callable[[ItemResult], None] | None = None) -> list[ItemResult]:
    """Apply ``fn`` to every item; returns one :class:`ItemResult` per item, in input order.

    ``workers <= 1`` and no ``ray_address``: runs in this process. ``workers > 1``: that many
    local processes (spawned, so each gets its own GL/MuJoCo state). ``ray_address``: Ray tasks
    on that cluster (``"local"`` starts a local instance with ``workers`` CPUs; ``"auto"`` joins
    the running cluster; an already initialised Ray session is reused).

    ``reports(index, payload)`` receives, in this thread, what items send with :func:`report`
    while they run (a Ray task retried after its node died reports again from its start);
    ``on_result(result)`` each item's result in this process as soon as it is known, in completion
    order.
    """
    items = list(items)
    if workers < 1:
        raise TeleopError(f"--workers must be at least 1 (got {workers})")
    bar = _Progress(len(items), desc, progress, on_result)
    try:
        if ray_address:
            return _run_ray(fn, items, workers, ray_address, bar, reports)
        if workers == 1 or len(items) <= 1:
            direct = _Direct(reports) if reports is not None else None
            return [_report(bar, _call(fn, i, item, direct)) for i, item in enumerate(items)]
        return _run_processes(fn, items, workers, bar, reports)
    finally:
        bar.close()


def summarize(results: list[ItemResult], seconds: float, backend: str) -> BatchSummary:
    ok = sum(r.ok for r in results)
    return BatchSummary(len(results), ok, len(results) - ok, round(seconds, 3), backend)


def backend_name(workers: int, ray_address: str | None) -> str:
    return f"ray:{ray_address}" if ray_address else ("inline" if workers <= 1 else f"processes:{workers}")


def _report(bar: _Progress, result: ItemResult) -> ItemResult:
    bar.update(result)
    return result


def _run_processes(fn, items: list, workers: int, bar: _Progress, reports=None) -> list[ItemResult]:
    results: list[ItemResult | None] = [None] * len(items)
    pending = deque((i, 0) for i in range(len(items)))          # (index, attempts so far)
    ctx = multiprocessing.get_context("spawn")
    channel = ctx.Queue() if reports is not None else None      # handed to workers as they start
    try:
        while pending:
            with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_install_channel,
                                        initargs=(channel,)) as pool:
                pending = _drain(pool, fn, items, pending, workers, results, bar, channel, reports)
        _drain_queue(channel, reports)
    finally:
        if channel is not None:
            channel.close()
    return results


def _drain(pool, fn, items, pending: deque, workers: int, results: list, bar: _Progress, channel=None,
           reports=None) -> deque:
    """Keep ``workers`` items in flight; returns the items to retry if the pool broke."""
    inflight: dict[cf.Future, tuple[int, int]] = {}
    retry: deque = deque()
    broken = False
    while pending or inflight:
        while pending and len(inflight) < workers and not broken and _may_join(pending[0], inflight):
            i, attempts = pending.popleft()
            inflight[pool.submit(_call, fn, i, items[i])] = (i, attempts)
        if not inflight:
            break       # the pool broke: the caller starts a fresh one for what is left
        done, _ = cf.wait(inflight, timeout=0.2 if reports else None, return_when=cf.FIRST_COMPLETED)
        _drain_queue(channel, reports)
        for future in done:
            i, attempts = inflight.pop(future)
            try:
                results[i] = _report(bar, future.result())
            except cf.process.BrokenProcessPool:
                broken = True
                if attempts < POOL_RETRIES:
                    retry.append((i, attempts + 1))
                else:
                    died = ItemResult(i, False, error="worker process died (crash or out of memory)")
                    results[i] = _report(bar, died)
    return retry + pending


def _may_join(item: tuple[int, int], inflight: dict) -> bool:
    """A retried item (it was in flight when a worker died) runs alone, so a second death is
    its own and an innocent item that shared the broken pool is never blamed."""
    return not inflight or (item[1] == 0 and all(a == 0 for _, a in inflight.values()))


def _run_ray(fn, items: list, workers: int, address: str, bar: _Progress, reports=None) -> list[ItemResult]:
    try:
        import ray
    except ImportError as exc:
        raise TeleopError("--ray needs the 'ray' package: pip install 'bidex-teleop[cluster]'") from exc
    started = not ray.is_initialized()
    if started:
        if address == "local":
            # Like spawned processes, local Ray workers get this process's import path.
            path = os.pathsep.join(p for p in sys.path if p)
            ray.init(num_cpus=max(workers, 1), include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": path}})
        else:
            ray.init(address=address, log_to_driver=False)
    try:
        return _ray_results(ray, fn, items, bar, reports)
    finally:
        if started:      # a session we opened (a private local instance, or a cluster connection)
            ray.shutdown()


def _ray_channel(ray):
    """A Ray queue actor on the driver's node (it must outlive any worker node), using no CPU."""
    from ray.util.queue import Queue
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return Queue(actor_options={"num_cpus": 0, "scheduling_strategy": here})


def _drain_ray(channel, reports) -> None:
    if channel is None:
        return
    try:
        messages = channel.get_nowait_batch(channel.qsize())
    except Exception:  # noqa: BLE001 - progress is best effort
        return
    for index, payload in messages:
        reports(index, payload)


def _ray_results(ray, fn, items: list, bar: _Progress, reports=None) -> list[ItemResult]:
    # Ray retries a task whose worker or node died (max_retries, default 3): an item is then
    # run again from its start; items must be idempotent (export shards are: atomic renames).
    remote = ray.remote(num_cpus=1)(_call)
    channel = _ray_channel(ray) if reports is not None else None
    refs = {remote.remote(fn, i, item, channel): i for i, item in enumerate(items)}
    results: list[ItemResult | None] = [None] * len(items)
    waiting = list(refs)
    while waiting:
        done, waiting = ray.wait(waiting, num_returns=1, timeout=0.2 if reports else None)
        _drain_ray(channel, reports)
        if not done:
            continue
        i = refs[done[0]]
        try:
            results[i] = ray.get(done[0])
        except Exception as exc:  # noqa: BLE001 - a lost worker / node fails only its item
            results[i] = ItemResult(i, False, error=_ray_error(exc))
        bar.update(results[i])
    _drain_ray(channel, reports)
    return results


def _ray_error(exc: BaseException) -> str:
    """Ray wraps the real error in a long banner; keep its type and the root cause's last line."""
    cause = getattr(exc, "cause", None) or exc
    lines = [ln for ln in str(cause).splitlines() if ln.strip()]
    return f"{type(cause).__name__}: {lines[-1] if lines else ''}"
