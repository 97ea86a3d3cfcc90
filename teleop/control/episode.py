"""Headless episodes, end to end: task runtime, retargeter, device, session, optional takes.

An :class:`Episode` is one session on one task; :meth:`Episode.run` records one episode and
:meth:`Episode.run_many` several consecutive ones on the same session (what the app does): each
starts with :meth:`Session.reset`, and a device planned or recorded for one episode (its config's
``per_episode``) is rebuilt after it. The device is made by its registered config, so nothing
here branches on device names.
"""
from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from devices.config import DeviceConfig, DeviceContext, device_config
from recordings.horizon import store_horizon
from retarget import OperatorProfile, load_config
from teleop.control.horizon import EpisodeHorizon
from teleop.control.loop import RealtimeLoop
from teleop.control.players import load_devices
from teleop.control.session import Session
from teleop.core.errors import ConfigError
from teleop.tasks import TaskRuntime


@dataclass
class EpisodeOptions:
    task: str | None
    device: str = "synthetic"
    seed_index: int = 0
    episode_index: int = 0
    realtime: bool | None = None          # None: the device's natural clock
    max_seconds: float | None = None
    retarget_config: str | None = None
    profile: str | None = None
    device_options: dict = field(default_factory=dict)
    continue_from: str | None = None      # a take file: rewind it to ``at_tick`` and continue from there
    at_tick: int | None = None
    # The horizon learns from the store's accepted takes of the task (recordings.horizon), as in the
    # app; off for the prover and benchmarks, whose episodes must not depend on what ran before.
    horizon_from_store: bool = False


def device_configs() -> dict[str, type[DeviceConfig]]:
    """Every registered device config, by name."""
    return load_devices()


def config_meta(config_path: str | None, profile_path: str | None) -> dict:
    """Retarget configuration text + hash and the operator profile, for the take's metadata."""
    path = Path(config_path) if config_path else Path(load_config().source)
    profile = Path(profile_path).read_text() if profile_path else ""
    return meta_from_texts(path.read_text(), profile)


def meta_from_texts(config_text: str, profile_text: str) -> dict:
    return {"retarget_config": config_text, "retarget_config_hash": config_hash(config_text),
            "operator_profile": profile_text}


def config_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RetargetSetup:
    """The retarget configuration and operator profile an episode runs with, and why."""

    config_text: str
    profile_text: str
    origin: str                 # "default", "--retarget FILE" or "the take's own (hash …)"

    def build(self, scene):
        with tempfile.TemporaryDirectory() as tmp:      # the loaders read files; the texts are the truth
            config_file, profile_file = Path(tmp) / "retarget.yaml", Path(tmp) / "profile.yaml"
            config_file.write_text(self.config_text)
            profile = None
            if self.profile_text:
                profile_file.write_text(self.profile_text)
                profile = OperatorProfile.load(profile_file)
            return load_config(config_file).build(scene, profile=profile)


def retarget_setup(opts: EpisodeOptions, source) -> RetargetSetup:
    """A replay re-retargets with the take's own configuration and profile unless ``--retarget``
    (or ``--profile``) asks for another on purpose; everything else uses the given or default files."""
    recorded = source is not None and bool(source.retarget_config)
    if recorded and not opts.retarget_config and not opts.profile:
        return RetargetSetup(source.retarget_config, source.operator_profile,
                             f"the take's own (hash {config_hash(source.retarget_config)})")
    path = Path(opts.retarget_config) if opts.retarget_config else Path(load_config().source)
    profile = Path(opts.profile).read_text() if opts.profile else ""
    origin = f"--retarget {opts.retarget_config}" if opts.retarget_config else "default"
    if recorded:
        origin += f", re-retargeting a take recorded with hash {config_hash(source.retarget_config)}"
    return RetargetSetup(path.read_text(), profile, origin)


