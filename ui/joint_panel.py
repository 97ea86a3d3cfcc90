"""Sliders for all 58 joints, one tab per limb; moving a slider sets that joint's target."""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (QFormLayout, QLabel, QPushButton, QScrollArea, QSlider, QTabWidget, QVBoxLayout,
                             QWidget, QHBoxLayout)

STEPS = 1000


class JointSlider(QWidget):
    def __init__(self, index: int, name: str, low: float, high: float, value: float, on_change):
        super().__init__()
        self.index, self.low, self.high = index, low, high
        self._on_change = on_change
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, STEPS)
        self.slider.setObjectName(name)
        self.value_label = QLabel()
        self.value_label.setMinimumWidth(56)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider)
        layout.addWidget(self.value_label)
        self.set_value(value)
        self.slider.valueChanged.connect(self._changed)

    def value(self) -> float:
        return self.low + (self.high - self.low) * self.slider.value() / STEPS

    def set_value(self, value: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(round((value - self.low) / (self.high - self.low) * STEPS))
        self.slider.blockSignals(False)
        self.value_label.setText(f"{value:+.3f}")

    def _changed(self) -> None:
        self.value_label.setText(f"{self.value():+.3f}")
        self._on_change(self.index, self.value())


class JointPanel(QWidget):
    """Tabs: left arm, right arm, left hand, right hand. ``on_change(index, value)`` per edit."""

    GROUPS = (("Left arm", "left_arm_"), ("Right arm", "right_arm_"), ("Left hand", "left_"),
              ("Right hand", "right_"))

    def __init__(self, names, lows, highs, values, on_change, on_reset=None):
        super().__init__()
        self.sliders: list[JointSlider] = []
        tabs = QTabWidget()
        assigned: set[int] = set()
        for title, prefix in self.GROUPS:
            form_host = QWidget()
            form = QFormLayout(form_host)
            for i, name in enumerate(names):
                if i in assigned or not name.startswith(prefix):
                    continue
                assigned.add(i)
                slider = JointSlider(i, name, lows[i], highs[i], values[i], on_change)
                self.sliders.append(slider)
                form.addRow(name.removeprefix(prefix.split("_")[0] + "_"), slider)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(form_host)
            tabs.addTab(scroll, title)
        self.sliders.sort(key=lambda s: s.index)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        if on_reset is not None:
            reset = QPushButton("Reset to ready pose")
            reset.clicked.connect(on_reset)
            layout.addWidget(reset)

    def set_values(self, values) -> None:
        for slider in self.sliders:
            slider.set_value(float(values[slider.index]))
