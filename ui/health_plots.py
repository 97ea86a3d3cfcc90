"""Live health plots (pyqtgraph): retargeting residuals and solve time, loop time, frame age."""
from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg
from PyQt6.QtWidgets import QVBoxLayout, QWidget

SERIES = (("residual_mm", "hand keypoint residual (mm, median)", "#1e88e5"),
          ("retarget_ms", "retarget solve (ms)", "#43a047"),
          ("tick_ms", "control tick (ms)", "#fb8c00"),
          ("frame_age_ms", "frame age (ms)", "#8e24aa"))


class HealthPlots(QWidget):
    def __init__(self, history: int = 250, parent=None):
        super().__init__(parent)
        self.data = {key: deque(maxlen=history) for key, _, _ in SERIES}
        self.curves = {}
        layout = QVBoxLayout(self)
        pg.setConfigOptions(antialias=False, background="w", foreground="k")
        for key, title, colour in SERIES:
            plot = pg.PlotWidget(title=title)
            plot.setMinimumHeight(70)
            plot.showGrid(y=True, alpha=0.3)
            self.curves[key] = plot.plot(pen=pg.mkPen(colour, width=1.5))
            layout.addWidget(plot)

    def append(self, sample: dict) -> None:
        """Add one tick's figures; missing keys are plotted as gaps (NaN)."""
        for key in self.data:
            value = sample.get(key)
            self.data[key].append(np.nan if value is None else float(value))

    def redraw(self) -> None:
        for key, curve in self.curves.items():
            y = np.fromiter(self.data[key], float)
            curve.setData(np.arange(len(y)), y, connect="finite")
