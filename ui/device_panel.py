"""Device panel: which device, connect / disconnect, live status (frame rate, frame age, tracking
per hand, engage state), and for the headset the URL, pairing code, certificate fingerprint and a
QR code to scan."""
from __future__ import annotations

import io

import qrcode
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QPixmap
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QPushButton, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from teleop.core.conventions import SIDES

FORM_SPIN_RANGE = (-1_000_000, 1_000_000)     # spin boxes must not clip any option a config allows


def option_widget(option):
    """An input widget for one device option, holding its default: (widget, read() -> value)."""
    if option.type is bool:
        w = QCheckBox()
        w.setChecked(bool(option.default))
        return w, w.isChecked
    if option.type is int:
        w = QSpinBox()
        w.setRange(*FORM_SPIN_RANGE)
        w.setValue(int(option.default or 0))
        return w, w.value
    if option.type is float:
        w = QDoubleSpinBox()
        w.setRange(*FORM_SPIN_RANGE)
        w.setDecimals(3)
        w.setValue(float(option.default or 0.0))
        return w, w.value
    w = QLineEdit("" if option.default is None else str(option.default))
    return w, lambda: w.text().strip() or None


class DeviceForm(QWidget):
    """The options of one device config as a form (generated: nothing here names a device)."""

    def __init__(self, config, parent=None):
        super().__init__(parent)
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.readers = {}
        for option in config.options():
            widget, read = option_widget(option)
            widget.setToolTip(option.help)
            layout.addRow(option.name.replace("_", " "), widget)
            self.readers[option.name] = read

    def values(self) -> dict:
        values = {name: read() for name, read in self.readers.items()}
        return {k: v for k, v in values.items() if v is not None}

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

    def __init__(self, devices, parent=None):
        """``devices``: (name, config class) pairs, in the order to offer them."""
        super().__init__(parent)
        self.choice = QComboBox()
        self.forms = QStackedWidget()
        self.form_of: dict[str, DeviceForm] = {}
        for name, config in devices:
            self.choice.addItem(config.label, name)
            self.form_of[name] = DeviceForm(config)
            self.forms.addWidget(self.form_of[name])
        self.choice.currentIndexChanged.connect(self.forms.setCurrentIndex)
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
        form.addRow(self.forms)
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
        self.connect_requested.emit(name, self.form_of[name].values())

    def show_connection(self, info) -> None:
        """What the connected device says about itself (``devices.base.ConnectionInfo`` or None);
        a page URL also as a QR code to scan."""
        if info is None:
            self.headset.clear()
            self.qr.clear()
            return
        lines = [info.summary]
        if info.url:
            lines.append(f"Open on the headset:<br><b>{info.url}</b>")
        if info.pairing_code:
            lines.append(f"pairing code <b>{info.pairing_code}</b>")
        if info.fingerprint:
            lines.append(f"certificate SHA-256<br><tt>{info.fingerprint}</tt>")
        text = "<br>".join(lines)
        if text != self.headset.text():
            self.headset.setText(text)
            if info.url:
                self.qr.setPixmap(qr_pixmap(info.url))
            else:
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
        for side in SIDES:
            tracked = snap.tracking.get(side)
            self.status[side].setText("—" if tracked is None else f"{tracked:.0%} of joints tracked")
