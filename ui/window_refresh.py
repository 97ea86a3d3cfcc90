"""The window's 10 Hz refresh (UI thread): the station's snapshot into the panels, the mode
banner, finished takes to the flow, device-requested actions through the keys' path, validation
and review-writer results into the index. Reads snapshots only; never touches the session."""
from __future__ import annotations

import queue

from ui.flow import REVIEW
from ui.hud_flow import flow_hud
from ui.overlay import overlay_for
from ui.take_flags import score_of


class WindowRefresh:
    # -- periodic refresh (UI thread, 10 Hz) ----------------------------------------------------
    def _refresh(self) -> None:
        snap = self.station.snapshot()
        self._run_device_actions()
        if snap.model_version != self._model_version and snap.qpos is not None and not self._reviewing:
            self._attach_live_model()
            self._model_version = snap.model_version
        if self.reconnect_pending and snap.task_id is not None:
            self.reconnect_pending = False
            self.device_panel._connect()
        self._collect_finished_takes()
        mode = self.flow.mode
        self._show_live(snap, mode)
        for report in self.validation.poll():
            self.record_panel.take_status.setText(
                f"{report.take_id}: {'validated ✓' if report.passed else 'validation FAILED'} — {report.reason}")
        indexed, errors = self.writer.poll()
        if indexed or errors:
            self._takes_changed()
        for error in errors:
            self.record_panel.take_status.setText(f"could not save a review decision: {error}")
        if self._counts_dirty:
            self._counts_dirty = False
            self.task_panel.picker.set_counts(self.store.index.counts("validated_pass"))

    def _takes_changed(self) -> None:
        self.browser.refresh()
        self._counts_dirty = True

    def _run_device_actions(self) -> None:
        """Actions a device asked for (a headset button, a glove gesture): the keys' path."""
        while True:
            try:
                name, arg = self.station.operator_actions.get_nowait()
            except queue.Empty:
                return
            self.flow.trigger(name, arg)

    def _attach_live_model(self) -> None:
        model = self.station.snapshot().model or self._bare_layout.model
        self.viewport.set_source(model, self._live_qpos)
        for view in self.camera_views:
            view.set_source(model, self._live_qpos)

    def _show_live(self, snap, mode: str) -> None:
        report, rp = snap.report, self.record_panel
        rp.set_recording(snap.recording, snap.recorded_ticks)
        rp.set_mode(mode, self._mode_detail(snap, mode))
        notice = snap.notice("record")
        rp.set_notice(self.watchdog.problem or (notice.text if notice else ""))
        task_notice = snap.notice("task")
        if task_notice is not None:
            self.task_panel.source.setText(task_notice.text)
        elif self.task_panel.source.text().startswith("loading") and snap.task_id:
            self.task_panel.source.setText("")
        self.device_panel.update_status(snap)
        self.device_panel.show_connection(snap.connection)
        if report is not None and mode != REVIEW:
            self.task_panel.set_instruction(report.instruction)
            self.task_panel.update_score(report.progress, report.latched, report.holds, report.violated)
            self.health.append({"residual_mm": report.residual_mm, "retarget_ms": report.retarget_ms,
                                "tick_ms": report.tick_ms, "frame_age_ms": min(report.frame_age_ms, 1e3)})
            self.health.redraw()
        accepted, target = self.task_panel.picker.accepted(snap.task_id) if snap.task_id in self.specs else (0, 0)
        self.viewport.set_overlay(overlay_for(mode, snap, self.review, accepted, target, self.watchdog.problem))
        self._show_on_device(snap, mode, accepted, target)
        stats = self.station.loop.stats()
        self.status.setText(f"task {snap.task_id or '—'}  episode {snap.episode_index}  "
                            f"loop {stats['tick_ms_p50']:.1f}/{stats['tick_ms_p99']:.1f} ms (p50/p99)  "
                            f"late ticks {stats['late_ticks']}  validating {self.validation.busy}")

    def _show_on_device(self, snap, mode: str, accepted: int, target: int) -> None:
        """The banner's content for the device's HUD, sent when it changes; in review the
        reviewed take's pose instead of the live robot's (so the headset replays it too)."""
        hud = flow_hud(mode, snap, self.review, accepted, target, self.flow.rejecting, bool(self.flow.verdicts))
        if hud != self._device_hud:
            self.station.set_hud_flow(hud)
            self._device_hud = hud
        self._show_review_pose()

    def _show_review_pose(self) -> None:
        take = self.review.take
        if take is None:
            self.station.show_pose(None)
        else:
            self.station.show_pose(take.meta.model_fingerprint, self.review.qpos())

    @staticmethod
    def _mode_detail(snap, mode: str) -> str:
        if mode == "RECORDING":
            left = f" · {snap.remaining_s:.0f} s left" if snap.remaining_s is not None else ""
            stop = f" · stopping in {snap.stopping_in_s:.1f} s" if snap.stopping_in_s is not None else ""
            return f"{snap.elapsed_s:.1f} s{left}{stop}"
        return f"episode {snap.episode_index}" if mode == "LIVE" else ""

    def _collect_finished_takes(self) -> None:
        while True:
            try:
                path = self.station.finished_takes.get_nowait()
            except queue.Empty:
                return
            self.flow.collect(path)                        # indexed, then reviewed at once

    def _on_review_position(self, tick: int) -> None:
        take = self.review.take
        self._show_review_pose()                # the headset follows the replay as it plays
        if take is not None:
            self.record_panel.set_position(tick, take.length)
            self.record_panel.set_playing(self.review.playing)
            self.task_panel.show_review(take.meta.take_id, self.review.replayer.frame(), score_of(take))

