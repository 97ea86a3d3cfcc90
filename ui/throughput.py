"""Throughput dock: per operator and task, accepted per hour, acceptance rate, time between takes,
tracking loss (a table) and plots of accepted per hour per task and of rejection reasons. The
figures are ``recordings.analytics`` (the same as ``teleop stats``), computed off the UI thread."""
from __future__ import annotations

import threading

import numpy as np
import pyqtgraph as pg
from PyQt6.QtCore import pyqtSignal
from PyQt6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QTableWidget, QTableWidgetItem,
                             QVBoxLayout, QWidget)

from recordings.analytics import ALL, throughput

COLUMNS = ("operator", "task", "accepted", "rate", "per hour", "between takes p50 s", "tracking loss")


def _fmt(value) -> str:
    return "—" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


class ThroughputPanel(QWidget):
    _computed = pyqtSignal(dict)

    def __init__(self, store, parent=None):
        super().__init__(parent)
        self.store = store
        self.result: dict | None = None
        self._busy = False
        self.operator = QComboBox()
        self.operator.addItem("all operators", None)
        self.operator.currentIndexChanged.connect(lambda _: self.refresh())
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        self.summary = QLabel("")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.per_hour = pg.PlotWidget(title="accepted per hour, by task")
        self.reasons = pg.PlotWidget(title="rejection reasons")
        for plot in (self.per_hour, self.reasons):
            plot.setMinimumHeight(90)
        top = QHBoxLayout()
        for w in (self.operator, refresh, self.summary):
            top.addWidget(w)
        top.addStretch(1)
        plots = QHBoxLayout()
        plots.addWidget(self.per_hour)
        plots.addWidget(self.reasons)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(plots, 1)
        self._computed.connect(self._show)

    def refresh(self) -> None:
        """Recompute in a worker thread (the index is read here, the take files there)."""
        if self._busy:
            return
        self._busy = True
        rows, operator = self.store.rows(), self.operator.currentData()

        def work():
            self._computed.emit(throughput(rows, operator))
        threading.Thread(target=work, name="throughput", daemon=True).start()

    def _show(self, result: dict) -> None:
        self._busy = False
        self.result = result
        self._operators({g["operator"] for g in result["groups"]})
        overall = result["overall"]
        self.summary.setText(f"{overall['accepted']}/{overall['takes']} accepted, "
                             f"{_fmt(overall['accepted_per_hour'])} per hour of work, "
                             f"{_fmt(overall['working_h'])} h worked")
        groups = [g for g in result["groups"] if g["task_id"] != ALL] + \
                 [g for g in result["groups"] if g["task_id"] == ALL]
        self.table.setRowCount(len(groups))
        for r, g in enumerate(groups):
            values = (g["operator"], g["task_id"], f"{g['accepted']}/{g['takes']}", g["acceptance_rate"],
                      g["accepted_per_hour"], g["between_takes_s"]["p50"], g["tracking_loss_share"])
            for c, v in enumerate(values):
                self.table.setItem(r, c, QTableWidgetItem(_fmt(v)))
        self.table.resizeColumnsToContents()
        self._bars(self.per_hour, {g["task_id"]: g["accepted_per_hour"] or 0.0 for g in result["groups"]
                                   if g["task_id"] != ALL})
        self._bars(self.reasons, overall["rejection_reasons"])

    def _operators(self, names: set[str]) -> None:
        known = {self.operator.itemData(i) for i in range(self.operator.count())}
        self.operator.blockSignals(True)
        for name in sorted(names - known):
            self.operator.addItem(name, name)
        self.operator.blockSignals(False)

    @staticmethod
    def _bars(plot, values: dict) -> None:
        plot.clear()
        if not values:
            return
        names = list(values)
        x = np.arange(len(names))
        plot.addItem(pg.BarGraphItem(x=x, height=[float(values[n]) for n in names], width=0.6, brush="#1e88e5"))
        plot.getAxis("bottom").setTicks([[(i, n[:18]) for i, n in enumerate(names)]])
