"""An episode's horizon: --max-seconds is the horizon (also past the task's own), and for a live
operator it counts from the first engage, not from when the device started; a replayed take of
such an episode plays all its ticks. (The headset itself: test_devices_webxr_hud.py.)"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from devices.base import ConnectionInfo, Device, Reading
from devices.config import DeviceConfig, DeviceContext
from devices.frame import OperatorFrame
from recordings.store import TakeStore
from teleop.control.episode import Episode, EpisodeOptions
from teleop.control.horizon import EpisodeHorizon

TASK = "pick_up_peach"
ENGAGE_AT = 30              # the operator engages on this read (tick) of the device


class LateEngage(Device):
    """An operator who engages after ``ENGAGE_AT`` ticks (lock-step: one frame per read). Without
    hands the engaged robot holds: the clock runs from the engage either way."""

    def __init__(self):
        self.reads, self._connected = 0, False

    def connect(self) -> None:
        self._connected = True

    def read(self) -> Reading:
        self.reads += 1
        frame = OperatorFrame(self.reads * 0.04, 0.0, self.reads, None, None, engage=self.reads >= ENGAGE_AT)
        return Reading(frame, 0.0, False, self.reads)

    def close(self) -> None:
        self._connected = False

    @property
    def is_connected(self) -> bool:
        return self._connected

    def connection_info(self) -> ConnectionInfo:
        return ConnectionInfo("late engage")


@dataclass(frozen=True, kw_only=True)
class LateEngageConfig(DeviceConfig):
    label = "test: engages late"
    realtime = False
    in_app = False
    horizon_from_engage: ClassVar[bool] = True

    def build(self, context: DeviceContext) -> LateEngage:
        return LateEngage()


@dataclass(frozen=True, kw_only=True)
class WallClockConfig(LateEngageConfig):
    label = "test: engages late, horizon from the start"
    horizon_from_engage: ClassVar[bool] = False


TEST_DEVICES = {"test-late-engage": LateEngageConfig, "test-late-engage-clock": WallClockConfig}


@pytest.fixture(autouse=True, scope="module")
def _test_devices():
    """Registered for this module's tests only: other tests see the product's devices alone."""
    for name, config in TEST_DEVICES.items():
        DeviceConfig.register_subclass(name)(config)
    yield
    for name in TEST_DEVICES:
        DeviceConfig.unregister(name)


def _first_engaged(reports) -> int:
    return next(i for i, r in enumerate(reports) if r.engage_state not in ("disengaged", "arming"))


def test_max_seconds_past_the_task_horizon_counts_from_engage_and_replays_whole(tmp_path):
    episode = Episode(EpisodeOptions(task=TASK, device="test-late-engage", max_seconds=31.0))
    assert episode.task_horizon == 750 and episode.max_ticks() == 775
    store = TakeStore(tmp_path / "store")
    store.open()
    try:
        result, take = episode.run(store)
    finally:
        store.close()
    reports = episode.reports
    first = _first_engaged(reports)
    assert first == ENGAGE_AT - 1 and reports[first].tick == ENGAGE_AT
    assert len(reports) - first == 775                    # not the scorer's 750, not from tick 1
    assert result.terminated_by == "horizon" and reports[-1].done and not any(r.done for r in reports[:-1])
    assert take.length == len(reports) == 804

    replay = Episode(EpisodeOptions(task=None, device="replay", device_options={"take": take.path}))
    replay.run(None)
    assert len(replay.reports) == take.length            # the take's length is the replay's horizon
    assert replay.rt.result().terminated_by == "horizon"


def test_task_horizon_from_engage_and_max_seconds_from_the_start():
    episode = Episode(EpisodeOptions(task=TASK, device="test-late-engage"))
    episode.run(None)
    assert len(episode.reports) - _first_engaged(episode.reports) == 750
    clock = Episode(EpisodeOptions(task=TASK, device="test-late-engage-clock", max_seconds=2.0))
    result, _ = clock.run(None)
    # A device whose clock is the episode's: 50 ticks in all, and the scorer ends it (before the
    # fix --max-seconds only cut the loop, the scorer's horizon stayed the task's).
    assert len(clock.reports) == 50 and result.terminated_by == "horizon"


def test_horizon_counts_ticks_from_the_first_engaged_one():
    class Scorer:
        horizon = 750

    @dataclass
    class Report:
        tick: int
        engage_state: str

    scorer, horizon = Scorer(), EpisodeHorizon(10, from_engage=True)
    horizon.begin(scorer)
    for tick, state in enumerate(["disengaged", "arming", "arming"], start=1):
        horizon.observe(Report(tick, state), scorer)
        assert not horizon.over(Report(tick, state)) and scorer.horizon > 10**9
    horizon.observe(Report(4, "hold"), scorer)            # a hold right at engage still counts
    assert scorer.horizon == 13 and not horizon.over(Report(12, "engaged")) and horizon.over(Report(13, "engaged"))
    fixed = EpisodeHorizon(10, from_engage=False)
    fixed.begin(scorer)
    assert scorer.horizon == 10 and fixed.over(Report(10, "disengaged"))


@pytest.fixture(autouse=True, scope="module")
def _registered():
    yield
    for name in ("test-late-engage", "test-late-engage-clock"):   # leave the registry as found
        DeviceConfig._registry.pop(name, None)
