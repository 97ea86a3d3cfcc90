"""The control loop's watchdog, on the UI thread: a loop thread that died is shown and restarted;
one that stopped ticking (a command stuck in a call that blocks) is shown with the command's name.

A stuck thread cannot be stopped from outside and a second loop would tick the same session, so
only a dead loop is restarted; everything that may block runs off the loop thread for that reason.
"""
from __future__ import annotations

import time

from PyQt6.QtCore import QObject, QTimer, pyqtSignal

STALL_S = 1.0          # 25 missed ticks


class LoopWatchdog(QObject):
    problem_changed = pyqtSignal(str)

    def __init__(self, station, interval_ms: int = 250, parent=None):
        super().__init__(parent)
        self.station = station
        self.problem = ""
        self.restarts = 0
        self._sticky_until = 0.0            # a restart stays on screen a moment
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> str:
        loop = self.station.loop
        problem = ""
        if not loop.running and loop.error is not None:
            error = loop.error
            if self.station.restart_loop():
                self.restarts += 1
            problem = f"the control loop died ({type(error).__name__}: {error}); restarted"
            self._sticky_until = time.monotonic() + 5.0
        elif loop.running and time.monotonic() - self.station.heartbeat > STALL_S:
            where = self.station.current or "a tick"
            problem = f"the control loop is stuck in {where} for {time.monotonic() - self.station.heartbeat:.0f} s"
        if not problem and time.monotonic() < self._sticky_until:
            problem = self.problem
        if problem != self.problem:
            self.problem = problem
            self.problem_changed.emit(problem)
        return problem

    def stop(self) -> None:
        self._timer.stop()
