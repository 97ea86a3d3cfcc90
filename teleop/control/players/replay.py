"""The ``replay`` device: a take's recorded operator stream, played from the take's own episode."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from devices.config import DeviceConfig, DeviceContext, EpisodeSource
from devices.replay import ReplayDevice
from recordings.takefile import FLAGS, TIMING, Take, age_from_ms, read_take


def replay_device(take: Take, **options) -> ReplayDevice:
    """A replay device that feeds a recorded take's frames with the ages and stale flags it had."""
    ages = age_from_ms(take.arrays["timing"][:, TIMING.index("frame_age_ms")])
    stale = take.arrays["flags"][:, FLAGS.index("stale")].astype(bool)
    return ReplayDevice(take.arrays["frame"], ages, stale, **options)


@DeviceConfig.register_subclass("replay")
@dataclass(frozen=True, kw_only=True)
class ReplayConfig(DeviceConfig):
    label = "Replay a take's operator stream"
    realtime = False
    per_episode = True
    in_app = False                # the window reviews takes by state replay instead
    take: Path = field(metadata={"help": "the take file whose operator frames to play", "flag": "--from"})

    @cached_property
    def _take(self) -> Take:
        return read_take(Path(self.take))

    def episode(self) -> EpisodeSource:
        meta = self._take.meta
        return EpisodeSource(meta.task_id, meta.seed_index, meta.episode_index, meta.initial_state,
                             meta.retarget_config, meta.operator_profile, ticks=self._take.length)

    def build(self, context: DeviceContext) -> ReplayDevice:
        realtime = self.realtime if context.realtime is None else context.realtime
        return replay_device(self._take, clock="realtime" if realtime else "lockstep",
                             dt=1.0 / self._take.meta.control_hz)
