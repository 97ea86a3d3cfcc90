"""The operator's main window: live 3-D view with the mode banner, camera views, and docks for the
task, the device, recording / review, the episodes, health, throughput and the joints. Wiring
only: the station (control loop), the flow (what each input does), the take store and the
validation workers do the work."""
from __future__ import annotations


from PyQt6.QtCore import QSettings, QTimer
from PyQt6.QtWidgets import QLabel, QMainWindow, QMessageBox

from recordings.store import TakeStore
from teleop.core.paths import config_dir
from teleop.sim import Sim
from teleop.sim.scene import build_scene
from teleop.tasks import all_specs
from ui.calibration import CalibrationWizard
from ui.device_panel import DevicePanel
from ui.episode_browser import EpisodeBrowser
from ui.export_dialog import ExportDialog
from ui.flow import FlowController
from ui.health_plots import HealthPlots
from ui.joint_panel import JointPanel
from ui.keys import TextFieldGuard, bind_keys, help_line
from ui.record_panel import RecordPanel, RejectDialog
from ui.review import ReviewController, latch_marks
from ui.review_writer import ReviewWriter
from ui.station import Station
from ui.task_panel import TaskPanel
from ui.throughput import ThroughputPanel
from ui.validation import ValidationManager
from ui.viewport import Viewport
from ui.watchdog import LoopWatchdog
from ui.window_refresh import WindowRefresh
from ui.window_layout import DEFAULT_SIZE, build_docks, default_sizes
from ui.window_settings import restore_layout, restore_session, save_session

CAMERA_VIEWS = ("head", "left_wrist", "right_wrist")


