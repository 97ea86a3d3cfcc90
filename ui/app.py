"""Start the desktop application."""
from __future__ import annotations

import sys

from PyQt6.QtWidgets import QApplication

from ui.main_window import MainWindow


def run_app(argv: list[str] | None = None) -> int:
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setApplicationName("BiDex teleop")
    window = MainWindow()
    window.show()
    return app.exec()
