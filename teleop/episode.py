"""One headless episode, end to end: task runtime, retargeter, device, session, optional take.

The device is made by a builder from :data:`DEVICE_BUILDERS` (a registry: each builder knows what
its device needs — a plan, a take, an endpoint — so nothing here branches on device names).
"""
from __future__ import annotations

import dataclasses
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from devices import create_device
from recordings.takefile import read_take
from retarget import OperatorProfile, load_config
from teleop.errors import ConfigError, choices
from teleop.loop import RealtimeLoop
from teleop.publish import DevicePublisher
from teleop.session import Session, replay_device
from teleop.tasks import TaskRuntime


@dataclass
class EpisodeOptions:
    task: str
    device: str = "synthetic"
    seed_index: int = 0
    episode_index: int = 0
    realtime: bool | None = None          # None: the device's natural clock
    max_seconds: float | None = None
    retarget_config: str | None = None
    profile: str | None = None
    take: str | None = None               # replay: the take whose frames to play
    device_options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class BuiltDevice:
    device: object
    realtime: bool                        # natural clock: paced at the control rate
    finished: Callable[[], bool]          # the stream has nothing more to give
    per_episode: bool = False             # planned / recorded for one episode: rebuild on reset


def _synthetic(opts, rt, retargeter) -> BuiltDevice:
    from teleop.synthetic.human import HumanNoise
    from teleop.synthetic.operator import synthetic_device

    clock = "realtime" if opts.realtime else "lockstep"
    noise = HumanNoise(**opts.device_options)      # e.g. {"dropout_per_s": 0.5}
    dev = synthetic_device(rt, retargeter, seed=opts.episode_index, clock=clock, noise=noise)
    return BuiltDevice(dev, bool(opts.realtime), lambda: dev.finished, per_episode=True)


def _replay(opts, rt, retargeter) -> BuiltDevice:
    if not opts.take:
        raise ConfigError("the replay device needs a take to play: --from FILE")
    take = read_take(Path(opts.take))
    rt.restore(take.initial_state)          # start exactly where the take started
    dev = replay_device(take, clock="realtime" if opts.realtime else "lockstep")
    return BuiltDevice(dev, bool(opts.realtime), lambda: dev.finished, per_episode=True)


def _live(name: str):
    def build(opts, rt, retargeter) -> BuiltDevice:
        return BuiltDevice(create_device(name, **opts.device_options), True, lambda: False)
    return build


DEVICE_BUILDERS: dict[str, Callable] = {"synthetic": _synthetic, "replay": _replay, "glove": _live("glove"),
                                        "webxr": _live("webxr")}


def config_meta(config_path: str | None, profile_path: str | None) -> dict:
    """Retarget configuration text + hash and the operator profile, for the take's metadata."""
    path = Path(config_path) if config_path else Path(load_config().source)
    text = path.read_text()
    profile = Path(profile_path).read_text() if profile_path else ""
    return {"retarget_config": text, "retarget_config_hash": hashlib.sha256(text.encode()).hexdigest()[:16],
            "operator_profile": profile}


class Episode:
    def __init__(self, opts: EpisodeOptions):
        if opts.device not in DEVICE_BUILDERS:
            raise ConfigError(f"unknown device {opts.device!r}; valid choices: {choices(sorted(DEVICE_BUILDERS))}")
        if opts.take:                       # a replay re-runs the take's own task and episode
            meta = read_take(Path(opts.take)).meta
            opts = dataclasses.replace(opts, task=meta.task_id, seed_index=meta.seed_index,
                                       episode_index=meta.episode_index)
        self.opts = opts
        self.rt = TaskRuntime(opts.task)
        self.rt.reset(opts.seed_index, opts.episode_index)
        config = load_config(opts.retarget_config) if opts.retarget_config else load_config()
        profile = OperatorProfile.load(opts.profile) if opts.profile else None
        self.retargeter = config.build(self.rt.sim.scene, profile=profile)
        built = DEVICE_BUILDERS[opts.device](opts, self.rt, self.retargeter)
        self.device, self.realtime, self._finished = built.device, built.realtime, built.finished
        self.publisher = DevicePublisher(self.device, self.rt.sim.model, self.rt.sim.scene.layout, self.rt.spec)
        self.session = Session(self.rt, self.device, self.retargeter, publishers=(self.publisher,))
        self.reports = []

    def max_ticks(self) -> int:
        seconds = self.opts.max_seconds
        horizon = self.rt.scorer.horizon
        return int(seconds / self.rt.sim.scene.control_dt) if seconds else horizon

    def _over(self) -> bool:
        last = self.reports[-1] if self.reports else None
        return (last is not None and last.done) or self._finished() or len(self.reports) >= self.max_ticks()

    def run(self, store=None, operator: str = "operator", on_tick=None):
        """Run to the end (done, horizon, stream end); returns (EpisodeResult, Take or None)."""
        if store is not None:
            self.session.start_recording(store, operator, self.opts.seed_index, self.opts.episode_index,
                                         **config_meta(self.opts.retarget_config, self.opts.profile))
        self.device.connect()
        try:
            self._run_paced(on_tick) if self.realtime else self._run_fast(on_tick)
        finally:
            self.device.close()
        take = self.session.stop_recording(keep=True)
        return self.rt.result(), take

    def _step(self, on_tick) -> None:
        self.reports.append(self.session.tick())
        if on_tick is not None:
            on_tick(self.reports[-1])

    def _run_fast(self, on_tick) -> None:
        while not self._over():
            self._step(on_tick)

    def _run_paced(self, on_tick) -> None:
        loop = RealtimeLoop(lambda: self._step(on_tick), 1.0 / self.rt.sim.scene.control_dt, name="episode")
        loop.start()
        try:
            while loop.running and not self._over():
                time.sleep(0.05)
        except KeyboardInterrupt:
            pass
        finally:
            loop.stop()
        if loop.error is not None:
            raise loop.error

    def timing(self) -> dict:
        """Per-tick timing figures of the run so far (ms)."""
        def pct(key, q):
            values = np.array([getattr(r, key) for r in self.reports], float)
            values = values[np.isfinite(values)]
            return round(float(np.percentile(values, q)), 3) if values.size else None
        return {f"{k}_p{q}": pct(k, q) for k in ("tick_ms", "retarget_ms", "physics_ms", "overhead_ms",
                                                    "frame_age_ms") for q in (50, 99)}