class MainWindow(WindowRefresh, QMainWindow):
    def __init__(self, store_root, settings: QSettings | None = None, operator: str = "operator",
                 validation: ValidationManager | None = None, confirm: bool = True, autostop_s: float | None = None):
        super().__init__()
        self.setWindowTitle("BiDex teleop")
        self.settings = settings or QSettings("bidex", "teleop")
        self.confirm = confirm
        self.store = TakeStore(store_root)
        self.open_report = self.store.open()
        self.station = Station(self.store, operator, autostop_s=autostop_s)
        self.validation = validation or ValidationManager(self.store)
        self.review = ReviewController(self)
        self.writer = ReviewWriter(self.store)
        self.validation.writer = self.writer
        self.flow = FlowController(self.station, self.store, self.validation, self.review, self.settings,
                                   self.writer, self)
        self.specs = {s.id: s for s in all_specs()}
        self._model_version = -1
        self.reconnect_pending = False
        self._counts_dirty = True                  # the task list's counts: re-read only after a change
        self._device_hud: dict | None = None        # the flow's HUD fields last sent to the station
        self.watchdog = LoopWatchdog(self.station, parent=self)
        self._build()
        self._wire()
        if self.settings.value("state") is None:      # first start: sized once the window is shown
            QTimer.singleShot(0, lambda: default_sizes(self))
        restore_layout(self)
        self.station.start()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._refresh)
        self._timer.start(100)
        restore_session(self)

    # -- construction ---------------------------------------------------------------------------
    def _build(self) -> None:
        bare = build_scene()
        idle = Sim(bare)
        idle.reset(0)
        self._idle_qpos = idle.data.qpos.copy()      # shown until a task is chosen
        self._bare_layout = bare
        self.viewport = Viewport(bare.model, self._live_qpos)
        self.setCentralWidget(self.viewport)
        self.camera_views = [Viewport(bare.model, self._live_qpos, fps=5, camera=cam, max_width=320)
                             for cam in CAMERA_VIEWS]
        self.task_panel = TaskPanel(list(self.specs.values()))
        self.device_panel = DevicePanel(self.station.app_devices())
        self.record_panel = RecordPanel()
        self.browser = EpisodeBrowser(self.store, confirm=self.confirm)
        self.health = HealthPlots()
        self.throughput = ThroughputPanel(self.store)
        layout, model = bare.layout, bare.model
        lows, highs = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
        ready = layout.ready_qpos(bare.params)
        ready_targets = [ready.get(n, 0.0) for n in layout.action_joints]
        self.joint_panel = JointPanel(layout.action_joints, lows, highs, ready_targets,
                                      self.station.set_target)
        self.docks = build_docks(self)
        self.status = QLabel()
        self.statusBar().addPermanentWidget(self.status)
        self.statusBar().showMessage(help_line())
        self.resize(*DEFAULT_SIZE)

    def _wire(self) -> None:
        self.task_panel.picker.task_chosen.connect(self.choose_task)
        self.device_panel.connect_requested.connect(self.connect_device)
        self.device_panel.disconnect_requested.connect(self.station.disconnect)
        self.device_panel.calibrate_requested.connect(self.calibrate)
        rp = self.record_panel
        rp.action_requested.connect(lambda name: self.flow.trigger(name))
        rp.reject_clicked.connect(self.reject_take)
        rp.speed_changed.connect(lambda speed: self.flow.trigger("speed", speed))
        rp.timeline.seek_requested.connect(self.review.seek)
        self.review.position_changed.connect(self._on_review_position)
        self.flow.review_opened.connect(self._show_review)
        self.flow.review_closed.connect(self._show_live_views)
        self.flow.changed.connect(self._flow_changed)
        self.flow.takes_changed.connect(self._takes_changed)
        self.browser.open_requested.connect(self.open_take)
        self.watchdog.problem_changed.connect(self._loop_problem)
        self.shortcuts = bind_keys(self, self.flow.trigger)
        self.text_guard = TextFieldGuard(self, self.flow.trigger)
        menu = self.menuBar()
        data = menu.addMenu("&Data")
        data.addAction("Export dataset…", self.export_dialog)
        data.addAction("Refresh episodes", self.browser.refresh)
        data.addAction("Refresh throughput", self.throughput.refresh)
        operator = menu.addMenu("&Operator")
        operator.addAction("Calibrate…", self.calibrate)
        view = menu.addMenu("&View")
        self.follow_head = view.addAction("Follow the head camera")
        self.follow_head.setCheckable(True)
        self.follow_head.toggled.connect(self.set_follow_head)
        view.addAction("Reset the 3-D view", self.viewport.orbit.reset)

    # -- actions --------------------------------------------------------------------------------
    @property
    def _reviewing(self) -> bool:
        return self.review.take is not None

    def _live_qpos(self):
        qpos = self.station.snapshot().qpos
        return self._idle_qpos if qpos is None else qpos

    def choose_task(self, task_id: str) -> None:
        self.back_to_live()
        self.task_panel.show_task(self.specs[task_id])
        self.task_panel.source.setText(f"loading {task_id}…")
        self.station.choose_task(task_id)

    def connect_device(self, name: str, options: dict) -> None:
        self.station.choose_device(name, **options)
        self.station.connect()

    def toggle_recording(self) -> bool:
        return self.flow.trigger("record")

    def next_episode(self) -> bool:
        return self.flow.trigger("next")

    def accept_take(self) -> bool:
        return self.flow.trigger("accept")

    def back_to_live(self) -> None:
        if self._reviewing:
            self.flow.trigger("live")

    def reject_take(self, reason: str | None = None) -> bool:
        """Reject with ``reason``; without one, ask in a dialog (the R key asks inline instead)."""
        if not self._reviewing:
            return False
        if not reason:
            dialog = RejectDialog(self)
            if dialog.exec() != RejectDialog.DialogCode.Accepted:
                return False
            reason = dialog.reason()
        return self.flow.trigger("reject", reason)

    def open_take(self, take_id: str) -> None:
        """Review a take picked in the browser (read off the UI thread)."""
        self.flow.trigger("live")
        self.flow.open(self.store.path(take_id))

    def _show_review(self, take) -> None:
        model = self.review.replayer.sim.model
        self.viewport.set_source(model, self.review.qpos)
        for view in self.camera_views:
            view.set_source(model, self.review.qpos)
        self.record_panel.timeline.set_take(take.length, latch_marks(take))
        self.record_panel.set_reviewing(True, f"Reviewing {take.meta.take_id} ({take.review.status})")
        self.record_panel.set_position(0, take.length)
        self.record_panel.set_flags(self.flow.flags)
        spec = self.specs.get(take.meta.task_id)
        if spec is not None:
            self.task_panel.show_task(spec)
        self.browser.select(take.meta.take_id)

    def _show_live_views(self) -> None:
        self._model_version = -1          # re-attach the live model on the next refresh
        self.record_panel.set_reviewing(False)
        self.record_panel.set_playing(False)
        self.record_panel.set_flags([])
        snap = self.station.snapshot()
        if snap.task_id in self.specs:
            self.task_panel.show_task(self.specs[snap.task_id])

    def _flow_changed(self) -> None:
        rp = self.record_panel
        if self.flow.status:
            rp.take_status.setText(self.flow.status)
        rp.set_prompt(self.flow.rejecting)
        rp.set_flags(self.flow.flags)
        rp.set_speed(self.flow.speed)
        rp.set_playing(self.review.playing)

    def _loop_problem(self, problem: str) -> None:
        self.record_panel.set_notice(problem)

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

    # -- closing --------------------------------------------------------------------------------
    def closeEvent(self, event) -> None:  # noqa: N802
        keep = True
        if self.station.snapshot().recording and self.confirm:
            answer = QMessageBox.question(
                self, "A take is recording", "A take is being recorded. Keep it and quit?",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard |
                QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
            if answer == QMessageBox.StandardButton.Cancel:
                event.ignore()
                return
            keep = answer != QMessageBox.StandardButton.Discard
        save_session(self)
        self.flow.closed = True
        self._timer.stop()
        self.writer.flush()
        self.watchdog.stop()
        self.text_guard.remove()
        self.review.close()
        for view in (self.viewport, *self.camera_views):
            view.shutdown()
        self.station.stop(keep=keep)
        self.validation.shutdown()
        self.writer.close()
        self.store.close()
        super().closeEvent(event)
