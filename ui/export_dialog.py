"""Export dialog: choose tasks and an output folder, run the export in a child process with a
progress bar and cancel, then show the summary. Cancelling kills the process: exports are built
aside and resumable, so nothing half-written ever appears at the output folder.

The export stays out of the control loop's way: the child runs at a lower CPU priority
(``os.nice``), so a take recorded during an export keeps its 25 Hz. ``teleop export`` reports
progress per finished episode (not per frame): the bar counts episodes and the estimate is the
mean time per episode so far. It cannot append to an existing dataset: "replace" rebuilds it
with every validated take, old and new.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from PyQt6.QtCore import QProcess, Qt, pyqtSignal
from PyQt6.QtWidgets import (QCheckBox, QDialog, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QListWidget,
                             QListWidgetItem, QPlainTextEdit, QProgressBar, QPushButton, QSpinBox, QVBoxLayout)

NICE = 10        # the child's niceness: below the window and its control loop
LAUNCH = ("import os, runpy, sys; os.nice(int(sys.argv[1])); del sys.argv[1]; sys.argv[0] = 'teleop'; "
          "runpy.run_module('teleop', run_name='__main__')")


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
        self.replace = QCheckBox("Replace an existing dataset there (rebuilt with every validated take: "
                                 "the exporter cannot append)")
        self.estimate = QLabel("Progress is reported per finished episode.")
        self.progress = QProgressBar()
        self.log = QPlainTextEdit(readOnly=True)
        self.run_button = QPushButton("Export")
        self.run_button.clicked.connect(self.start)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.summary: dict | None = None
        self.failed_reason = ""
        self._process: QProcess | None = None
        self._started = 0.0
        self._stderr = ""
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
        layout.addWidget(QLabel("Output folder:"))
        layout.addLayout(out_row)
        layout.addWidget(self.replace)
        layout.addLayout(workers_row)
        layout.addWidget(self.progress)
        layout.addWidget(self.estimate)
        layout.addWidget(self.log)
        layout.addLayout(buttons)

    def chosen_tasks(self) -> list[str]:
        return [self.tasks.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.tasks.count())
                if self.tasks.item(i).checkState() == Qt.CheckState.Checked]

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Parent folder for the dataset")
        if folder:
            self.out.setText(f"{folder}/dataset")

    def command(self, tasks: list[str]) -> list[str]:
        """The child's arguments: ``teleop export`` under ``os.nice(NICE)``."""
        args = ["-c", LAUNCH, str(NICE), "export", "--store", self.store_root, "--out", self.out.text(),
                "--tasks", *tasks, "--workers", str(self.workers.value()), "--json", "--progress-json"]
        return args + (["--overwrite"] if self.replace.isChecked() else [])

    def start(self) -> None:
        tasks = self.chosen_tasks()
        if not tasks:
            self.log.appendPlainText("Choose at least one task.")
            return
        if Path(self.out.text()).exists() and not self.replace.isChecked():
            self.log.appendPlainText(f"{self.out.text()} already exists: choose a new folder, or tick 'Replace' to "
                                     "rebuild it with every validated take (appending is not supported).")
            return
        self.summary, self.failed_reason, self._stderr = None, "", ""     # never show a previous run's result
        self._process = QProcess(self)
        self._process.readyReadStandardOutput.connect(self._read)
        self._process.readyReadStandardError.connect(self._read_errors)
        self._process.finished.connect(self._done)
        self.progress.setRange(0, 0)
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._started = time.monotonic()
        self.log.appendPlainText(f"exporting {len(tasks)} task(s) to {self.out.text()} (low priority) …")
        self._process.start(sys.executable, self.command(tasks))

    def _read_errors(self) -> None:
        self._stderr = (self._stderr + bytes(self._process.readAllStandardError()).decode(errors="replace"))[-8000:]

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
                self._estimate(msg["done"], msg["total"])
            else:
                self.summary = msg

    def _estimate(self, done: int, total: int) -> None:
        elapsed = time.monotonic() - self._started
        if done:
            left = elapsed / done * (total - done)
            self.estimate.setText(f"{done} of {total} episodes in {elapsed:.0f} s — about {left:.0f} s left "
                                  "(estimated per episode: the exporter reports finished episodes)")

    def _done(self, code: int, _status) -> None:
        self._read()
        self._read_errors()
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        self.progress.setRange(0, 1)
        self.progress.setValue(1 if self.summary and code == 0 else 0)
        if self.summary:
            s = self.summary
            self.log.appendPlainText(f"{'done' if code == 0 else 'FAILED'}: {s.get('episodes')} episodes, "
                                     f"{s.get('frames')} frames in {s.get('seconds')} s -> {s.get('out')}")
            for take_id, error in s.get("failed", []):
                self.log.appendPlainText(f"  {take_id}: {error}")
            self.finished_export.emit(s)
        else:
            self.failed_reason = error_text(self._stderr) or f"the export process exited with code {code}"
            self.log.appendPlainText(f"export failed: {self.failed_reason}")
            self.estimate.setText("")


def error_text(stderr: str) -> str:
    """The reason from a failed child's stderr: ``teleop: error: ...`` lines, else the last lines."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    errors = [line.split("teleop: error:", 1)[1].strip() for line in lines if "teleop: error:" in line]
    return errors[-1] if errors else "\n".join(lines[-6:])
