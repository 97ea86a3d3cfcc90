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
* Stale frames, or every required hand lost, while engaged -> HOLD: the action holds and the tick
  is marked. One hand lost while the other is tracked holds THAT side only (its joints, given
  ``side_joints``): the other keeps following; the tick is marked and ``held_sides`` names it.
* Leaving HOLD or engaging -> EASING: joints move toward the target at most ``ease_velocity``
  rad/s until within ``ease_tolerance``; then ENGAGED (still clamped at ``follow_velocity``). A
  side whose hand comes back eases the same way on its own.
* Cartesian easing: a hand that comes back (after a HOLD, or after its side was held) does not
  snap to where the operator's hand now maps: its target starts at the robot's wrist
  (``robot_wrists``) and glides to the operator's hand at ``ease_speed`` (operator-frame m/s; the
  session sets it from the robot wrist speed and the arm scale). With ``wrist_positions`` (joint
  vector -> robot wrist positions) the easing joint steps are also scaled so no wrist moves faster
  than ``ease_wrist_speed`` m/s: the guarantee, whatever the joint-space path does.
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
    request_wait_s: float = 2.0            # an engage key pressed while frames are stale waits this long for one
    hold_per_side: bool = True             # one hand lost holds its side only (False: both)
    ease_speed: float = 0.0                # m/s, operator frame: a returning hand glides in (0: jumps)
    ease_wrist_speed: float = 0.0          # m/s, robot wrists while easing (needs wrist_positions; 0: off)


@dataclass(frozen=True)
class GateDecision:
    state: EngageState
    follow: bool                   # retarget ``frame`` and pass the result to ``command``
    frame: OperatorFrame | None    # the device frame with the clutch offsets applied
    marked: bool                   # a dropout tick (held because of stale / lost tracking)
    reason: str                    # why not following, or which side is held ("" when all follow)
    anchored: bool                 # offsets re-anchored on this tick
    held_sides: tuple[str, ...] = ()   # sides held this tick while the other follows (hand lost)


