"""Engage (clutch) and dropout safety: a small pure state machine between device and retargeter.

Per control tick the Session calls::

    decision = gate.observe(device.read(), now)            # what to do with this tick's frame
    target = retarget(decision.frame) if decision.follow else None
    action = gate.command(target, last_action, dt)          # held, eased in, or followed

* Nothing moves until the operator engages: a pinch (thumb tip to index tip) held
  ``pinch_hold_s``, the device's engage flag (glove button, rising edge) or ``request(True)``
  (a key). ``request(False)`` or the flag's falling edge disengages; a pinch never disengages,
  because pinching is also how objects are grasped.
* On engage the operator -> robot translation offsets re-anchor: with ``robot_wrists`` (the
  robot's wrists expressed in the operator frame) the operator's hands map exactly onto them;
  otherwise the hands continue from where they were at the last disengage (a clutch). The
  first engage without ``robot_wrists`` keeps the absolute mapping.
* Stale frames or lost tracking while engaged -> HOLD: the action holds and the tick is marked.
* Leaving HOLD or engaging -> EASING: joints move toward the target at most ``ease_velocity``
  rad/s until within ``ease_tolerance``; then ENGAGED (still clamped at ``follow_velocity``).
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import numpy as np

from devices.base import Reading
from devices.frame import SIDES, HandFrame, OperatorFrame, Pose


class EngageState(enum.Enum):
    DISENGAGED = "disengaged"
    ARMING = "arming"          # pinch held, not long enough yet
    EASING = "easing"
    ENGAGED = "engaged"
    HOLD = "hold"              # engaged, but the frame is stale or tracking was lost


@dataclass(frozen=True)
class EngageConfig:
    pinch_hold_s: float = 0.3
    pinch_distance: float = 0.02           # m, thumb tip to index tip
    pinch_hands: tuple[str, ...] = SIDES   # a pinch on any of these hands engages
    required_hands: tuple[str, ...] = SIDES
    min_tracked_fraction: float = 0.7      # of a required hand's 21 nodes
    ease_velocity: float = 0.6             # rad/s (scalar or per-joint array)
    follow_velocity: float = 4.0           # rad/s safety clamp while engaged
    ease_tolerance: float = 0.01           # rad
    reanchor_after_dropout: bool = False   # True: offsets re-anchor after a HOLD as well


@dataclass(frozen=True)
class GateDecision:
    state: EngageState
    follow: bool                   # retarget ``frame`` and pass the result to ``command``
    frame: OperatorFrame | None    # the device frame with the clutch offsets applied
    marked: bool                   # a dropout tick (held because of stale / lost tracking)
    reason: str                    # why not following ("" when following)
    anchored: bool                 # offsets re-anchored on this tick


class EngageGate:
    def __init__(self, config: EngageConfig = EngageConfig()):
        self.config = config
        self.state = EngageState.DISENGAGED
        self.offsets = {side: np.zeros(3) for side in SIDES}
        self._last_out: dict[str, np.ndarray] = {}   # clutched wrist positions while following
        self._request: bool | None = None
        self._device_flag = False
        self._pinch_since: float | None = None
        self._pinch_released = True

    def request(self, engaged: bool) -> None:
        """Engage / disengage from a key or UI button; applied on the next ``observe``."""
        self._request = bool(engaged)

    def reset_anchor(self) -> None:
        """Back to the absolute operator -> robot mapping (no clutch offsets)."""
        self.offsets = {side: np.zeros(3) for side in SIDES}
        self._last_out.clear()

    # ---- state machine ------------------------------------------------------------------------
    def observe(self, reading: Reading, now: float, robot_wrists: dict | None = None) -> GateDecision:
        frame = reading.frame
        want = self._wants_engage(frame, now, reading.stale)
        if want is False:
            self.state = EngageState.DISENGAGED
        elif want is True and self.state in (EngageState.DISENGAGED, EngageState.ARMING):
            self.state = EngageState.EASING
            return self._follow(frame, anchor=True, robot_wrists=robot_wrists, reading=reading)
        if self.state in (EngageState.DISENGAGED, EngageState.ARMING):
            self.state = EngageState.ARMING if self._pinch_since is not None else EngageState.DISENGAGED
            return GateDecision(self.state, False, None, False, "disengaged", False)
        problem = self._dropout(reading)
        if problem:
            self.state = EngageState.HOLD
            return GateDecision(self.state, False, None, True, problem, False)
        if self.state is EngageState.HOLD:
            self.state = EngageState.EASING
            return self._follow(frame, self.config.reanchor_after_dropout, robot_wrists, reading)
        return self._follow(frame, False, robot_wrists, reading)

    def _wants_engage(self, frame: OperatorFrame | None, now: float, stale: bool) -> bool | None:
        """True / False for an engage / disengage event this tick, None for no event."""
        event = self._request
        self._request = None
        if frame is not None and not stale:
            if frame.engage != self._device_flag:
                self._device_flag = frame.engage
                event = frame.engage if event is None else event
            if self.state in (EngageState.DISENGAGED, EngageState.ARMING) and self._pinch_held(frame, now):
                event = True if event is None else event
        if event is not None and self._dropout_reason_for_engage(frame, stale):
            return None if event else False     # cannot engage onto a missing / stale frame
        return event

    def _pinch_held(self, frame: OperatorFrame, now: float) -> bool:
        pinching = any(self._pinching(frame.hand(side)) for side in self.config.pinch_hands)
        if not pinching:
            self._pinch_since, self._pinch_released = None, True
            return False
        if not self._pinch_released:
            return False          # still the pinch that was held at the last disengage
        if self._pinch_since is None:
            self._pinch_since = now
        if now - self._pinch_since >= self.config.pinch_hold_s:
            self._pinch_since, self._pinch_released = None, False
            return True
        return False

    def _pinching(self, hand: HandFrame | None) -> bool:
        return (hand is not None and bool(hand.tracked[4] and hand.tracked[8])
                and hand.pinch_distance() < self.config.pinch_distance)

    def _dropout_reason_for_engage(self, frame, stale: bool) -> str:
        return "no frame" if frame is None else ("stale" if stale else "")

    def _dropout(self, reading: Reading) -> str:
        if reading.frame is None:
            return "no frame"
        if reading.stale:
            return f"stale ({reading.age * 1000:.0f} ms)"
        for side in self.config.required_hands:
            hand = reading.frame.hand(side)
            if hand is None or not hand.wrist_tracked:
                return f"tracking lost: {side}"
            if hand.tracked_fraction < self.config.min_tracked_fraction:
                return f"tracking lost: {side} ({hand.tracked_fraction:.0%} of nodes)"
        return ""

    # ---- clutch -------------------------------------------------------------------------------
    def _follow(self, frame, anchor: bool, robot_wrists, reading: Reading) -> GateDecision:
        problem = self._dropout(reading)
        if problem:                       # engaged onto a frame that cannot be used: hold
            self.state = EngageState.HOLD
            return GateDecision(self.state, False, None, True, problem, False)
        if anchor:
            self._anchor(frame, robot_wrists)
        clutched = self.apply_offsets(frame)
        for side in SIDES:
            hand = clutched.hand(side)
            if hand is not None:
                self._last_out[side] = hand.wrist.position.copy()
        return GateDecision(self.state, True, clutched, False, "", anchor)

    def _anchor(self, frame: OperatorFrame, robot_wrists: dict | None) -> None:
        for side in SIDES:
            hand = frame.hand(side)
            if hand is None:
                continue
            if robot_wrists and side in robot_wrists:
                self.offsets[side] = np.asarray(robot_wrists[side], float) - hand.wrist.position
            elif side in self._last_out:
                self.offsets[side] = self._last_out[side] - hand.wrist.position

    def apply_offsets(self, frame: OperatorFrame) -> OperatorFrame:
        """``frame`` with each hand translated by its clutch offset (wrist, nodes, raw poses)."""
        hands = {}
        for side in SIDES:
            hand, off = frame.hand(side), self.offsets[side]
            if hand is None or not off.any():
                hands[side] = hand
                continue
            raw = hand.raw
            if raw is not None and raw.ndim == 2 and raw.shape[1] == 7:     # (n, 7) poses
                raw = raw.copy()
                raw[:, :3] += off
            hands[side] = dataclasses.replace(hand, wrist=Pose(hand.wrist.position + off, hand.wrist.quat),
                                              keypoints=hand.keypoints + off, raw=raw)
        return dataclasses.replace(frame, left=hands["left"], right=hands["right"])

    # ---- joint output -------------------------------------------------------------------------
    def command(self, target: np.ndarray | None, current: np.ndarray, dt: float) -> np.ndarray:
        """The joint targets to send: ``current`` (held) unless following, then a step from
        ``current`` toward ``target`` bounded by the state's velocity times ``dt``. (n,)"""
        current = np.asarray(current, dtype=np.float64)
        if target is None or self.state not in (EngageState.EASING, EngageState.ENGAGED):
            return current.copy()
        easing = self.state is EngageState.EASING
        limit = np.asarray(self.config.ease_velocity if easing else self.config.follow_velocity) * dt
        out = current + np.clip(np.asarray(target, np.float64) - current, -limit, limit)
        if easing and np.max(np.abs(np.asarray(target) - out)) <= self.config.ease_tolerance:
            self.state = EngageState.ENGAGED
        return out
