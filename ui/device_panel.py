"""Device panel: which device, connect / disconnect, live status (frame rate, frame age, tracking
per hand, engage state), and for the headset the URL, pairing code, certificate fingerprint and a
QR code to scan."""
from __future__ import annotations

import io
from html import escape

import qrcode
from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QPixmap
from PyQt6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                             QPushButton, QSpinBox, QStackedWidget, QVBoxLayout, QWidget)

from teleop.core.conventions import SIDES
from ui.station_state import LINKS

FORM_SPIN_RANGE = (-1_000_000, 1_000_000)     # spin boxes must not clip any option a config allows


def option_widget(option):
    """An input widget for one device option, holding its default: (widget, read() -> value,
    write(value))."""
    if option.type is bool:
        w = QCheckBox()
        w.setChecked(bool(option.default))
        return w, w.isChecked, lambda v: w.setChecked(bool(v))
    if option.type is int:
        w = QSpinBox()
        w.setRange(*FORM_SPIN_RANGE)
        w.setValue(int(option.default or 0))
        return w, w.value, lambda v: w.setValue(int(v))
    if option.type is float:
        w = QDoubleSpinBox()
        w.setRange(*FORM_SPIN_RANGE)
        w.setDecimals(3)
        w.setValue(float(option.default or 0.0))
        return w, w.value, lambda v: w.setValue(float(v))
    w = QLineEdit("" if option.default is None else str(option.default))
    return w, lambda: w.text().strip() or None, lambda v: w.setText("" if v is None else str(v))


class DeviceForm(QWidget):
    """The options of one device config as a form (generated: nothing here names a device)."""

    def __init__(self, config, parent=None):
        super().__init__(parent)
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.readers, self.writers = {}, {}
        for option in config.options():
            widget, read, write = option_widget(option)
            widget.setToolTip(option.help)
            layout.addRow(option.name.replace("_", " "), widget)
            self.readers[option.name], self.writers[option.name] = read, write

    def values(self) -> dict:
        values = {name: read() for name, read in self.readers.items()}
        return {k: v for k, v in values.items() if v is not None}

    def set_values(self, values: dict) -> None:
        """Fill the form (a restored session); unknown names are ignored, bad values skipped."""
        for name, value in values.items():
            if name in self.writers:
                try:
                    self.writers[name](value)
                except (TypeError, ValueError):
                    pass


def qr_pixmap(text: str, size: int = 140) -> QPixmap:
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
        self.fault = QLabel()               # what went wrong, why, what to try: right here, not a status bar
        self.fault.setWordWrap(True)
        self.fault.setStyleSheet("QLabel { background: #ffebee; color: #b71c1c; padding: 6px; border-radius: 4px; }")
        self.fault.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.fault.hide()
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
        layout.addWidget(self.fault)
        layout.addWidget(calibrate)
        layout.addLayout(status)
        layout.addWidget(self.headset)
        layout.addWidget(self.qr)
        layout.addStretch(1)

    def device_name(self) -> str:
        return self.choice.currentData()

    def select(self, name: str, options: dict | None = None) -> bool:
        """Show device ``name`` with ``options`` in its form (a restored session)."""
        index = self.choice.findData(name)
        if index < 0:
            return False
        self.choice.setCurrentIndex(index)
        if options:
            self.form_of[name].set_values(options)
        return True

    def options(self) -> dict:
        return self.form_of[self.device_name()].values()

    def show_fault(self, fault) -> None:
        """A ``DeviceFault`` (None: hide)."""
        if fault is None:
            self.fault.hide()
            return
        text = f"<b>{escape(fault.what)}</b><br>{escape(fault.why)}<br><i>Try:</i> {escape(fault.hint)}"
        if text != self.fault.text():
            self.fault.setText(text)
        self.fault.show()

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
        link = LINKS.get(snap.link, snap.link)
        state = "connected, " + link if snap.connected else f"not connected — {link}"
        self.status["state"].setText(f"{snap.device or 'none'}: {state}")
        self.status["rate"].setText(f"{snap.frame_hz:.0f} Hz" if snap.link in ("live", "stale", "playing") else "—")
        self.show_fault(snap.fault)
        if report is not None:
            age = report.frame_age_ms
            self.status["age"].setText("no frames" if age == float("inf") else f"{age:.0f} ms")
            self.status["engage"].setText(report.engage_state + (f" ({report.reason})" if report.reason else ""))
            self.status["retarget"].setText(f"{report.retarget_status}, {report.retarget_ms:.1f} ms")
        for side in SIDES:
            tracked = snap.tracking.get(side)
            self.status[side].setText("—" if tracked is None else f"{tracked:.0%} of joints tracked")
