"""The closed-loop synthetic operator: each step is planned when it begins, from the live scene.

A person watching the scene reaches for where an object IS, not where it was at the reset. So each
side keeps a queue of its script steps; a step's keyframes are planned (by the planner's own step
handlers) when it begins, from the object poses of the simulation the loop is stepping, starting
from the hand's last commanded key. After a grasp's lift the operator checks that the object rose
with the hand and retries from its live pose if not; while carrying, an object that drops away
from the palm (a slip) is grasped again (unless its grasp step says ``regrasp: false``). The robot
is still driven only by operator frames.

Threads: on the lock-step clock ``frame_at`` runs on the loop thread between ticks, so it reads the
sim's ``MjData`` directly. On the real-time clock it runs on the device's reader thread while the
loop thread steps the sim, so it never touches that ``MjData``: the loop thread calls
:meth:`LiveStream.publish` (from the device's ``read``) to copy the state into a locked buffer, and
the reader thread poses its own shadow ``MjData`` from that copy.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass

import mujoco
import numpy as np

from teleop.control.synthetic.human import HumanStream
from teleop.control.synthetic.grasp_steps import grasp_lift
from teleop.control.synthetic.motion import Key, Timeline
from teleop.control.synthetic.planner import SETTLE_S, Planner
from teleop.control.synthetic.script import Script, Step

LIFT_FRACTION = 0.5      # a held object rises at least half the planned lift (sag and slack take the rest)
HOLD_MARGIN_M = 0.06     # m: a held object stays this near its planned offset from the palm
SLIP_M = 0.06            # m: object-to-palm distance growing by more than this while carrying is a slip
MAX_GRASP_TRIES = 3      # attempts per grasp step (the first and two retries), then carry on as planned
MAX_REGRASPS = 2         # re-grasps after slips per grasp step
BACKOFF_M = 0.10         # m: after a miss the open hand backs off upward before trying again
BACKOFF_S = 0.6
END_PAD_S = 1.0          # still hands after the last step, as the open-loop plan ended
BOUND_FACTOR = 2.0       # the stream's time bound: retries may at most double the open-loop plan
LANDED_M = 0.05          # m: an object resting this little above a target's top is on it
BACK_OFF = Step("back_off", "auto")     # the open-and-back-off a retry begins with (not a script step)


@dataclass(frozen=True)
class Item:
    """One queued unit of a side's work: script step ``index`` (a retry keeps its step's index)."""
    index: int
    step: Step
    tries: int = 1
    after_slip: bool = False     # a re-grasp after a slip: skipped if the object fell where it was going


@dataclass(frozen=True)
class GraspCheck:
    """What the operator saw after a grasp's lift."""
    rose_m: float            # object height gain since the grasp began
    palm_m: float            # object centre to palm distance
    held: bool


