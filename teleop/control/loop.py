"""A real-time loop thread: calls ``tick()`` at a fixed rate, never faster, and measures itself.

Pacing is deadline based (next = previous deadline + period), so one slow tick does not shift
every later tick; if the loop falls more than one period behind it skips ahead instead of
bursting. The loop never sleeps inside ``tick``: whatever it calls must not block.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np


class RealtimeLoop:
    def __init__(self, tick: Callable[[], None], rate_hz: float, name: str = "control-loop",
                 history: int = 250):
        self._tick = tick
        self.period = 1.0 / rate_hz
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.tick_ms: deque[float] = deque(maxlen=history)
        self.late_ticks = 0
        self.error: BaseException | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def stats(self) -> dict[str, float]:
        """Tick duration p50/p99 (ms) over the recent history, and the count of late ticks."""
        if not self.tick_ms:
            return {"tick_ms_p50": 0.0, "tick_ms_p99": 0.0, "late_ticks": self.late_ticks}
        arr = np.fromiter(self.tick_ms, float)
        return {"tick_ms_p50": float(np.percentile(arr, 50)), "tick_ms_p99": float(np.percentile(arr, 99)),
                "late_ticks": self.late_ticks}

    def _run(self) -> None:
        deadline = time.perf_counter()
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                self._tick()
            except BaseException as exc:  # surfaced to the owner instead of dying silently
                self.error = exc
                return
            self.tick_ms.append((time.perf_counter() - start) * 1e3)
            deadline += self.period
            slack = deadline - time.perf_counter()
            if slack < -self.period:
                self.late_ticks += 1
                deadline = time.perf_counter()
            elif slack > 0:
                self._stop.wait(slack)
