"""Logging for the headset server that can never slow it down or stop it.

A bad message must cost a counter increment, not a traceback: a 400-digit integer used to log a
~900-byte traceback per message, and with stderr a pipe nobody reads, the server thread blocked
in ``write()`` after ~65 messages and the headset froze. Here:

* each kind of event (its ``key``) is logged at most once per ``interval`` seconds, one line, no
  traceback; the next line of that kind says how many were suppressed in between;
* lines are handed to a daemon thread through a bounded queue: when stderr blocks only that
  thread waits, and lines beyond the queue are discarded (counted in ``discarded``).

The websockets library and asyncio log through :meth:`QuietLog.adapter` / :meth:`exception_handler`
so nothing the server thread runs writes to a stream itself.
"""
from __future__ import annotations

import logging
import queue
import sys
import threading
import time
from collections.abc import Callable


class QuietLog:
    def __init__(self, logger: logging.Logger, interval: float = 10.0, max_pending: int = 100,
                 clock: Callable[[], float] = time.monotonic):
        self.logger, self.interval, self._clock = logger, float(interval), clock
        self._queue: queue.Queue[tuple[int, str]] = queue.Queue(max_pending)
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}          # key -> when a line of that kind was last queued
        self._held: dict[str, int] = {}            # key -> events suppressed since then
        self._worker: threading.Thread | None = None
        self.suppressed = 0
        self.discarded = 0

    def event(self, key: str, message: str, level: int = logging.WARNING) -> bool:
        """Log ``message`` unless an event of kind ``key`` was logged less than ``interval`` ago;
        True when the line was queued. Never blocks."""
        if not self.logger.isEnabledFor(level):
            return False
        now = self._clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                self._held[key] = self._held.get(key, 0) + 1
                self.suppressed += 1
                return False
            self._last[key] = now
            held = self._held.pop(key, 0)
        if held:
            message += f" ({held} more like this in the last {self.interval:.0f} s not logged)"
        return self._put(level, message)

    def _put(self, level: int, message: str) -> bool:
        self._start_worker()
        try:
            self._queue.put_nowait((level, message))
            return True
        except queue.Full:             # stderr is not being read: drop rather than wait
            with self._lock:
                self.discarded += 1
            return False

    def _start_worker(self) -> None:
        if self._worker is None:
            with self._lock:
                if self._worker is None:
                    self._worker = threading.Thread(target=self._drain, name="headset-log", daemon=True)
                    self._worker.start()

    def _drain(self) -> None:
        while True:
            level, message = self._queue.get()
            try:
                self.logger.log(level, message)
            except Exception:  # noqa: BLE001, S110 - a broken handler must not end the logging thread
                pass

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait (tests, shutdown) until queued lines were handed to the logger; False on timeout."""
        end = self._clock() + timeout
        while not self._queue.empty():
            if self._clock() > end:
                return False
            time.sleep(0.01)
        return True

    def adapter(self) -> logging.LoggerAdapter:
        """A logger for libraries (websockets): their lines go through :meth:`event`, keyed by the
        unformatted message, with any exception reduced to one line."""
        return _Adapter(self)

    def exception_handler(self, loop, context: dict) -> None:
        """An asyncio loop exception handler (the default one logs tracebacks synchronously)."""
        exc = context.get("exception")
        text = context.get("message", "asyncio error") + (f": {_one_line(exc)}" if exc else "")
        self.event(f"asyncio:{context.get('message', '')}", f"headset server: {text}", logging.ERROR)


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:160]}"


class _Adapter(logging.LoggerAdapter):
    def __init__(self, quiet: QuietLog):
        super().__init__(quiet.logger, {})
        self.quiet = quiet

    def log(self, level, msg, *args, exc_info=None, **kwargs) -> None:
        if not self.isEnabledFor(level):
            return
        try:
            text = str(msg) % args if args else str(msg)
        except (TypeError, ValueError):
            text = f"{msg} {args}"
        if exc_info:
            exc = exc_info if isinstance(exc_info, BaseException) else (
                exc_info[1] if isinstance(exc_info, tuple) else sys.exc_info()[1])
            if exc is not None:
                text += f": {_one_line(exc)}"
        self.quiet.event(f"lib:{msg}", text, level)
