"""Start the desktop application."""
from __future__ import annotations

import os
import sys

from PyQt6.QtWidgets import QApplication

from teleop.core.paths import default_store
from ui.main_window import MainWindow


def run_app(store=None, operator: str | None = None) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("BiDex teleop")
    window = MainWindow(store or default_store(), operator=operator or os.environ.get("USER", "operator"))
    window.show()
    return app.exec()
