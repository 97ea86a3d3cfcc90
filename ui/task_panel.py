"""Task panel: a searchable picker grouped by capability axis with collection progress and the
proven tasks marked, the active instruction, and the subtask checklist (weight, latched,
must-hold, violation) with the score — of the live robot, or of the take under review.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt, pyqtSignal
from PyQt6.QtGui import QColor, QFont
from PyQt6.QtWidgets import (QLabel, QLineEdit, QProgressBar, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

AXIS_TITLES = {"generalization": "Generalization", "instruction_following": "Instruction following",
               "limited_demonstrations": "Limited demonstrations", "long_horizon": "Long horizon",
               "memory": "Memory"}


def proven_tasks() -> set[str]:
    """Tasks the synthetic operator is proven to complete: the committed record of
    ``teleop tasks prove`` (episodes recorded and re-validated by replay)."""
    from teleop.tasks.proven import proven_ids

    return set(proven_ids())


def collection_target(spec) -> int:
    """Accepted takes to collect: the catalog's demonstration count (100, or 30 when data-scarce)."""
    return int(getattr(spec, "demos", 0) or 100)


class TaskPicker(QTreeWidget):
    task_chosen = pyqtSignal(str)

    def __init__(self, specs, parent=None):
        super().__init__(parent)
        self.setHeaderLabels(["task", "accepted", "proven"])
        self.setColumnWidth(0, 250)
        self.setColumnWidth(1, 64)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._specs = {s.id: s for s in specs}
        self._groups: dict[str, QTreeWidgetItem] = {}
        self._counts: dict[str, int] = {}
        proven = proven_tasks()
        for spec in specs:
            group = self._groups.get(spec.axis)
            if group is None:
                group = self._groups[spec.axis] = QTreeWidgetItem(self, [AXIS_TITLES.get(spec.axis, spec.axis), ""])
                group.setFlags(group.flags() & ~Qt.ItemFlag.ItemIsSelectable)
                group.setExpanded(True)
            item = self._items[spec.id] = QTreeWidgetItem(group, [spec.id, "", "◆ proven" if spec.id in proven else ""])
            item.setToolTip(0, spec.instruction)
            if spec.id in proven:
                item.setToolTip(2, "the synthetic operator is proven to complete this task (teleop/tasks/proven.json): "
                                 "try it with the synthetic device")
        self.itemClicked.connect(self._clicked)

    def set_counts(self, accepted: dict[str, int]) -> None:
        if accepted == self._counts:
            return
        self._counts = dict(accepted)
        for task_id, item in self._items.items():
            target = collection_target(self._specs[task_id])
            done = accepted.get(task_id, 0)
            item.setText(1, f"{done} / {target}")
            item.setForeground(1, QColor("#2e7d32" if done >= target else "#424242"))

    def accepted(self, task_id: str) -> tuple[int, int]:
        """(accepted so far, collection target) of a task."""
        return self._counts.get(task_id, 0), collection_target(self._specs[task_id])

    def filter(self, text: str) -> int:
        """Show the tasks whose id or instruction contains every word of ``text``; how many."""
        words = text.lower().split()
        shown = 0
        for task_id, item in self._items.items():
            haystack = f"{task_id} {self._specs[task_id].instruction}".lower().replace("_", " ")
            visible = all(w in haystack for w in words)
            item.setHidden(not visible)
            shown += visible
        for group in self._groups.values():
            group.setHidden(all(group.child(i).isHidden() for i in range(group.childCount())))
        return shown

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

    def update_state(self, latched, holds=None, violated=None) -> None:
        """``holds`` None: not known (a take under review records latches, not holds)."""
        violated = violated if violated is not None else [False] * len(self._subtasks)
        bold = QFont()
        bold.setBold(True)
        for i, s in enumerate(self._subtasks):
            item = self.topLevelItem(i)
            item.setText(0, "✓" if latched[i] else "·")
            item.setFont(1, bold if latched[i] else QFont())
            if s.must_hold and holds is None:
                item.setText(3, "required")
                item.setForeground(3, QColor("#424242"))
            elif s.must_hold:
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
        self.picker.setMinimumHeight(150)               # ~6 rows however small the window
        self.search = QLineEdit(placeholderText="search tasks…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.picker.filter)
        self.source = QLabel("")                       # whose checklist this is: live, or a take's
        self.source.setStyleSheet("color: #1565c0; font-weight: bold;")
        self.instruction = QLabel("Pick a task.")
        self.instruction.setWordWrap(True)
        font = self.instruction.font()
        font.setPointSize(font.pointSize() + 2)
        self.instruction.setFont(font)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFormat("progress %v / 100")
        self.checklist = SubtaskChecklist()
        self.checklist.setMinimumHeight(70)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.picker, 3)
        layout.addWidget(self.source)
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
        if self.source.text():
            self.source.setText("")
        self.progress.setValue(int(round(progress)))
        self.checklist.update_state(latched, holds, violated)

    def show_review(self, take_id: str, frame, score: float) -> None:
        """The take under review at its replay position: its recorded latches and progress."""
        self.source.setText(f"reviewing {take_id} — final score {score:.0f}")
        self.set_instruction(frame.instruction)
        self.progress.setValue(int(round(frame.progress)))
        self.checklist.update_state([bool(x) for x in frame.latched])
