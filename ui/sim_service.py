"""The simulation as the UI sees it: a Sim stepped at the control rate on its own thread.

The UI thread only writes joint targets and reads the latest snapshot; both go through a lock held
for a copy, never for a physics step, so the window cannot stall the loop or vice versa.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from teleop.loop import RealtimeLoop
from teleop.scene import Scene, build_scene
from teleop.sim import Sim


@dataclass(frozen=True)
class Snapshot:
    qpos: np.ndarray          # (nq,) full configuration, for rendering
    targets: np.ndarray       # (58,) joint targets in action order
    tick: int
    sim_time: float


class SimService:
    def __init__(self, scene: Scene | None = None):
        self.scene = scene or build_scene()
        self.sim = Sim(self.scene)
        self.sim.reset(0)
        self._lock = threading.Lock()
        self._targets = self.sim.joint_positions
        self._snapshot = self._take_snapshot()
        self.loop = RealtimeLoop(self._tick, self.scene.params.physics.control_hz, name="sim")

    def start(self) -> None:
        self.loop.start()

    def stop(self) -> None:
        self.loop.stop()

    def set_target(self, index: int, value: float) -> None:
        with self._lock:
            self._targets = self._targets.copy()
            self._targets[index] = value

    def reset(self, seed: int = 0) -> None:
        running = self.loop.running
        self.loop.stop()
        self.sim.reset(seed)
        with self._lock:
            self._targets = self.sim.joint_positions
            self._snapshot = self._take_snapshot()
        if running:
            self.loop.start()

    def snapshot(self) -> Snapshot:
        with self._lock:
            return self._snapshot

    def _take_snapshot(self) -> Snapshot:
        return Snapshot(self.sim.data.qpos.copy(), self._targets.copy(), self.sim.tick, self.sim.data.time)

    def _tick(self) -> None:
        with self._lock:
            targets = self._targets
        self.sim.step(targets)
        snap = self._take_snapshot()
        with self._lock:
            self._snapshot = snap
