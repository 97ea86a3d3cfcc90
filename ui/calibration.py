"""Calibration wizard: hold a T-pose, then arms straight forward; each is captured from the
connected device and the operator profile (arm lengths, shoulders, hand size) is fitted and saved."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PyQt6.QtWidgets import QDialog, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

from retarget import CalibrationSample, calibrate
from teleop.core.conventions import SIDES
from teleop.core.errors import TeleopError
from teleop.core.geometry import quat_to_mat
from teleop.control.operator_map import DEFAULT_HEAD

STEPS = (("t_pose", "Stand straight, arms out to the sides (a T), palms down. Hold still, then Capture."),
         ("arms_forward", "Arms straight out in front, palms down. Hold still, then Capture."))


def sample_from_frame(pose: str, frame) -> CalibrationSample:
    """A calibration sample from one OperatorFrame; needs both hands tracked."""
    if frame is None or frame.left is None or frame.right is None:
        raise TeleopError("both hands must be tracked to capture a calibration pose")
    head_pos = frame.head.position if frame.head is not None else DEFAULT_HEAD
    head_rot = quat_to_mat(frame.head.quat) if frame.head is not None else np.eye(3)
    hands = {s: np.asarray(frame.hand(s).keypoints) for s in SIDES}
    return CalibrationSample(pose, np.asarray(head_pos), head_rot, {s: h[0] for s, h in hands.items()}, hands=hands)


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
            self.prompt.setText(f"Step {self.step + 1} of {len(STEPS)}: {STEPS[self.step][1]}")
        else:
            self.prompt.setText("Done.")
            self.capture_button.setEnabled(False)

    def capture(self) -> None:
        try:
            self.samples.append(sample_from_frame(STEPS[self.step][0], self.frame_source()))
        except TeleopError as exc:
            self.result.setText(f"Not captured: {exc}")
            return
        self.step += 1
        if self.step == len(STEPS):
            self._finish()
        self._show_step()

    def _finish(self) -> None:
        try:
            self.profile = calibrate(self.samples, name=self.save_to.stem)
        except TeleopError as exc:
            self.result.setText(f"Calibration failed: {exc}. Try again.")
            self.samples, self.step = [], 0
            return
        self.save_to.parent.mkdir(parents=True, exist_ok=True)
        self.profile.save(self.save_to)
        p = self.profile
        self.result.setText(f"Saved {self.save_to}: arm {p.arm_length:.3f} m "
                            f"(upper {p.upper_arm:.3f}, forearm {p.forearm:.3f}), hand {p.hand_length:.3f} m.")
