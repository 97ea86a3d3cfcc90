"""Recording and review: record (Space), then instant replay with a timeline showing where each
subtask latched, then Accept (A) / Reject (R, with a reason) / Next episode (N)."""
from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                             QPushButton, QVBoxLayout, QWidget)

from teleop.robot import default_control_hz
from ui.timeline import Timeline

REJECT_REASONS = ("dropped the object", "wrong object or order", "collision / unsafe motion",
                  "tracking glitch", "too slow / hesitant", "task not completed", "other")
SPEEDS = (("0.5×", 0.5), ("1×", 1.0), ("2×", 2.0), ("4×", 4.0))


class RejectDialog(QDialog):
    """Quick-pick reason plus free text."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Reject take")
        self.reasons = QListWidget()
        self.reasons.addItems(REJECT_REASONS)
        self.reasons.setCurrentRow(0)
        self.details = QLineEdit(placeholderText="details (optional)")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Why is this take rejected?"))
        layout.addWidget(self.reasons)
        layout.addWidget(self.details)
        layout.addWidget(buttons)

    def reason(self) -> str:
        picked = self.reasons.currentItem().text() if self.reasons.currentItem() else "other"
        extra = self.details.text().strip()
        return f"{picked}: {extra}" if extra else picked


class RecordPanel(QWidget):
    record_clicked = pyqtSignal()
    accept_clicked = pyqtSignal()
    reject_clicked = pyqtSignal()
    next_clicked = pyqtSignal()
    live_clicked = pyqtSignal()
    play_clicked = pyqtSignal()
    speed_changed = pyqtSignal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.record_button = QPushButton("● Record  [Space]")
        self.status = QLabel("Not recording.")
        self.review_title = QLabel("No take under review.")
        self.timeline = Timeline()
        self.play_button = QPushButton("▶ Play")
        self.speed = QComboBox()
        for label, value in SPEEDS:
            self.speed.addItem(label, value)
        self.speed.setCurrentIndex(1)
        self.position = QLabel("")
        self.accept_button = QPushButton("Accept  [A]")
        self.reject_button = QPushButton("Reject…  [R]")
        self.next_button = QPushButton("Next episode  [N]")
        self.live_button = QPushButton("Back to live")
        self.take_status = QLabel("")
        self.take_status.setWordWrap(True)
        self._wire()
        self._build()
        self.set_reviewing(False)

    def _wire(self) -> None:
        self.record_button.clicked.connect(self.record_clicked)
        self.accept_button.clicked.connect(self.accept_clicked)
        self.reject_button.clicked.connect(self.reject_clicked)
        self.next_button.clicked.connect(self.next_clicked)
        self.live_button.clicked.connect(self.live_clicked)
        self.play_button.clicked.connect(self.play_clicked)
        self.speed.currentIndexChanged.connect(lambda _: self.speed_changed.emit(self.speed.currentData()))

    def _build(self) -> None:
        transport = QHBoxLayout()
        for w in (self.play_button, self.speed, self.position):
            transport.addWidget(w)
        verdict = QHBoxLayout()
        for w in (self.accept_button, self.reject_button, self.next_button, self.live_button):
            verdict.addWidget(w)
        layout = QVBoxLayout(self)
        layout.addWidget(self.record_button)
        layout.addWidget(self.status)
        layout.addWidget(self.review_title)
        layout.addWidget(self.timeline)
        layout.addLayout(transport)
        layout.addLayout(verdict)
        layout.addWidget(self.take_status)
        layout.addStretch(1)

    def set_recording(self, recording: bool, ticks: int, hz: float | None = None) -> None:
        hz = hz or default_control_hz()                # None: the shipped robot's control rate
        self.record_button.setText("■ Stop  [Space]" if recording else "● Record  [Space]")
        self.status.setText(f"Recording: {ticks} ticks ({ticks / hz:.1f} s)" if recording else "Not recording.")

    def set_reviewing(self, reviewing: bool, title: str = "") -> None:
        self.review_title.setText(title or "No take under review.")
        for w in (self.timeline, self.play_button, self.speed, self.accept_button, self.reject_button):
            w.setEnabled(reviewing)

    def set_playing(self, playing: bool) -> None:
        self.play_button.setText("❚❚ Pause" if playing else "▶ Play")

    def set_position(self, tick: int, length: int, hz: float | None = None) -> None:
        hz = hz or default_control_hz()
        self.timeline.set_position(tick)
        self.position.setText(f"{tick / hz:5.1f} / {length / hz:.1f} s")
