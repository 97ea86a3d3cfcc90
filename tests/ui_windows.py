"""The ``make_window`` fixture of the window tests: real MainWindows on a temporary store and
settings file, shown, and closed at the end (without the close prompt)."""
from __future__ import annotations

import pytest
from PyQt6.QtCore import QSettings

from ui.main_window import MainWindow


@pytest.fixture
def make_window(qtbot, tmp_path):
    windows = []

    def make(store=None, confirm=False):
        settings = QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat)
        win = MainWindow(store or tmp_path / "store", settings=settings, operator="tester", confirm=confirm)
        qtbot.addWidget(win)
        win.show()
        windows.append(win)
        return win
    yield make
    for win in windows:
        if win.isVisible():
            win.confirm = False
            win.close()