class EngageGate:
    """``side_joints``: side -> indices of that side's joints in the action vector (so one side can
    hold while the other follows; without it a held side holds every joint). ``wrist_positions``:
    action vector -> {side: robot wrist position (3,)} for the Cartesian ease limit."""

    def __init__(self, config: EngageConfig = EngageConfig(), side_joints: dict | None = None,
                 wrist_positions=None, arm_joints: dict | None = None):
        self.config = config
        self.side_joints = None if side_joints is None else {s: np.asarray(i) for s, i in side_joints.items()}
        self.arm_joints = None if arm_joints is None else {s: np.asarray(i) for s, i in arm_joints.items()}
        self.wrist_positions = wrist_positions
        self.state = EngageState.DISENGAGED
        self.offsets = {side: np.zeros(3) for side in SIDES}
        self.glide = {side: np.zeros(3) for side in SIDES}   # extra offset, decays at ease_speed
        self.held_sides: tuple[str, ...] = ()
        self.easing_sides: set[str] = set()
        self._last_out: dict[str, np.ndarray] = {}   # clutched wrist positions while following
        self._request: bool | None = None
        self._request_since: float | None = None     # when a waiting engage request was first seen
        self._device_flag = False
        self._pinch_since: float | None = None
        self._pinch_released = True
        self._last_now: float | None = None

    def request(self, engaged: bool) -> None:
        """Engage / disengage from a key or UI button; applied on the next ``observe`` (an engage
        onto a stale or missing frame waits up to ``request_wait_s`` for a fresh one)."""
        self._request, self._request_since = bool(engaged), None

    def reset_anchor(self) -> None:
        """Back to the absolute operator -> robot mapping (no clutch offsets)."""
        self.offsets = {side: np.zeros(3) for side in SIDES}
        self.glide = {side: np.zeros(3) for side in SIDES}
        self._last_out.clear()

    # ---- state machine ------------------------------------------------------------------------
    def observe(self, reading: Reading, now: float, robot_wrists: dict | None = None) -> GateDecision:
        dt = 0.0 if self._last_now is None else max(0.0, now - self._last_now)
        self._last_now = now
        frame = reading.frame
        want = self._wants_engage(frame, now, reading.stale)
        if want is False:
            self.state = EngageState.DISENGAGED
        elif want is True and self.state in (EngageState.DISENGAGED, EngageState.ARMING):
            self.state = EngageState.EASING
            self.held_sides, self.easing_sides = (), set()
            self.glide = {side: np.zeros(3) for side in SIDES}
            return self._follow(frame, True, robot_wrists, reading, dt)
        if self.state in (EngageState.DISENGAGED, EngageState.ARMING):
            self.state = EngageState.ARMING if self._pinch_since is not None else EngageState.DISENGAGED
            return GateDecision(self.state, False, None, False, "disengaged", False)
        problem = self._dropout(reading)
        if problem:
            self.state = EngageState.HOLD
            return GateDecision(self.state, False, None, True, problem, False)
        if self.state is EngageState.HOLD:
            self.state = EngageState.EASING
            reanchor = self.config.reanchor_after_dropout
            if not reanchor:
                self._start_glides(frame, SIDES, robot_wrists)
            return self._follow(frame, reanchor, robot_wrists, reading, dt)
        return self._follow(frame, False, robot_wrists, reading, dt)

    def _lost(self, frame: OperatorFrame) -> dict[str, str]:
        """Required sides whose hand is not usable this frame -> why."""
        out = {}
        for side in self.config.required_hands:
            hand = frame.hand(side)
            if hand is None or not hand.wrist_tracked:
                out[side] = f"tracking lost: {side}"
            elif hand.tracked_fraction < self.config.min_tracked_fraction:
                out[side] = f"tracking lost: {side} ({hand.tracked_fraction:.0%} of nodes)"
        return out

    def _start_glides(self, frame: OperatorFrame, sides, robot_wrists: dict | None) -> None:
        """The hands of ``sides`` start where the robot's wrists are and glide to the operator's."""
        if not robot_wrists or self.config.ease_speed <= 0:
            return
        for side in sides:
            hand = frame.hand(side)
            if hand is not None and side in robot_wrists:
                self.glide[side] = np.asarray(robot_wrists[side], float) - (hand.wrist.position + self.offsets[side])

    def _wants_engage(self, frame: OperatorFrame | None, now: float, stale: bool) -> bool | None:
        """True / False for an engage / disengage event this tick, None for no event."""
        requested, event = self._request, self._request
        self._request = None
        if requested and self._request_since is None:
            self._request_since = now
        if frame is not None and not stale:
            if frame.engage != self._device_flag:
                self._device_flag = frame.engage
                event = frame.engage if event is None else event
            if self.state in (EngageState.DISENGAGED, EngageState.ARMING) and self._pinch_held(frame, now):
                event = True if event is None else event
        if event is not None and self._dropout_reason_for_engage(frame, stale):
            # Cannot engage onto a missing / stale frame. A key press is not lost to a moment of
            # stale tracking: it waits (briefly) for a fresh frame.
            if requested and now - self._request_since < self.config.request_wait_s:
                self._request = True
            return None if event else False
        self._request_since = None
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
        """Why the whole robot must hold ("" when at least one required side can follow)."""
        if reading.frame is None:
            return "no frame"
        if reading.stale:
            return f"stale ({reading.age * 1000:.0f} ms)"
        lost = self._lost(reading.frame)
        if lost and (not self.config.hold_per_side or len(lost) == len(self.config.required_hands)):
            return "; ".join(lost.values())
        return ""

    # ---- clutch -------------------------------------------------------------------------------
    def _follow(self, frame, anchor: bool, robot_wrists, reading: Reading, dt: float = 0.0) -> GateDecision:
        problem = self._dropout(reading)
        if problem:                       # engaged onto a frame that cannot be used: hold
            self.state = EngageState.HOLD
            return GateDecision(self.state, False, None, True, problem, False)
        lost = self._lost(frame)
        back = [s for s in self.held_sides if s not in lost]
        if back and not anchor:
            self._start_glides(frame, back, robot_wrists)
            self.easing_sides.update(back)
        self.held_sides = tuple(s for s in SIDES if s in lost)
        if anchor:
            self._anchor(frame, robot_wrists)
        clutched = self.apply_offsets(frame)
        self._decay_glides(dt)
        hands = {}
        for side in SIDES:
            hand = None if side in self.held_sides else clutched.hand(side)
            hands[side] = hand
            if hand is not None:
                self._last_out[side] = hand.wrist.position.copy() - self.glide[side]
        if self.held_sides:
            clutched = dataclasses.replace(clutched, left=hands["left"], right=hands["right"])
        reason = "; ".join(lost[s] for s in self.held_sides)
        return GateDecision(self.state, True, clutched, bool(self.held_sides), reason, anchor, self.held_sides)

    def _decay_glides(self, dt: float) -> None:
        step = self.config.ease_speed * dt
        for side in SIDES:
            g = self.glide[side]
            norm = float(np.linalg.norm(g))
            self.glide[side] = np.zeros(3) if norm <= step else g * (1.0 - step / norm)

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
            hand, off = frame.hand(side), self.offsets[side] + self.glide[side]
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
    def command(self, target: np.ndarray | None, current: np.ndarray, dt: float,
                unsettled: tuple[str, ...] = ()) -> np.ndarray:
        """The joint targets to send: ``current`` (held) unless following, then a step from
        ``current`` toward ``target`` bounded by the state's velocity times ``dt``; a held side
        keeps its joints, an easing side eases. ``unsettled``: sides whose target was itself eased
        (the retargeter moving them at the ease speed): easing does not end for them yet. (n,)"""
        current = np.asarray(current, dtype=np.float64)
        if target is None or self.state not in (EngageState.EASING, EngageState.ENGAGED):
            return current.copy()
        target = np.asarray(target, np.float64)
        cfg = self.config
        easing = self.state is EngageState.EASING
        limit = np.broadcast_to(np.asarray(cfg.ease_velocity if easing else cfg.follow_velocity) * dt,
                                current.shape).copy()
        eased = np.full(current.shape, easing)
        if self.side_joints is not None:
            for side in self.easing_sides:
                limit[self.side_joints[side]] = np.broadcast_to(np.asarray(cfg.ease_velocity) * dt,
                                                                current.shape)[self.side_joints[side]]
                eased[self.side_joints[side]] = True
        out = current + np.clip(target - current, -limit, limit)
        held = np.zeros(current.shape, bool)
        for side in self.held_sides:
            if self.side_joints is None:
                held[:] = True
            else:
                held[self.side_joints[side]] = True
        out[held] = current[held]
        if eased.any():
            out = self._limit_wrist_speed(current, out, dt, eased)
        if easing and np.max(np.abs(target - out)[~held], initial=0.0) <= cfg.ease_tolerance \
                and not any(self.glide[s].any() for s in SIDES) and not unsettled:
            self.state = EngageState.ENGAGED
            self.easing_sides.clear()
        for side in list(self.easing_sides):
            idx = self.side_joints[side]
            if np.max(np.abs(target[idx] - out[idx])) <= cfg.ease_tolerance and not self.glide[side].any() \
                    and side not in unsettled:
                self.easing_sides.discard(side)
        return out

    def _limit_wrist_speed(self, current: np.ndarray, out: np.ndarray, dt: float, eased: np.ndarray) -> np.ndarray:
        """Scale each easing side's arm step so its wrist moves at most ``ease_wrist_speed * dt``."""
        cfg = self.config
        if self.wrist_positions is None or self.arm_joints is None or cfg.ease_wrist_speed <= 0:
            return out
        budget = cfg.ease_wrist_speed * dt
        start = self.wrist_positions(current)
        for side, idx in self.arm_joints.items():
            if not eased[idx].any():
                continue
            step = out[idx] - current[idx]
            scale = 1.0
            for _ in range(4):                         # the wrist path is nearly linear in a small step
                trial = out.copy()
                trial[idx] = current[idx] + scale * step
                moved = float(np.linalg.norm(self.wrist_positions(trial)[side] - start[side]))
                if moved <= budget * (1 + 1e-9):
                    break
                scale *= 0.97 * budget / moved
            out[idx] = current[idx] + scale * step
        return out
