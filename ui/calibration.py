"""Calibration wizard: hold a T-pose, then arms straight forward; each is captured from the
connected device and the operator profile (arm lengths, shoulders, hand size) is fitted and saved.
The maths (steps, samples, fit, plausibility) is ``teleop.control.calibration``; this is the dialog."""
from __future__ import annotations

from pathlib import Path

from PyQt6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from retarget import CalibrationSample
from teleop.control.calibration import STEPS, fit_and_save, sample_from_frame
from teleop.core.errors import TeleopError

__all__ = ["STEPS", "CalibrationWizard", "sample_from_frame"]


class CalibrationWizard(QDialog):
    def __init__(self, frame_source, save_to: Path, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Calibrate operator")
        self.frame_source, self.save_to = frame_source, Path(save_to)
        self.samples: list[CalibrationSample] = []
        self.profile = None
        self.step = 0
        self.prompt = QLabel()
        self.prompt.setWordWrap(True)
        self.result = QLabel()
        self.result.setWordWrap(True)
        self.capture_button = QPushButton("Capture")
        self.capture_button.clicked.connect(self.capture)
        close = QPushButton("Close")
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        buttons.addWidget(self.capture_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.prompt)
        layout.addWidget(self.result)
        layout.addLayout(buttons)
        self._show_step()

    def _show_step(self) -> None:
        if self.step < len(STEPS):
            self.prompt.setText(f"Step {self.step + 1} of {len(STEPS)}: {STEPS[self.step].prompt} Then Capture.")
        else:
            self.prompt.setText("Done.")
            self.capture_button.setEnabled(False)

    def capture(self) -> None:
        try:
            self.samples.append(sample_from_frame(STEPS[self.step].pose, self.frame_source()))
        except TeleopError as exc:
            self.result.setText(f"Not captured: {exc}")
            return
        self.step += 1
        if self.step == len(STEPS):
            self._finish()
        self._show_step()

    def _finish(self) -> None:
        try:
            self.profile = fit_and_save(self.samples, self.save_to)
        except TeleopError as exc:
            self.result.setText(f"Calibration failed: {exc}. Try again.")
            self.samples, self.step = [], 0
            return
        p = self.profile
        self.result.setText(f"Saved {self.save_to}: arm {p.arm_length:.3f} m "
                            f"(upper {p.upper_arm:.3f}, forearm {p.forearm:.3f}), hand {p.hand_length:.3f} m.")
