"""What the operator's flow adds to a device's HUD (a headset): the mode, the take's elapsed and
remaining time, the task's accepted count and the buttons that apply now — what the window's
banner (``ui.overlay``) says, for an operator who cannot see the window.

Each button is an operator action (``teleop.core.conventions.OPERATOR_ACTIONS``) the page sends
back when pinched; it then runs through ``FlowController.trigger`` like the key, so a button
shown a moment too long (the HUD lags the flow by a refresh) is refused the way a late key is.
"""
from __future__ import annotations

import math

from ui.record_panel import REJECT_REASONS

# The HUD is re-sent only when it changes: whole seconds change it once a second, not every tick.
HUD_TIME_STEP_S = 1.0


def buttons(mode: str, connected: bool, rejecting: bool, has_verdicts: bool) -> list[dict]:
    """The HUD buttons for the flow's state, as the keys of that state (``ui.keys``)."""
    def button(label: str, name: str, arg=None) -> dict:
        return {"label": label, "name": name, "arg": arg}
    if mode == "REVIEW" and rejecting:           # R pressed: the reasons, as the keys 1..7
        return [button(reason, "reason", i + 1) for i, reason in enumerate(REJECT_REASONS)] + \
            [button("Back", "reject")]
    if mode == "REVIEW":
        return [button("Accept", "accept"), button("Reject…", "reject"), button("Re-record", "rerecord")]
    if mode == "RECORDING":
        return [button("Stop", "record"), button("Re-record", "rerecord")]
    if mode == "LIVE":
        return ([button("Record", "record")] if connected else []) + \
            ([button("Undo verdict", "undo")] if has_verdicts else [])
    return []                                    # starting / finishing: nothing to press yet


def flow_hud(mode: str, snap, review, accepted: int, target: int, rejecting: bool = False,
             has_verdicts: bool = False) -> dict:
    """The flow's HUD fields (``devices.webxr.scene_msgs.hud_message``): during a take its
    elapsed time and the time to the horizon; in review the replay's position and what is left."""
    elapsed, remaining = 0.0, None
    if mode == "RECORDING":
        elapsed, remaining = snap.elapsed_s, snap.remaining_s
    elif mode == "REVIEW" and review is not None and review.take is not None:
        hz = review.take.meta.control_hz
        elapsed, remaining = review.tick / hz, (review.take.length - review.tick) / hz
    return {"mode": mode, "elapsed_s": _floor(elapsed),
            "remaining_s": None if remaining is None else _ceil(remaining),
            "accepted": int(accepted), "target": int(target),
            "buttons": buttons(mode, snap.connected, rejecting, has_verdicts)}


def _floor(seconds: float) -> float:
    return math.floor(seconds / HUD_TIME_STEP_S) * HUD_TIME_STEP_S


def _ceil(seconds: float) -> float:
    return max(0.0, math.ceil(seconds / HUD_TIME_STEP_S) * HUD_TIME_STEP_S)
