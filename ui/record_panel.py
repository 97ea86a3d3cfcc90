"""Recording and review controls. Every button is a flow action (``action_requested``), the same
the keys trigger; the panel shows the flow's state: mode and times, the review timeline with the
latch marks, the take's flags, the numbered reject reasons, and this panel's own errors."""
from __future__ import annotations

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QGridLayout, QHBoxLayout, QLabel, QLineEdit,
                             QListWidget, QPushButton, QVBoxLayout, QWidget)

from teleop.robot import default_control_hz
from ui.timeline import Timeline

REJECT_REASONS = ("dropped the object", "wrong object or order", "collision / unsafe motion",
                  "tracking glitch", "too slow / hesitant", "task not completed", "other")
SPEEDS = (("0.5×", 0.5), ("1×", 1.0), ("2×", 2.0), ("4×", 4.0))


class RejectDialog(QDialog):
    """Quick-pick reason plus free text (the Reject… button; the R key picks inline)."""

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


def _label(wrap: bool = True, style: str = "") -> QLabel:
    label = QLabel()
    label.setWordWrap(wrap)
    if style:
        label.setStyleSheet(style)
    return label


class RecordPanel(QWidget):
    action_requested = pyqtSignal(str)      # a flow action name
    reject_clicked = pyqtSignal()           # the Reject… button: the reason dialog
    speed_changed = pyqtSignal(float)

    BUTTONS = (("record", "● Record  [Space]"), ("end_early", "■ End early  [→]"), ("rerecord", "↺ Re-record  [←]"),
               ("back", "« Back 3 s  [⌫]"), ("play", "▶ Play  [P]"), ("continue", "Continue here  [C]"),
               ("accept", "Accept  [A]"), ("undo", "Undo  [Ctrl+Z]"), ("next", "Next episode  [N]"),
               ("live", "Back to live  [Esc]"))

    def __init__(self, parent=None):
        super().__init__(parent)
        self.buttons = {name: QPushButton(text) for name, text in self.BUTTONS}
        for name, button in self.buttons.items():
            button.clicked.connect(lambda _=False, n=name: self.action_requested.emit(n))
        self.record_button, self.play_button = self.buttons["record"], self.buttons["play"]
        self.reject_button = QPushButton("Reject…  [R]")
        self.reject_button.clicked.connect(self.reject_clicked)
        self.mode = _label(style="font-size: 16pt; font-weight: bold;")
        self.status = _label()
        self.review_title = _label()
        self.timeline = Timeline()
        self.speed = QComboBox()
        for label, value in SPEEDS:
            self.speed.addItem(label, value)
        self.speed.setCurrentIndex(1)
        self.speed.currentIndexChanged.connect(lambda _: self.speed_changed.emit(self.speed.currentData()))
        self.position = QLabel("")
        self.flags = _label(style="color: #e65100; font-weight: bold;")
        self.prompt = _label(style="background: #fff3e0; padding: 4px;")
        self.notice = _label(style="color: #c62828;")
        self.take_status = _label()
        self._build()
        self.set_reviewing(False)

    def _build(self) -> None:
        def row(*widgets) -> QHBoxLayout:
            line = QHBoxLayout()
            for w in widgets:
                line.addWidget(w)
            return line
        b = self.buttons
        layout = QVBoxLayout(self)
        layout.addWidget(self.mode)
        layout.addWidget(self.status)
        recording = QGridLayout()
        for i, name in enumerate(("record", "end_early", "rerecord", "back")):
            recording.addWidget(b[name], i // 2, i % 2)
        layout.addLayout(recording)
        layout.addWidget(self.review_title)
        layout.addWidget(self.timeline)
        layout.addLayout(row(self.play_button, self.speed, self.position, b["continue"]))
        layout.addLayout(row(b["accept"], self.reject_button, b["undo"]))
        layout.addLayout(row(b["next"], b["live"]))
        for w in (self.flags, self.prompt, self.notice, self.take_status):
            layout.addWidget(w)
        layout.addStretch(1)

    def set_speed(self, speed: float) -> None:
        index = min(range(len(SPEEDS)), key=lambda i: abs(SPEEDS[i][1] - speed))
        self.speed.blockSignals(True)
        self.speed.setCurrentIndex(index)
        self.speed.blockSignals(False)

    def set_mode(self, mode: str, detail: str = "") -> None:
        self.mode.setText(f"{mode}  {detail}".strip())
        recording = mode == "RECORDING"
        self.record_button.setText("■ Stop  [Space]" if recording else "● Record  [Space]")
        self.record_button.setEnabled(mode in ("LIVE", "RECORDING"))
        for name in ("end_early", "back"):
            self.buttons[name].setEnabled(recording or (name == "back" and mode == "REVIEW"))
        self.buttons["rerecord"].setEnabled(mode in ("RECORDING", "REVIEW"))

    def set_recording(self, recording: bool, ticks: int, hz: float | None = None) -> None:
        hz = hz or default_control_hz()                # None: the shipped robot's control rate
        self.status.setText(f"Recording: {ticks} ticks ({ticks / hz:.1f} s)" if recording else "Not recording.")

    def set_reviewing(self, reviewing: bool, title: str = "") -> None:
        self.review_title.setText(title or "No take under review.")
        for w in (self.timeline, self.play_button, self.speed, self.buttons["accept"], self.reject_button,
                  self.buttons["continue"], self.buttons["live"]):
            w.setEnabled(reviewing)

    def set_playing(self, playing: bool) -> None:
        self.play_button.setText("❚❚ Pause  [P]" if playing else "▶ Play  [P]")

    def set_position(self, tick: int, length: int, hz: float | None = None) -> None:
        hz = hz or default_control_hz()
        self.timeline.set_position(tick)
        self.position.setText(f"{tick / hz:5.1f} / {length / hz:.1f} s")

    def set_prompt(self, rejecting: bool) -> None:
        text = "Reject — press the reason's number (Esc cancels):<br>" + \
            "<br>".join(f"<b>{i}</b> {r}" for i, r in enumerate(REJECT_REASONS, 1)) if rejecting else ""
        self.prompt.setText(text)
        self.prompt.setVisible(rejecting)

    def set_flags(self, flags: list[str]) -> None:
        self.flags.setText(("⚠ " + "; ".join(flags)) if flags else "")
        self.flags.setVisible(bool(flags))

    def set_notice(self, text: str) -> None:
        self.notice.setText(text)
        self.notice.setVisible(bool(text))