class Episode:
    def __init__(self, opts: EpisodeOptions):
        load_devices()
        self.config = device_config(opts.device).from_options(**opts.device_options)
        resume = _resume_source(opts)
        if resume is not None:              # continuing a take: its task and episode
            opts = dataclasses.replace(opts, task=resume.meta.task_id, seed_index=resume.meta.seed_index,
                                       episode_index=resume.meta.episode_index)
        source = self.config.episode()
        if source is not None:              # the device decides: a replay re-runs its take's episode
            opts = dataclasses.replace(opts, task=source.task_id, seed_index=source.seed_index,
                                       episode_index=source.episode_index)
        if not opts.task:
            raise ConfigError(f"device {opts.device!r} needs a task (--task ID; see `teleop tasks list`)")
        self.opts = opts
        self.realtime = self.config.realtime or bool(opts.realtime)
        self.rt = TaskRuntime(opts.task)
        self.retarget = retarget_setup(opts, source)
        self.retargeter = self.retarget.build(self.rt.sim.scene)
        self.session = Session(self.rt, self.retargeter)
        self.device = None
        self.reports: list = []
        self.horizon: EpisodeHorizon | None = None
        # The task's own horizon (a replayed take's length); the scorer's is set at each run.
        self.task_horizon = source.ticks if source is not None and source.ticks else self.rt.scorer.horizon
        self._start(opts.episode_index, None if source is None else source.initial_state, resume)

    def _start(self, episode_index: int, initial_state=None, resume=None) -> None:
        """Reset the session to ``episode_index`` (or resume a take at ``opts.at_tick``) and (re)build
        the device for it: a planned device plans from the state the episode starts in."""
        if resume is not None:
            self.session.resume(resume, self.opts.at_tick)
        else:
            self.session.reset(self.opts.seed_index, episode_index, initial_state)
        self.opts = dataclasses.replace(self.opts, episode_index=episode_index)
        self.reports = []
        if self.device is None or self.config.per_episode:
            context = DeviceContext(self.rt, self.retargeter, self.realtime, episode_index)
            self.device = self.config.build(context)
            self.session.attach(self.device)

    def max_ticks(self) -> int:
        """The episode's horizon in ticks: --max-seconds, else the task's (see ``horizon``)."""
        seconds = self.opts.max_seconds
        return int(round(seconds / self.rt.sim.scene.control_dt)) if seconds else self.task_horizon

    def _over(self) -> bool:
        last = self.reports[-1] if self.reports else None
        return (last is not None and (last.done or self.horizon.over(last))) or self.device.finished

    def run(self, store=None, operator: str = "operator", on_tick=None, on_connect=None, keep_open: bool = False):
        """Run the current episode to its end (done, horizon, stream end): (EpisodeResult, Take or None).

        ``on_connect(device)`` is called once the device is connected (it then knows its real
        address, e.g. the port a headset server listens on). ``keep_open`` leaves a live device
        connected for the next episode (the operator's headset page stays paired)."""
        if store is not None:
            self.session.start_recording(store, operator, self.opts.seed_index, self.opts.episode_index,
                                         device=self.config.name,
                                         **meta_from_texts(self.retarget.config_text, self.retarget.profile_text))
        if store is not None and self.opts.horizon_from_store and self.config.episode() is None:
            self.task_horizon = store_horizon(store.index, self.rt.spec, self.rt.task.scene.params.physics.control_hz)
        self.horizon = EpisodeHorizon(self.max_ticks(), self.config.horizon_from_engage)
        self.horizon.begin(self.rt.scorer)
        if not self.device.is_connected:
            self.device.connect()
            if on_connect is not None:
                on_connect(self.device)
        try:
            self._run_paced(on_tick) if self.realtime else self._run_fast(on_tick)
        except BaseException:
            self.device.close()
            raise
        if not keep_open or self.config.per_episode:
            self.device.close()
        take = self.session.stop_recording(keep=True)
        return self.rt.result(), take

    def run_many(self, episodes: int, store=None, operator: str = "operator", on_tick=None, on_connect=None,
                 on_episode=None) -> list:
        """``episodes`` consecutive episodes on this one session (episode indexes from the first):
        a list of (EpisodeResult, Take or None, reports)."""
        if episodes < 1:
            raise ConfigError(f"episodes must be >= 1, got {episodes}")
        if episodes > 1 and (self.config.episode() is not None or self.opts.continue_from):
            raise ConfigError(f"device {self.config.name!r} plays one recorded episode; --episodes must be 1")
        out, first = [], self.opts.episode_index
        for i in range(episodes):
            if i:
                self._start(first + i)
            result, take = self.run(store, operator, on_tick, on_connect, keep_open=i < episodes - 1)
            out.append((result, take, self.reports))
            if on_episode is not None:
                on_episode(result, take, self.reports)
        return out

    def _step(self, on_tick) -> None:
        if self._over():            # a paced loop may call once more before it is stopped
            return
        self.reports.append(self.session.tick())
        self.horizon.observe(self.reports[-1], self.rt.scorer)
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
                time.sleep(0.01)
        except KeyboardInterrupt:
            pass
        finally:
            loop.stop()
        if loop.error is not None:
            raise loop.error

    def timing(self) -> dict:
        """Per-tick timing figures of the current episode so far (ms)."""
        return timing_figures(self.reports)


def _resume_source(opts: EpisodeOptions):
    """The take to continue (``--continue-from``), read; None when not continuing."""
    if not opts.continue_from:
        return None
    if opts.at_tick is None:
        raise ConfigError("--continue-from needs --at TICK (the tick to continue from; 0 = the start)")
    from recordings.takefile import read_take

    return read_take(Path(opts.continue_from))


def timing_figures(reports) -> dict:
    """p50 / p99 of the tick's timing figures over ``reports`` (ms)."""
    def pct(key, q):
        values = np.array([getattr(r, key) for r in reports], float)
        values = values[np.isfinite(values)]
        return round(float(np.percentile(values, q)), 3) if values.size else None
    return {f"{k}_p{q}": pct(k, q) for k in ("tick_ms", "retarget_ms", "physics_ms", "overhead_ms",
                                                "frame_age_ms") for q in (50, 99)}
