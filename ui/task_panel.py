"""Task panel: a picker grouped by capability axis with collection progress, the active
instruction, and a live subtask checklist (weight, latched, must-hold, violation) with the score.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QColor, QFont
from PyQt6.QtWidgets import (QLabel, QProgressBar, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

AXIS_TITLES = {"generalization": "Generalization", "instruction_following": "Instruction following",
               "limited_demonstrations": "Limited demonstrations", "long_horizon": "Long horizon",
               "memory": "Memory"}


def collection_target(spec) -> int:
    """Accepted takes to collect: the catalog's demonstration count (100, or 30 when data-scarce)."""
    return int(getattr(spec, "demos", 0) or 100)


class TaskPicker(QTreeWidget):
    task_chosen = pyqtSignal(str)

    def __init__(self, specs, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["task", "accepted"])
        self.setColumnWidth(0, 300)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._specs = {s.id: s for s in specs}
        groups: dict[str, QTreeWidgetItem] = {}
        for spec in specs:
            group = groups.get(spec.axis)
            if group is None:
                group = groups[spec.axis] = QTreeWidgetItem(self, [AXIS_TITLES.get(spec.axis, spec.axis), ""])
                group.setFlags(group.flags() & ~Qt.ItemFlag.ItemIsSelectable)
                group.setExpanded(True)
            self._items[spec.id] = QTreeWidgetItem(group, [spec.id, ""])
        self.itemClicked.connect(self._clicked)

    def set_counts(self, accepted: dict[str, int]) -> None:
        for task_id, item in self._items.items():
            target = collection_target(self._specs[task_id])
            done = accepted.get(task_id, 0)
            item.setText(1, f"{done} / {target}")
            item.setForeground(1, QColor("#2e7d32" if done >= target else "#424242"))

    def select(self, task_id: str) -> None:
        self.setCurrentItem(self._items[task_id])
        self.task_chosen.emit(task_id)

    def _clicked(self, item, _column) -> None:
        if item.text(0) in self._items:
            self.task_chosen.emit(item.text(0))


class SubtaskChecklist(QTreeWidget):
    """One row per subtask: [✓/·] name, weight, must-hold (holds?), violation."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["", "subtask", "w", "must hold", "violation"])
        self.setRootIsDecorated(False)
        for col, width in ((0, 24), (1, 280), (2, 36), (3, 80)):
            self.setColumnWidth(col, width)
        self._subtasks = ()

    def set_subtasks(self, subtasks) -> None:
        self._subtasks = tuple(subtasks)
        self.clear()
        for s in self._subtasks:
            QTreeWidgetItem(self, ["·", s.name, str(s.weight), "required" if s.must_hold else "",
                                   "guard" if s.latch_violation else ""])

    def update_state(self, latched, holds, violated) -> None:
        bold = QFont()
        bold.setBold(True)
        for i, s in enumerate(self._subtasks):
            item = self.topLevelItem(i)
            item.setText(0, "✓" if latched[i] else "·")
            item.setFont(1, bold if latched[i] else QFont())
            if s.must_hold:
                item.setText(3, "holds" if holds[i] else "not holding")
                item.setForeground(3, QColor("#2e7d32" if holds[i] else "#c62828"))
            if violated[i]:
                item.setText(4, "VIOLATED")
                item.setForeground(4, QColor("#c62828"))
            item.setForeground(1, QColor("#2e7d32" if latched[i] and not violated[i] else "#212121"))

    def latched_names(self) -> list[str]:
        return [self.topLevelItem(i).text(1) for i in range(self.topLevelItemCount())
                if self.topLevelItem(i).text(0) == "✓"]


class TaskPanel(QWidget):
    """Picker on top; the chosen task's instruction, progress bar and checklist below."""

    def __init__(self, specs, parent=None):
        super().__init__(parent)
        self.picker = TaskPicker(specs)
        self.instruction = QLabel("Pick a task.")
        self.instruction.setWordWrap(True)
        font = self.instruction.font()
        font.setPointSize(font.pointSize() + 2)
        self.instruction.setFont(font)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFormat("progress %v / 100")
        self.checklist = SubtaskChecklist()
        layout = QVBoxLayout(self)
        layout.addWidget(self.picker, 2)
        layout.addWidget(self.instruction)
        layout.addWidget(self.progress)
        layout.addWidget(self.checklist, 1)

    def show_task(self, spec) -> None:
        self.checklist.set_subtasks(spec.subtasks)
        self.set_instruction(spec.instruction_at(0))
        self.progress.setValue(0)

    def set_instruction(self, text: str) -> None:
        self.instruction.setText(text)

    def update_score(self, progress: float, latched, holds, violated) -> None:
        self.progress.setValue(int(round(progress)))
        self.checklist.update_state(latched, holds, violated)
