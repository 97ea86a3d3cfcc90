"""The window's docks, laid out to fit a 1080-px screen (1920×1080 with a taskbar and title bar).

Tall panels sit in scroll areas, so their content sets no minimum height; the three camera views
scale down; the task list keeps room for six rows whatever the size. Tabified docks share their
area: Cameras | Joints on the right, Episodes | Health | Throughput at the bottom.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QDockWidget, QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

FIT_SIZE = (1280, 860)           # the most the window may ask for (a 1080-px screen leaves ~1000)
DEFAULT_SIZE = (1600, 960)


def scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    area.setMinimumHeight(90)
    return area


def dock(window, title: str, widget: QWidget, area) -> QDockWidget:
    d = QDockWidget(title, window)
    d.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
    d.setWidget(widget)
    window.addDockWidget(area, d)
    return d


def camera_column(views) -> QWidget:
    host = QWidget()
    layout = QVBoxLayout(host)
    layout.setContentsMargins(2, 2, 2, 2)
    for view in views:
        view.setMinimumSize(160, 120)
        layout.addWidget(view)
    return scrolled(host)


def recovered_banner(window) -> QLabel:
    """Interrupted takes found at start, listed without a modal box (they are in the browser)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet("QLabel { background: #fff8e1; padding: 4px; }")
    recovered = window.open_report.recovered
    if recovered:
        names = ", ".join(p.stem for p in recovered[:5]) + (" …" if len(recovered) > 5 else "")
        label.setText(f"Recovered {len(recovered)} interrupted take(s) for review, marked (interrupted) "
                      f"below: {names}")
    label.setVisible(bool(recovered))
    return label


def build_docks(window) -> dict[str, QDockWidget]:
    left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                           Qt.DockWidgetArea.BottomDockWidgetArea)
    episodes = QWidget()
    column = QVBoxLayout(episodes)
    column.setContentsMargins(0, 0, 0, 0)
    window.recovered_banner = recovered_banner(window)
    column.addWidget(window.recovered_banner)
    column.addWidget(window.browser)
    docks = {"task": dock(window, "Task", window.task_panel, left),
             "device": dock(window, "Device", scrolled(window.device_panel), left),
             "record": dock(window, "Recording", scrolled(window.record_panel), right),
             "cameras": dock(window, "Cameras", camera_column(window.camera_views), right),
             "joints": dock(window, "Joints", window.joint_panel, right),
             "episodes": dock(window, "Episodes", episodes, bottom),
             "health": dock(window, "Health", scrolled(window.health), bottom),
             "throughput": dock(window, "Throughput", window.throughput, bottom)}
    window.tabifyDockWidget(docks["cameras"], docks["joints"])
    window.tabifyDockWidget(docks["episodes"], docks["health"])
    window.tabifyDockWidget(docks["health"], docks["throughput"])
    docks["cameras"].raise_()
    docks["episodes"].raise_()
    window.resizeDocks([docks["task"], docks["device"]], [520, 360], Qt.Orientation.Vertical)
    window.resizeDocks([docks["record"], docks["cameras"]], [470, 400], Qt.Orientation.Vertical)
    window.resizeDocks([docks["episodes"]], [230], Qt.Orientation.Vertical)
    return docks
