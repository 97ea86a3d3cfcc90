"""Episode browser: takes per task with status, score, duration, operator and date.

Filter by task / status / text, sort by any column, open a take for replay, delete to the trash
(recoverable: "Restore from trash"), never silently.
"""
from __future__ import annotations

import time

from PyQt6.QtCore import QSortFilterProxyModel, Qt, pyqtSignal
from PyQt6.QtGui import QColor, QStandardItem, QStandardItemModel
from PyQt6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QInputDialog, QLineEdit,
                             QMessageBox, QPushButton, QTableView, QVBoxLayout, QWidget)

from recordings.store import TakeStore
from recordings.takefile import STATUSES

COLUMNS = ("take", "task", "status", "score", "duration s", "operator", "date", "reason")
STATUS_COLOURS = {"validated_pass": "#2e7d32", "validated_fail": "#c62828", "rejected": "#8d6e63",
                  "accepted": "#1565c0", "exported": "#6a1b9a", "recorded": "#424242"}


class EpisodeBrowser(QWidget):
    open_requested = pyqtSignal(str)          # take id

    def __init__(self, store: TakeStore, parent=None, confirm=True):
        super().__init__(parent)
        self.store = store
        self.confirm = confirm
        self.model = QStandardItemModel(0, len(COLUMNS))
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.proxy = QSortFilterProxyModel()
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.doubleClicked.connect(lambda _: self._open())
        self.task_filter = QComboBox()
        self.status_filter = QComboBox()
        self.status_filter.addItems(["all statuses", *STATUSES])
        self.text_filter = QLineEdit(placeholderText="filter…")
        self.text_filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.task_filter.currentIndexChanged.connect(lambda _: self.refresh())
        self.status_filter.currentIndexChanged.connect(lambda _: self.refresh())
        self._build_layout()
        self.refresh()

    def _build_layout(self) -> None:
        filters = QHBoxLayout()
        for w in (self.task_filter, self.status_filter, self.text_filter):
            filters.addWidget(w)
        buttons = QHBoxLayout()
        for label, slot in (("Open for replay", self._open), ("Delete to trash", self._delete),
                            ("Restore from trash…", self._restore), ("Refresh", self.refresh)):
            button = QPushButton(label)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def refresh(self) -> None:
        task = self.task_filter.currentText()
        status = self.status_filter.currentText()
        rows = self.store.rows(task_id=None if task in ("", "all tasks") else task,
                               status=None if status == "all statuses" else status, order_by="created",
                               descending=True)
        self._refresh_tasks()
        self.model.setRowCount(0)
        for row in rows:
            self.model.appendRow(self._items(row))

    def _refresh_tasks(self) -> None:
        current = self.task_filter.currentText() or "all tasks"
        tasks = sorted({r.task_id for r in self.store.rows()})
        self.task_filter.blockSignals(True)
        self.task_filter.clear()
        self.task_filter.addItems(["all tasks", *tasks])
        self.task_filter.setCurrentText(current)
        self.task_filter.blockSignals(False)

    @staticmethod
    def _items(row) -> list[QStandardItem]:
        values = (row.take_id, row.task_id, row.status + (" (interrupted)" if row.interrupted else ""),
                  row.score, round(row.duration_s, 1), row.operator,
                  time.strftime("%Y-%m-%d %H:%M", time.localtime(row.created)), row.reason)
        items = []
        for v in values:
            item = QStandardItem()
            item.setData("" if v is None else v, Qt.ItemDataRole.DisplayRole)
            items.append(item)
        items[2].setForeground(QColor(STATUS_COLOURS.get(row.status, "#000000")))
        return items

    def selected_take(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        return self.proxy.data(self.proxy.index(rows[0].row(), 0))

    def select(self, take_id: str) -> None:
        for r in range(self.proxy.rowCount()):
            if self.proxy.data(self.proxy.index(r, 0)) == take_id:
                self.table.selectRow(r)
                return

    def status_of(self, take_id: str) -> str | None:
        row = self.store.index.get(take_id)
        return row.status if row else None

    def _open(self) -> None:
        take_id = self.selected_take()
        if take_id:
            self.open_requested.emit(take_id)

    def _delete(self) -> None:
        take_id = self.selected_take()
        if not take_id:
            return
        if self.confirm and QMessageBox.question(
                self, "Delete take", f"Move take {take_id} to the trash? It can be restored.") \
                != QMessageBox.StandardButton.Yes:
            return
        self.store.delete(take_id)
        self.refresh()

    def _restore(self) -> None:
        names = [p.stem for p in self.store.trash()]
        if not names:
            QMessageBox.information(self, "Trash", "The trash is empty.")
            return
        name, ok = QInputDialog.getItem(self, "Restore take", "Take:", names, 0, False)
        if ok:
            self.store.restore(name)
            self.refresh()
