"""What the control loop sends back to the operator's device each tick, without blocking:
body poses to a headset (scene geometry once), fingertip contact forces to a glove, the HUD when
it changes. Devices that cannot show something ignore it (``Device.publish_*`` are no-ops).
"""
from __future__ import annotations

import mujoco
import numpy as np

from devices.webxr.scene_msgs import geoms_from_model
from teleop.core.conventions import SIDES


class FingertipForces:
    """(2, 5) contact normal force (N) on each fingertip pad, rows left / right, thumb first."""

    def __init__(self, model: mujoco.MjModel, layout):
        self.model = model
        self.slot = {}
        for row, side in enumerate(SIDES):
            for col, geom in enumerate(layout.hands[side].tip_geoms):
                self.slot[model.geom(geom).id] = (row, col)
        self._f6 = np.zeros(6)

    def __call__(self, data: mujoco.MjData) -> np.ndarray:
        out = np.zeros((2, 5))
        for i in range(data.ncon):
            c = data.contact[i]
            where = self.slot.get(c.geom1) or self.slot.get(c.geom2)
            if where is not None:
                mujoco.mj_contactForce(self.model, data, i, self._f6)
                out[where] += abs(self._f6[0])
        return out


class DevicePublisher:
    def __init__(self, device, model: mujoco.MjModel, layout, spec=None):
        self.device = device
        self.model = model
        self.forces = FingertipForces(model, layout)
        self.body_ids = sorted({int(b) for b in model.geom_bodyid if b != 0})
        self.body_names = [model.body(i).name for i in self.body_ids]
        self.subtask_names = [s.name for s in spec.subtasks] if spec is not None else []
        self._scene_sent = False
        self._hud = None
        self.recording = False
        self.hud_extra: dict = {}
        self.display_qpos: np.ndarray | None = None
        self._display: mujoco.MjData | None = None     # scratch data: the display pose's kinematics

    def __call__(self, session, report) -> None:
        data = session.rt.sim.data
        if not self._scene_sent:
            self.device.publish_scene(geoms_from_model(self.model), hud_anchor=hud_anchor(session.rt.sim.scene))
            self._scene_sent = True
        shown = self._shown(data)
        poses = np.concatenate([shown.xpos[self.body_ids], shown.xquat[self.body_ids]], axis=1)
        self.device.publish_poses(dict(zip(self.body_names, poses)), seq=report.tick)
        self.device.publish_haptics(self.forces(data))
        hud = {**hud_state(report, self.subtask_names, self.recording or session.recorder is not None),
               **self.hud_extra}
        if hud != self._hud:
            self.device.publish_hud(hud)
            self._hud = hud


    def _shown(self, live: mujoco.MjData) -> mujoco.MjData:
        """The live data, or the display pose's forward kinematics (a qpos of another size is
        not this model's: the live robot is shown rather than a wrong pose)."""
        qpos = self.display_qpos
        if qpos is None or qpos.shape != (self.model.nq,):
            return live
        if self._display is None:
            self._display = mujoco.MjData(self.model)
        self._display.qpos[:] = qpos
        mujoco.mj_kinematics(self.model, self._display)
        return self._display


def hud_state(report, subtask_names, recording: bool) -> dict:
    """What the operator's HUD says after this tick: the instruction and checklist, recording,
    and the truth about the robot: its engage state, why it holds, and whether the episode is over."""
    hud = {"instruction": report.instruction, "recording": recording,
           "progress": round(report.progress, 1), "status": report.engage_state,
           "engage": report.engage_state, "reason": report.reason if report.engage_state == "hold" else "",
           "subtasks": [{"name": n, "done": bool(d)} for n, d in zip(subtask_names, report.latched)],
           "ended": bool(report.done), "result": ""}
    if report.done:
        outcome = "strict success" if report.strict_success else "not a strict success"
        hud["result"] = f"{outcome}, progress {report.progress:.0f}/100"
    return hud


HUD_ABOVE_TABLE_M = 0.12         # the HUD's bottom edge above the table top
HUD_BEHIND_EDGE_M = 0.05         # ... and this far beyond its far edge


def hud_anchor(scene) -> tuple[float, float, float] | None:
    """Where a headset's HUD sits (world frame, its bottom edge centre): above and just behind the
    table's far edge, so it stays in view without hiding the work area when the operator looks
    down at the table (a head-locked HUD covered the middle of the table)."""
    table = getattr(scene.params, "table", None)
    if table is None:
        return None
    return (table.center[0] + table.half_size[0] + HUD_BEHIND_EDGE_M, table.center[1],
            table.top_z + HUD_ABOVE_TABLE_M)
