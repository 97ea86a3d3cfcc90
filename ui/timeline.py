"""A timeline scrubber for replay: drag to seek, with a mark where each subtask latched."""
from __future__ import annotations

from PyQt6.QtCore import QRectF, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QPainter, QPen
from PyQt6.QtWidgets import QWidget

MARK_COLOURS = ("#43a047", "#1e88e5", "#fb8c00", "#8e24aa", "#e53935", "#00897b", "#6d4c41", "#3949ab")


class Timeline(QWidget):
    seek_requested = pyqtSignal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(36)
        self.length = 0
        self.position = 0
        self.marks: list[tuple[int, str]] = []      # (tick, subtask name)
        self.setMouseTracking(False)

    def set_take(self, length: int, marks: list[tuple[int, str]]) -> None:
        self.length, self.marks, self.position = length, marks, 0
        self.setToolTip("\n".join(f"tick {t}: {name}" for t, name in marks))
        self.update()

    def set_position(self, tick: int) -> None:
        self.position = tick
        self.update()

    def _x(self, tick: int) -> float:
        return 6 + (self.width() - 12) * (tick / max(1, self.length))

    def tick_at(self, x: float) -> int:
        return int(round(max(0.0, min(1.0, (x - 6) / max(1, self.width() - 12))) * self.length))

    def paintEvent(self, event) -> None:  # noqa: N802
        p = QPainter(self)
        mid = self.height() / 2
        p.fillRect(QRectF(6, mid - 3, self.width() - 12, 6), QColor("#b0bec5"))
        p.fillRect(QRectF(6, mid - 3, self._x(self.position) - 6, 6), QColor("#546e7a"))
        for i, (tick, _name) in enumerate(self.marks):
            p.setPen(QPen(QColor(MARK_COLOURS[i % len(MARK_COLOURS)]), 3))
            x = self._x(tick)
            p.drawLine(int(x), 2, int(x), self.height() - 2)
        p.setPen(QPen(QColor("#263238"), 2))
        p.setBrush(QColor("#eceff1"))
        p.drawEllipse(QRectF(self._x(self.position) - 6, mid - 6, 12, 12))
        p.end()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self.seek_requested.emit(self.tick_at(event.position().x()))

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.seek_requested.emit(self.tick_at(event.position().x()))