class LivePlanner(Planner):
    """The planner's handlers over live poses: no guessing where earlier steps put things."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.expected: dict[str, np.ndarray] = {}        # object -> where an ``expect`` says it will be
        self.let_go_at: dict[str, float] = {}             # side -> when it stops carrying (sets down, lets go)

    def _shift(self, name: str) -> np.ndarray:
        """An expected object is taken where it is expected until it is seen (near) there."""
        if name not in self.expected:
            return np.zeros(3)
        shift = self.expected[name] - self.q.position(name)
        if np.linalg.norm(shift) < HOLD_MARGIN_M:
            del self.expected[name]
            return np.zeros(3)
        return shift

    def _position(self, name: str) -> np.ndarray:
        return self.q.position(name) + self._shift(name)

    def _extent(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.q.extent(name)
        shift = self._shift(name)
        return lo + shift, hi + shift

    def _expect(self, plan, side: str, a: dict) -> None:
        super()._expect(plan, side, a)
        name = a["object"]
        self.expected[name] = self.q.position(name) + self._moved.pop(name)

    def _aim_held(self, plan, side: str, a: dict) -> None:
        if a.get("aim_held", False) and side in self._held:
            # ``aim_held: true``: aim the object where it sits in the hand now (its live offset from
            # the hand's last commanded pose), not where the grasp expected it (a small round thing
            # ends up a few cm off in the closing fingers, enough to miss a small container).
            name, _, half_height = self._held[side]
            self._held[side] = (name, self.q.position(name) - plan.last.pos, half_height)

    def _move(self, plan, side: str, a: dict) -> None:
        if "over" in a or "over_site" in a:     # a ring swinging in the fingers: re-aimed at each such move
            self._aim_held(plan, side, a)
        super()._move(plan, side, a)

    def _place(self, plan, side: str, a: dict) -> None:
        first = len(plan.keys)
        self._aim_held(plan, side, a)
        super()._place(plan, side, a)
        self._moved.clear()                  # the live pose says where it came to rest
        # Carrying ends where the set-down begins (keys: up, over, above, down): touching the target
        # then may move the object in the hand, which is no slip.
        self.let_go_at[side] = plan.keys[first + 2].t

    def _let_go(self, plan, a: dict) -> None:
        self.let_go_at[next(s for s, p in self.sides.items() if p is plan)] = plan.t
        Planner._let_go(plan, a)


class SideRecorder(Planner):
    """The open-loop planner, noting which hand each step takes (``side: auto`` resolved as before)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.chosen: list[str] = []

    def _side(self, step: Step) -> str:
        self.chosen.append(super()._side(step))
        return self.chosen[-1]


