"""Device panel: which device, connect / disconnect, live status (frame rate, frame age, tracking
per hand, engage state), and for the headset the URL, pairing code, certificate fingerprint and a
QR code to scan."""
from __future__ import annotations

import io

import qrcode
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QPixmap
from PyQt6.QtWidgets import (QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSpinBox,
                             QVBoxLayout, QWidget)

DEVICES = (("synthetic", "Synthetic operator (scripted)"), ("glove", "Exoskeleton glove (ZeroMQ)"),
           ("webxr", "Headset (WebXR: Vision Pro, Quest…)"))


def qr_pixmap(text: str, size: int = 180) -> QPixmap:
    image = qrcode.make(text, border=2)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    pixmap = QPixmap()
    pixmap.loadFromData(buf.getvalue(), "PNG")
    return pixmap.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio)


class DevicePanel(QWidget):
    connect_requested = pyqtSignal(str, dict)     # device name, options
    disconnect_requested = pyqtSignal()
    calibrate_requested = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.choice = QComboBox()
        for key, label in DEVICES:
            self.choice.addItem(label, key)
        self.endpoint = QLineEdit("tcp://127.0.0.1:5570")
        self.port = QSpinBox()
        self.port.setRange(1024, 65535)
        self.port.setValue(8443)
        self.connect_button = QPushButton("Connect")
        self.connect_button.clicked.connect(self._connect)
        self.disconnect_button = QPushButton("Disconnect")
        self.disconnect_button.clicked.connect(self.disconnect_requested)
        calibrate = QPushButton("Calibrate operator…")
        calibrate.clicked.connect(self.calibrate_requested)
        self.status = {k: QLabel("—") for k in ("state", "rate", "age", "left", "right", "engage", "retarget")}
        self.headset = QLabel()
        self.headset.setWordWrap(True)
        self.headset.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.qr = QLabel()
        self._build(calibrate)

    def _build(self, calibrate) -> None:
        form = QFormLayout()
        form.addRow("device", self.choice)
        form.addRow("glove endpoint", self.endpoint)
        form.addRow("headset port", self.port)
        buttons = QHBoxLayout()
        buttons.addWidget(self.connect_button)
        buttons.addWidget(self.disconnect_button)
        status = QFormLayout()
        for key, label in (("state", "connection"), ("rate", "frame rate"), ("age", "frame age"),
                           ("left", "left hand"), ("right", "right hand"), ("engage", "engage"),
                           ("retarget", "retargeting")):
            status.addRow(label, self.status[key])
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(calibrate)
        layout.addLayout(status)
        layout.addWidget(self.headset)
        layout.addWidget(self.qr)
        layout.addStretch(1)

    def device_name(self) -> str:
        return self.choice.currentData()

    def _connect(self) -> None:
        name = self.device_name()
        options = {"glove": {"endpoint": self.endpoint.text()}, "webxr": {"port": self.port.value()}}.get(name, {})
        self.connect_requested.emit(name, options)

    def show_headset(self, url: str, code: str, fingerprint: str) -> None:
        self.headset.setText(f"Open on the headset:<br><b>{url}</b><br>pairing code <b>{code}</b><br>"
                             f"certificate SHA-256<br><tt>{fingerprint}</tt>")
        self.qr.setPixmap(qr_pixmap(url))

    def clear_headset(self) -> None:
        self.headset.clear()
        self.qr.clear()

    def update_status(self, snap) -> None:
        report = snap.report
        self.status["state"].setText(f"{snap.device or 'none'}: {'connected' if snap.connected else 'not connected'}")
        self.status["rate"].setText(f"{snap.frame_hz:.0f} Hz" if snap.connected else "—")
        if report is not None:
            age = report.frame_age_ms
            self.status["age"].setText("no frames" if age == float("inf") else f"{age:.0f} ms")
            self.status["engage"].setText(report.engage_state + (f" ({report.reason})" if report.reason else ""))
            self.status["retarget"].setText(f"{report.retarget_status}, {report.retarget_ms:.1f} ms")
        for side in ("left", "right"):
            tracked = snap.tracking.get(side) if hasattr(snap, "tracking") else None
            self.status[side].setText("—" if tracked is None else f"{tracked:.0%} of joints tracked")
