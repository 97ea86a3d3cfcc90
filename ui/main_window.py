"""The main window: the live 3-D view in the centre, the joint panel docked at the side."""
from __future__ import annotations

from PyQt6.QtCore import QSettings, Qt, QTimer
from PyQt6.QtWidgets import QDockWidget, QLabel, QMainWindow

from ui.joint_panel import JointPanel
from ui.sim_service import SimService
from ui.viewport import Viewport


class MainWindow(QMainWindow):
    def __init__(self, service: SimService | None = None, settings: QSettings | None = None):
        super().__init__()
        self.setWindowTitle("BiDex teleop")
        self.service = service or SimService()
        self.settings = settings or QSettings("bidex", "teleop")
        sim = self.service.sim
        self.viewport = Viewport(sim.model, self.service.snapshot)
        self.setCentralWidget(self.viewport)
        names = self.service.scene.layout.action_joints
        self.joint_panel = JointPanel(names, sim.ctrl_low, sim.ctrl_high, self.service.snapshot().targets,
                                      self.service.set_target, on_reset=self.reset_pose)
        dock = QDockWidget("Joints", self)
        dock.setObjectName("joints-dock")
        dock.setWidget(self.joint_panel)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.status = QLabel()
        self.statusBar().addPermanentWidget(self.status)
        self._status_timer = QTimer(self)
        self._status_timer.timeout.connect(self._update_status)
        self._status_timer.start(500)
        self.resize(1400, 900)
        self._restore_layout()
        self.service.start()

    def reset_pose(self) -> None:
        self.service.reset(0)
        self.joint_panel.set_values(self.service.snapshot().targets)

    def _update_status(self) -> None:
        snap = self.service.snapshot()
        stats = self.service.loop.stats()
        budget = 1e3 * self.service.scene.control_dt
        self.status.setText(f"t = {snap.sim_time:7.2f} s   tick {stats['tick_ms_p50']:.1f} ms p50 / "
                            f"{stats['tick_ms_p99']:.1f} ms p99 (budget {budget:.0f} ms)   "
                            f"view {self.viewport.worker.frames} frames")
        if self.service.loop.error is not None:
            self.statusBar().showMessage(f"simulation stopped: {self.service.loop.error}")

    def _restore_layout(self) -> None:
        geometry, state = self.settings.value("geometry"), self.settings.value("state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState())
        self._status_timer.stop()
        self.viewport.shutdown()
        self.service.stop()
        super().closeEvent(event)