class LiveStream(HumanStream):
    """``frame_at(t, sequence, received)`` that plans each step as it begins; ``end`` once known."""

    def __init__(self, retargeter, shapes, script: Script, planner: LivePlanner, sides: list[str],
                 open_loop_s: float, palm_sites: dict[str, str], rng, noise, data: mujoco.MjData | None = None):
        # Tracking dropouts are drawn over the open-loop plan's length, as before: the same draws (the
        # left hand's first, then the right's), so an episode without retries sees the same noise.
        self.bound, self.end = open_loop_s, float("inf")
        start = {s: Timeline([p.last, Key(open_loop_s, p.last.pos, p.last.rot, p.last.grip, p.last.grasp)])
                 for s, p in planner.sides.items()}
        super().__init__(retargeter, shapes, start, rng, noise)
        self.bound = open_loop_s * BOUND_FACTOR
        self.script, self.planner, self.palm_sites = script, planner, palm_sites
        self.queues = {s: deque() for s in planner.sides}
        for i, (step, side) in enumerate(zip(script.steps, sides)):
            self.queues[side].append(Item(i, step))
        self.active: dict[str, Item | None] = {s: None for s in planner.sides}
        self.began_z: dict[str, float] = {}                  # side -> object height when its grasp began
        self.carrying: dict[str, tuple[str, float, Item]] = {}   # side -> (object, palm distance, its grasp)
        self.regrasps: dict[int, int] = {}                   # grasp step index -> re-grasps after slips
        self.checks: list[tuple[int, str, GraspCheck]] = []  # (step index, side, check): what was seen
        self.slips: list[tuple[int, str, float]] = []        # (step index, side, t)
        self._synced: set[int] = set()
        self._built = {s: 0 for s in planner.sides}
        # Real-time clock: the loop publishes its state here; this thread poses ``data`` from it.
        self._shadow, self._lock, self._state = data, threading.Lock(), None
        self._model = planner.q.model
        for plan in planner.sides.values():
            plan.wait(SETTLE_S)          # engage, let the robot ease in, then move
        self._rebuild()

    # -- the real-time clock's hand-over --------------------------------------------------------
    def publish(self, data: mujoco.MjData) -> None:
        """Loop thread, between ticks: copy the state the planner reads (a no-op on lock step)."""
        if self._shadow is not None:
            state = (data.qpos.copy(), data.mocap_pos.copy(), data.mocap_quat.copy())
            with self._lock:
                self._state = state

    def _pose_shadow(self) -> None:
        with self._lock:
            state, self._state = self._state, None
        if state is not None:
            self._shadow.qpos[:], self._shadow.mocap_pos[:], self._shadow.mocap_quat[:] = state
            mujoco.mj_kinematics(self._model, self._shadow)

    # -- the loop --------------------------------------------------------------------------------
    @property
    def duration(self) -> float:
        return min(self.end, self.bound)

    @duration.setter
    def duration(self, value: float) -> None:      # HumanStream sets it once, from the bound
        pass

    def frame_at(self, t: float, sequence: int, received: float, engage: bool = True):
        if self._shadow is not None:
            self._pose_shadow()
        self.advance(t)
        return super().frame_at(t, sequence, received, engage)

    def advance(self, t: float) -> None:
        for side in self.queues:
            self._watch(side, t)
        while self._start_ready(t):
            pass
        if self.end == float("inf") and not any(self.queues.values()) and not any(self.active.values()):
            self.end = max(p.t for p in self.planner.sides.values()) + END_PAD_S
            for plan in self.planner.sides.values():
                plan.wait(self.end - plan.t)
        self._rebuild()

    def _rebuild(self) -> None:
        for side, plan in self.planner.sides.items():
            if len(plan.keys) != self._built[side]:
                self.timelines[side] = Timeline(list(plan.keys))
                self._built[side] = len(plan.keys)

    def _done(self, index: int) -> bool:
        return all(index != i.index for q in self.queues.values() for i in q) and \
            all(a is None or a.index != index for a in self.active.values())

    def _start_ready(self, t: float) -> bool:
        """Begin the lowest-numbered step that may begin (script order, as the open-loop plan)."""
        ready = []
        for side, queue in self.queues.items():
            if self.active[side] is not None or not queue:
                continue
            item = queue[0]
            barrier = max((j for j, s in enumerate(self.script.steps[:item.index + 1]) if s.sync), default=None)
            if barrier is None or all(self._done(i) for i in range(barrier)):
                ready.append((item.index, side, barrier))
        if not ready:
            return False
        index, side, barrier = min(ready)
        if self._landed(side):
            return True
        first = index == barrier and index not in self._synced     # a retry of a sync step waits no more
        self._synced.add(index)
        self._begin(side, self.queues[side].popleft(), first)
        return True

    def _landed(self, side: str) -> bool:
        """A re-grasp after a slip whose object fell inside the target of the place it was being
        carried to: a person would leave it there, so the re-grasp and that place are dropped.
        A place with ``landed_r`` (opt-in, m) is found past ``move`` steps after the grasp (a carry
        before the set-down) and counts only an object within that distance of the target's centre
        and below its top (in a bottle's mouth, not under its open cap nor on its shut cap)."""
        queue = self.queues[side]
        if not queue[0].after_slip or len(queue) < 2:
            return False
        n = 1
        while n < len(queue) - 1 and queue[n].step.do == "move":
            n += 1
        place = queue[n].step
        if place.do != "place" or (n > 1 and "landed_r" not in place.args):
            return False
        lo, hi = self.planner.q.extent(place.args["target"])
        at = self.planner.q.position(queue[0].step.args["object"])
        if "landed_r" in place.args:     # its centre below the target's top (not on a shut lid), on
            # the floor of one sunk into the table (a bottle's floor at the table's height) too
            centre = self.planner.q.position(place.args["target"])
            near = np.linalg.norm(at[:2] - centre[:2]) <= float(place.args["landed_r"])
            landed = near and lo[2] - LANDED_M <= at[2] <= hi[2]
        else:
            within = np.all(at[:2] >= lo[:2]) and np.all(at[:2] <= hi[:2])
            landed = within and lo[2] <= at[2] <= hi[2] + LANDED_M
        if not landed:
            return False
        for _ in range(n + 1):
            queue.popleft()
        return True

    def _begin(self, side: str, item: Item, sync: bool) -> None:
        plan = self.planner.sides[side]
        if sync:           # starts when everything before it has finished, on every side
            end = max(p.t for p in self.planner.sides.values())
            for other in self.planner.sides.values():
                if end > other.t:
                    other.wait(end - other.t)
        self.active[side] = item
        if item.step.do == "grasp":
            self.began_z[side] = float(self.planner.q.position(item.step.args["object"])[2])
        getattr(self.planner, f"_{item.step.do}")(plan, side, item.step.args)

    def _watch(self, side: str, t: float) -> None:
        plan, item = self.planner.sides[side], self.active[side]
        if side in self.carrying:
            self._watch_slip(side, t)
        item = self.active[side]
        if item is None or t < plan.t:
            return
        self.active[side] = None
        if item.step.do == "grasp" and grasp_lift(item.step.args) > 0:
            self._check_grasp(side, item)

    def _palm_distance(self, side: str, name: str) -> float:
        q = self.planner.q
        return float(np.linalg.norm(q.position(name) - q.site(self.palm_sites[side])))

    def _check_grasp(self, side: str, item: Item) -> None:
        a = item.step.args
        name = a["object"]
        rose = float(self.planner.q.position(name)[2]) - self.began_z[side]
        _, offset, _ = self.planner._held.get(side, (name, np.zeros(3), 0.0))
        palm = self._palm_distance(side, name)
        held = rose >= LIFT_FRACTION * grasp_lift(a) and palm <= float(np.linalg.norm(offset)) + HOLD_MARGIN_M
        self.checks.append((item.index, side, GraspCheck(rose, palm, held)))
        if held:
            self.carrying[side] = (name, palm, item)
            self.planner.let_go_at.pop(side, None)
        elif item.tries < MAX_GRASP_TRIES:
            self.queues[side].appendleft(Item(item.index, item.step, item.tries + 1))
            self._back_off(side, item.index)

    def _watch_slip(self, side: str, t: float) -> None:
        name, palm, grasp = self.carrying[side]
        let_go = self.planner.let_go_at.get(side)
        if let_go is not None and t >= let_go:
            del self.carrying[side]           # let go on purpose: no longer carrying
            return
        if self._palm_distance(side, name) <= palm + SLIP_M:
            return
        del self.carrying[side]
        self.slips.append((grasp.index, side, t))
        # ``regrasp: false`` on the grasp step: a slip is noted and the script carries on (an emptied
        # cup sliding down in the pinch is set down where it was going, not taken and poured again)
        if not grasp.step.args.get("regrasp", True) or self.regrasps.get(grasp.index, 0) >= MAX_REGRASPS:
            return
        self.regrasps[grasp.index] = self.regrasps.get(grasp.index, 0) + 1
        self._cut(side, t)
        self.planner.let_go_at.pop(side, None)
        active, self.active[side] = self.active[side], None
        if active is not None and active is not grasp:
            self.queues[side].appendleft(active)
        self.queues[side].appendleft(Item(grasp.index, grasp.step, grasp.tries, after_slip=True))
        self._back_off(side, grasp.index)

    def _cut(self, side: str, t: float) -> None:
        """Drop the side's keys after ``t`` and hold where the hand is now."""
        plan = self.planner.sides[side]
        pos, rot, grip, grasp = self.timelines[side].sample(t)
        plan.keys = [k for k in plan.keys if k.t <= t] + [Key(t, np.array(pos), np.array(rot), grip, grasp)]

    def _back_off(self, side: str, index: int) -> None:
        """Open, let go and back off upward; the retry then begins from the pose seen after it."""
        plan = self.planner.sides[side]
        self.active[side] = Item(index, BACK_OFF)
        self.planner._held.pop(side, None)
        Planner._let_go(plan, {})
        plan.go(plan.last.pos + [0.0, 0.0, BACKOFF_M], duration=BACKOFF_S)
