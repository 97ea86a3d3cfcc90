"""The window's docks, laid out to fit a 1080-px screen (1920×1080 with a taskbar and title bar).

Tall panels sit in scroll areas, so their content sets no minimum height; the three camera views
scale down; the task list keeps room for six rows whatever the size. Tabified docks share their
area: Cameras | Joints | Health on the right; the bottom holds the takes and the throughput.
"""
from __future__ import annotations

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QDockWidget, QFrame, QLabel, QScrollArea, QTabWidget, QVBoxLayout, QWidget

FIT_SIZE = (1280, 860)           # the most the window may ask for (a 1080-px screen leaves ~1000)
DEFAULT_SIZE = (1600, 960)


def scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(widget)
    area.setMinimumHeight(90)
    return area


def dock(window, title: str, widget: QWidget, area=None, onto: QDockWidget | None = None) -> QDockWidget:
    """A dock in ``area``, or tabbed ``onto`` another one (added straight into its tab group:
    adding it beside first and tabifying after leaves a stray tab bar on screen)."""
    d = QDockWidget(title, window)
    d.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
    d.setWidget(widget)
    if onto is not None:
        window.tabifyDockWidget(onto, d)
    else:
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
    # Throughput shares the bottom as a tab of this dock's own: tabbing docks in the bottom area
    # left a stray tab bar drawn over the device panel (Qt 6.11).
    window.bottom_tabs = QTabWidget()
    window.bottom_tabs.addTab(window.browser, "Takes")
    window.bottom_tabs.addTab(window.throughput, "Throughput")
    window.bottom_tabs.currentChanged.connect(lambda i: i == 1 and window.throughput.refresh())
    column.addWidget(window.bottom_tabs)
    docks = {"task": dock(window, "Task", window.task_panel, left),
             "device": dock(window, "Device", scrolled(window.device_panel), left),
             "record": dock(window, "Recording", scrolled(window.record_panel), right),
             "cameras": dock(window, "Cameras", camera_column(window.camera_views), right),
             "episodes": dock(window, "Episodes", episodes, bottom)}
    docks["joints"] = dock(window, "Joints", window.joint_panel, onto=docks["cameras"])
    docks["health"] = dock(window, "Health", scrolled(window.health), onto=docks["joints"])
    docks["cameras"].raise_()
    docks["episodes"].raise_()
    return docks


def default_sizes(window) -> None:
    """Dock sizes for a first start (a saved layout replaces them): side columns wide enough for
    their panels, the 3-D view taking the rest."""
    d = window.docks
    window.resizeDocks([d["task"], d["record"]], [360, 470], Qt.Orientation.Horizontal)
    window.resizeDocks([d["task"], d["device"]], [520, 360], Qt.Orientation.Vertical)
    window.resizeDocks([d["record"], d["cameras"]], [520, 380], Qt.Orientation.Vertical)
    window.resizeDocks([d["episodes"]], [220], Qt.Orientation.Vertical)
