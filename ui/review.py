"""Reviewing a take: replay from its recorded states with play / pause / seek at any speed."""
from __future__ import annotations

import time

import numpy as np
from PyQt6.QtCore import QObject, QTimer, pyqtSignal

from recordings.replay import Replayer
from recordings.takefile import Take, read_take


def prepare(path) -> tuple[Take, Replayer]:
    """Read a take and build its replayer (compiling its model): ~0.1 s, so off the UI thread."""
    take = read_take(path)
    return take, Replayer(take, mode="states")


def latch_marks(take: Take) -> list[tuple[int, str]]:
    """(first tick each subtask was latched, its name), in tick order."""
    latched = take.arrays["subtasks"]
    marks = []
    for k, name in enumerate(take.meta.subtask_names):
        ticks = np.flatnonzero(latched[:, k])
        if ticks.size:
            marks.append((int(ticks[0]) + 1, name))
    return sorted(marks)


class ReviewController(QObject):
    position_changed = pyqtSignal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.replayer: Replayer | None = None
        self.take: Take | None = None
        self.speed = 1.0
        self._timer = QTimer(self)
        self._timer.setInterval(20)
        self._timer.timeout.connect(self._advance)
        self._play_from = (0.0, 0)

    def load(self, take: Take, replayer: Replayer | None = None) -> None:
        """Review ``take`` (``replayer``: one built off the UI thread, see :func:`prepare`)."""
        self.stop()
        self.take = take
        self.replayer = replayer or Replayer(take, mode="states")
        self.position_changed.emit(0)

    def close(self) -> None:
        self.stop()
        self.replayer, self.take = None, None

    def qpos(self):
        return None if self.replayer is None else self.replayer.sim.data.qpos.copy()

    @property
    def playing(self) -> bool:
        return self._timer.isActive()

    def play(self) -> None:
        if self.replayer is None:
            return
        if self.replayer.tick >= self.replayer.length:
            self.seek(0)
        self._play_from = (time.monotonic(), self.replayer.tick)
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def toggle(self) -> None:
        self.stop() if self.playing else self.play()

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        if self.playing:
            self.play()

    def seek(self, tick: int) -> None:
        if self.replayer is None:
            return
        self.replayer.seek(tick)
        if self.playing:
            self._play_from = (time.monotonic(), self.replayer.tick)
        self.position_changed.emit(self.replayer.tick)

    def back(self, seconds: float) -> None:
        if self.replayer is not None:
            self.seek(max(0, self.replayer.tick - int(round(seconds * self.take.meta.control_hz))))

    @property
    def tick(self) -> int:
        return self.replayer.tick if self.replayer is not None else 0

    def _advance(self) -> None:
        start_time, start_tick = self._play_from
        target = start_tick + self.replayer.ticks_for(time.monotonic() - start_time, self.speed)
        target = min(target, self.replayer.length)
        if target != self.replayer.tick:
            self.replayer.seek(target)
            self.position_changed.emit(self.replayer.tick)
        if target >= self.replayer.length:
            self.stop()
