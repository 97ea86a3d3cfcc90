"""The operator's main window: live 3-D view, camera views, and docks for the task, the device,
recording / review, the episode browser, health plots and the joints. Wiring only: the station
(control loop), the take store and the validation workers do the work."""
from __future__ import annotations

import queue

from PyQt6.QtCore import QSettings, Qt, QTimer
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox, QVBoxLayout, QWidget

from recordings.store import TakeStore
from teleop.core.paths import config_dir
from teleop.sim.scene import build_scene
from teleop.sim import Sim
from teleop.tasks import all_specs
from ui.calibration import CalibrationWizard
from ui.device_panel import DevicePanel
from ui.export_dialog import ExportDialog
from ui.episode_browser import EpisodeBrowser
from ui.health_plots import HealthPlots
from ui.joint_panel import JointPanel
from ui.record_panel import RecordPanel, RejectDialog
from ui.review import ReviewController, latch_marks
from ui.station import Station
from ui.task_panel import TaskPanel
from ui.validation import ValidationManager
from ui.viewport import Viewport

CAMERA_VIEWS = ("head", "left_wrist", "right_wrist")


class MainWindow(QMainWindow):
    def __init__(self, store_root, settings: QSettings | None = None, operator: str = "operator",
                 validation: ValidationManager | None = None, confirm: bool = True):
        super().__init__()
        self.setWindowTitle("BiDex teleop")
        self.settings = settings or QSettings("bidex", "teleop")
        self.confirm = confirm
        self.store = TakeStore(store_root)
        self.open_report = self.store.open()
        self.station = Station(self.store, operator)
        self.validation = validation or ValidationManager(self.store)
        self.review = ReviewController(self)
        self.specs = {s.id: s for s in all_specs()}
        self._model_version = -1
        self._reviewing = False
        self._build_views()
        self._build_docks()
        self._wire()
        self._restore_layout()
        self.station.start()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._refresh)
        self._timer.start(100)
        self._announce_recovered()

    # -- construction ---------------------------------------------------------------------------
    def _build_views(self) -> None:
        bare = build_scene()
        idle = Sim(bare)
        idle.reset(0)
        self._idle_qpos = idle.data.qpos.copy()      # shown until a task is chosen
        self.viewport = Viewport(bare.model, self._live_qpos)
        self.setCentralWidget(self.viewport)
        self.camera_views = [Viewport(bare.model, self._live_qpos, fps=8, camera=cam, max_width=320)
                             for cam in CAMERA_VIEWS]
        self._bare_layout = bare

    def _dock(self, title: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower().replace(' ', '-')}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left, right, bottom = (Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea,
                               Qt.DockWidgetArea.BottomDockWidgetArea)
        self.task_panel = TaskPanel(list(self.specs.values()))
        self.device_panel = DevicePanel(self.station.app_devices())
        self.record_panel = RecordPanel()
        self.browser = EpisodeBrowser(self.store, confirm=self.confirm)
        self.health = HealthPlots()
        cams = QWidget()
        cam_layout = QVBoxLayout(cams)
        for view in self.camera_views:
            view.setMinimumSize(240, 180)
            cam_layout.addWidget(view)
        layout = self._bare_layout.layout
        model = self._bare_layout.model
        lows, highs = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
        ready = layout.ready_qpos(self._bare_layout.params)
        self.joint_panel = JointPanel(layout.action_joints, lows, highs, [ready.get(n, 0.0) for n in layout.action_joints],
                                      self.station.set_target)
        self.docks = {"task": self._dock("Task", self.task_panel, left),
                      "device": self._dock("Device", self.device_panel, left),
                      "record": self._dock("Recording", self.record_panel, right),
                      "cameras": self._dock("Cameras", cams, right),
                      "episodes": self._dock("Episodes", self.browser, bottom),
                      "health": self._dock("Health", self.health, bottom),
                      "joints": self._dock("Joints", self.joint_panel, right)}
        self.tabifyDockWidget(self.docks["cameras"], self.docks["joints"])
        self.tabifyDockWidget(self.docks["episodes"], self.docks["health"])
        self.docks["cameras"].raise_()
        self.docks["episodes"].raise_()
        self.status = QLabel()
        self.statusBar().addPermanentWidget(self.status)
        self.resize(1600, 1000)

    def _wire(self) -> None:
        self.task_panel.picker.task_chosen.connect(self.choose_task)
        self.device_panel.connect_requested.connect(self.connect_device)
        self.device_panel.disconnect_requested.connect(self.station.disconnect)
        rp = self.record_panel
        rp.record_clicked.connect(self.toggle_recording)
        rp.accept_clicked.connect(self.accept_take)
        rp.reject_clicked.connect(self.reject_take)
        rp.next_clicked.connect(self.next_episode)
        rp.live_clicked.connect(self.back_to_live)
        rp.play_clicked.connect(lambda: (self.review.toggle(), rp.set_playing(self.review.playing)))
        rp.speed_changed.connect(self.review.set_speed)
        rp.timeline.seek_requested.connect(self.review.seek)
        self.review.position_changed.connect(self._on_review_position)
        self.browser.open_requested.connect(self.open_take)
        self.device_panel.calibrate_requested.connect(self.calibrate)
        menu = self.menuBar()
        data = menu.addMenu("&Data")
        data.addAction("Export dataset…", self.export_dialog)
        data.addAction("Refresh episodes", self.browser.refresh)
        operator = menu.addMenu("&Operator")
        operator.addAction("Calibrate…", self.calibrate)
        view = menu.addMenu("&View")
        self.follow_head = view.addAction("Follow the head camera")
        self.follow_head.setCheckable(True)
        self.follow_head.toggled.connect(self.set_follow_head)
        view.addAction("Reset the 3-D view", self.viewport.orbit.reset)
        for key, slot in (("Space", self.toggle_recording), ("A", self.accept_take), ("R", self.reject_take),
                          ("N", self.next_episode), ("E", lambda: self.station.engage(True))):
            QShortcut(QKeySequence(key), self, activated=slot)

    # -- actions --------------------------------------------------------------------------------
    def _live_qpos(self):
        qpos = self.station.snapshot().qpos
        return self._idle_qpos if qpos is None else qpos

    def choose_task(self, task_id: str) -> None:
        self.back_to_live()
        self.task_panel.show_task(self.specs[task_id])
        self.statusBar().showMessage(f"loading {task_id}…", 3000)
        self.station.choose_task(task_id)

    def connect_device(self, name: str, options: dict) -> None:
        self.station.choose_device(name, **options)
        self.station.connect()

    def toggle_recording(self) -> None:
        if self._reviewing:
            self.back_to_live()
        self.station.toggle_recording()

    def next_episode(self) -> None:
        self.back_to_live()
        self.station.next_episode()

    def open_take(self, take_id: str) -> None:
        take = self.store.load(take_id)
        self.review.load(take)
        self._reviewing = True
        model = self.review.replayer.sim.model
        self.viewport.set_source(model, self.review.qpos)
        for view in self.camera_views:
            view.set_source(model, self.review.qpos)
        self.record_panel.timeline.set_take(take.length, latch_marks(take))
        self.record_panel.set_reviewing(True, f"Reviewing {take_id} ({take.review.status})")
        self.record_panel.set_position(0, take.length)
        self.browser.select(take_id)

    def back_to_live(self) -> None:
        if not self._reviewing:
            return
        self.review.close()
        self._reviewing = False
        self._model_version = -1          # re-attach the live model on the next refresh
        self.record_panel.set_reviewing(False)
        self.record_panel.set_playing(False)

    def _current_take(self) -> str | None:
        return self.review.take.meta.take_id if self.review.take is not None else None

    def accept_take(self) -> None:
        take_id = self._current_take()
        if take_id is None:
            return
        self.store.accept(take_id)
        self.validation.submit(take_id)
        self.record_panel.take_status.setText(f"{take_id}: accepted, validating…")
        self.browser.refresh()

    def reject_take(self, reason: str | None = None) -> None:
        take_id = self._current_take()
        if take_id is None:
            return
        if not reason:
            dialog = RejectDialog(self)
            if dialog.exec() != RejectDialog.DialogCode.Accepted:
                return
            reason = dialog.reason()
        self.store.reject(take_id, reason)
        self.record_panel.take_status.setText(f"{take_id}: rejected ({reason})")
        self.browser.refresh()

    def set_follow_head(self, on: bool) -> None:
        """Show the robot's head camera in the main view (what the dataset's head stream sees)."""
        self.viewport.fixed_camera = "head" if on else None

    def export_dialog(self) -> ExportDialog:
        counts = self.store.index.counts("validated_pass")
        for task, n in self.store.index.counts("exported").items():
            counts[task] = counts.get(task, 0) + n
        dialog = ExportDialog(str(self.store.root), counts, str(self.store.root.parent / "dataset"), self)
        dialog.finished_export.connect(lambda _summary: self.browser.refresh())
        dialog.show()
        return dialog

    def calibrate(self) -> CalibrationWizard:
        path = config_dir() / "profiles" / f"{self.station.operator}.yaml"
        wizard = CalibrationWizard(lambda: self.station.snapshot().last_frame, path, self)
        wizard.finished.connect(lambda _: wizard.profile is not None and self.station.set_profile(wizard.profile))
        wizard.show()
        return wizard

    # -- periodic refresh (UI thread, 10 Hz) ----------------------------------------------------
    def _refresh(self) -> None:
        snap = self.station.snapshot()
        if snap.model_version != self._model_version and snap.qpos is not None and not self._reviewing:
            self._attach_live_model()
            self._model_version = snap.model_version
        self._show_live(snap)
        self._collect_finished_takes()
        for report in self.validation.poll():
            self.record_panel.take_status.setText(
                f"{report.take_id}: {'validated ✓' if report.passed else 'validation FAILED'} — {report.reason}")
            self.browser.refresh()
        self.task_panel.picker.set_counts(self.store.index.counts("validated_pass"))

    def _attach_live_model(self) -> None:
        model = self.station.snapshot().model or self._bare_layout.model
        self.viewport.set_source(model, self._live_qpos)
        for view in self.camera_views:
            view.set_source(model, self._live_qpos)

    def _show_live(self, snap) -> None:
        report = snap.report
        self.record_panel.set_recording(snap.recording, snap.recorded_ticks)
        self.device_panel.update_status(snap)
        self.device_panel.show_connection(snap.connection)
        if report is not None:
            self.task_panel.set_instruction(report.instruction)
            self.task_panel.update_score(report.progress, report.latched, report.holds, report.violated)
            self.health.append({"residual_mm": report.residual_mm, "retarget_ms": report.retarget_ms,
                                "tick_ms": report.tick_ms, "frame_age_ms": min(report.frame_age_ms, 1e3)})
            self.health.redraw()
        stats = self.station.loop.stats()
        self.status.setText(f"task {snap.task_id or '—'}  episode {snap.episode_index}  "
                            f"loop {stats['tick_ms_p50']:.1f}/{stats['tick_ms_p99']:.1f} ms (p50/p99)  "
                            f"late ticks {stats['late_ticks']}  validating {self.validation.busy}  {snap.message}")

    def _collect_finished_takes(self) -> None:
        while True:
            try:
                path = self.station.finished_takes.get_nowait()
            except queue.Empty:
                return
            take = self.store.add(path)                    # the index is only ever touched here
            self.browser.refresh()
            self.open_take(take.meta.take_id)              # instant replay of what was just recorded

    def _on_review_position(self, tick: int) -> None:
        if self.review.take is not None:
            self.record_panel.set_position(tick, self.review.take.length)
            self.record_panel.set_playing(self.review.playing)

    def _announce_recovered(self) -> None:
        recovered = self.open_report.recovered
        if recovered:
            names = "\n".join(p.stem for p in recovered)
            self.statusBar().showMessage(f"recovered {len(recovered)} interrupted take(s)", 10000)
            if self.confirm:
                QMessageBox.information(self, "Recovered takes",
                                        f"These takes were interrupted and have been recovered for review:\n{names}")

    # -- layout ---------------------------------------------------------------------------------
    def _restore_layout(self) -> None:
        geometry, state = self.settings.value("geometry"), self.settings.value("state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("state", self.saveState())
        self._timer.stop()
        self.review.close()
        for view in (self.viewport, *self.camera_views):
            view.shutdown()
        self.station.stop()
        self.validation.shutdown()
        self.store.close()
        super().closeEvent(event)
