"""Export dialog: choose tasks and an output folder, run the export in a child process with a
progress bar and cancel, then show the summary. Cancelling kills the process: exports are built
aside and resumable, so nothing half-written ever appears at the output folder."""
from __future__ import annotations

import json
import sys

from PyQt6.QtCore import QProcess, Qt, pyqtSignal
from PyQt6.QtWidgets import (QDialog, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem,
                             QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QVBoxLayout)


class ExportDialog(QDialog):
    finished_export = pyqtSignal(dict)          # the export summary

    def __init__(self, store_root: str, counts: dict[str, int], default_out: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Export LeRobot dataset")
        self.store_root = store_root
        self.tasks = QListWidget()
        for task, n in sorted(counts.items()):
            item = QListWidgetItem(f"{task}  ({n} validated)")
            item.setData(Qt.ItemDataRole.UserRole, task)
            item.setCheckState(Qt.CheckState.Checked)
            self.tasks.addItem(item)
        self.out = QLineEdit(default_out)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.workers = QSpinBox()
        self.workers.setRange(1, 16)
        self.progress = QProgressBar()
        self.log = QPlainTextEdit(readOnly=True)
        self.run_button = QPushButton("Export")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.summary: dict | None = None
        self._process: QProcess | None = None
        self._build(browse)

    def _build(self, browse) -> None:
        out_row = QHBoxLayout()
        out_row.addWidget(self.out)
        out_row.addWidget(browse)
        workers_row = QHBoxLayout()
        workers_row.addWidget(QLabel("worker processes"))
        workers_row.addWidget(self.workers)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Tasks (validated takes only):"))
        layout.addWidget(self.tasks)
        layout.addWidget(QLabel("Output folder (created; must not exist):"))
        layout.addLayout(out_row)
        layout.addLayout(workers_row)
        layout.addWidget(self.progress)
        layout.addWidget(self.log)
        layout.addLayout(buttons)

    def chosen_tasks(self) -> list[str]:
        return [self.tasks.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.tasks.count())
                if self.tasks.item(i).checkState() == Qt.CheckState.Checked]

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Parent folder for the dataset")
        if folder:
            self.out.setText(f"{folder}/dataset")

    def start(self) -> None:
        tasks = self.chosen_tasks()
        if not tasks:
            self.log.appendPlainText("Choose at least one task.")
            return
        args = ["-m", "teleop", "export", "--store", self.store_root, "--out", self.out.text(), "--tasks", *tasks,
                "--workers", str(self.workers.value()), "--json", "--progress-json"]
        self._process = QProcess(self)
        self._process.readyReadStandardOutput.connect(self._read)
        self._process.finished.connect(self._done)
        self.progress.setRange(0, 0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.log.appendPlainText(f"exporting {len(tasks)} task(s) to {self.out.text()} …")
        self._process.start(sys.executable, args)

    def cancel(self) -> None:
        if self._process is not None and self._process.state() != QProcess.ProcessState.NotRunning:
            self._process.kill()
            self.log.appendPlainText("cancelled: the output folder was not touched; exporting again resumes.")

    def _read(self) -> None:
        while self._process.canReadLine():
            line = bytes(self._process.readLine()).decode().strip()
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "done" in msg:
                self.progress.setRange(0, msg["total"])
                self.progress.setValue(msg["done"])
            else:
                self.summary = msg

    def _done(self, code: int, _status) -> None:
        self._read()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if self.summary else 0)
        if self.summary:
            s = self.summary
            self.log.appendPlainText(f"{'done' if code == 0 else 'FAILED'}: {s.get('episodes')} episodes, "
                                     f"{s.get('frames')} frames in {s.get('seconds')} s -> {s.get('out')}")
            for take_id, error in s.get("failed", []):
                self.log.appendPlainText(f"  {take_id}: {error}")
            self.finished_export.emit(s)
        else:
            err = bytes(self._process.readAllStandardError()).decode()[-2000:]
            self.log.appendPlainText(f"export stopped (exit {code}).\n{err}")
