"""Device base: latest-frame slot, background reader survival, registry, frame validation."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import devices
from devices.base import BackgroundReader, LatestFrame, Reading
from devices.config import DeviceConfig, device_config, discover
from devices.frame import FrameError, HandFrame, OperatorFrame, Pose
from teleop.core.errors import ConfigError, TeleopError


def _frame(received: float, seq: int = 0) -> OperatorFrame:
    hand = HandFrame(Pose.identity(), np.zeros((21, 3)), np.ones(21, bool))
    return OperatorFrame(received, received, seq, hand, None, device="test")


def test_latest_frame_slot_ages_and_indexes_frames():
    clock = [100.0]
    slot = LatestFrame(stale_after=0.1, clock=lambda: clock[0])
    assert slot.get() == Reading(None, float("inf"), True, 0)
    slot.put(_frame(99.95))
    reading = slot.get()
    assert reading.index == 1 and reading.age == pytest.approx(0.05) and not reading.stale
    clock[0] = 100.2
    assert slot.get().stale and slot.get().index == 1
    slot.put(_frame(100.2, seq=0))                    # a device restart: same seq, new index
    assert slot.get().index == 2 and not slot.get().stale
    with pytest.raises(ConfigError, match="stale_after"):
        LatestFrame(stale_after=0)


def test_background_reader_survives_exceptions():
    calls = []

    def poll(timeout):
        calls.append(timeout)
        if len(calls) % 2:
            raise ValueError("bad packet handling")
        time.sleep(timeout)

    reader = BackgroundReader("test-reader", poll, poll_timeout=0.01)
    reader.start()
    deadline = time.monotonic() + 5
    while len(calls) < 6 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert reader.alive and reader.errors >= 3 and "bad packet" in reader.last_error
    assert reader.stop()
    assert not reader.alive


def test_a_reader_stuck_in_its_poll_says_so_when_stopped():
    release = threading.Event()
    reader = BackgroundReader("stuck-reader", lambda timeout: release.wait(), poll_timeout=0.01)
    reader.start()
    time.sleep(0.05)
    assert not reader.stop(join_timeout=0.1)       # still inside the poll: the caller must not close its source
    release.set()


def test_registry_and_duplicate_names():
    assert {"glove", "webxr"} <= set(discover())
    with pytest.raises(ConfigError, match="'glove' or 'webxr'|'glove', .*'webxr'"):
        devices.create_device("kinect")
    with pytest.raises(ConfigError, match="unknown option 'no_such_option'; valid: 'endpoint'"):
        devices.create_device("glove", no_such_option=1)
    with pytest.raises(ConfigError, match="--port: 'eighty' is not a whole number"):
        devices.create_device("webxr", port="eighty")
    with pytest.raises(TeleopError, match="registered twice"):
        DeviceConfig.register_subclass("glove")(type("Other", (DeviceConfig,), {}))
    assert device_config("glove").name == "glove"


def test_frame_validation_names_the_field():
    with pytest.raises(FrameError, match="timestamp"):
        OperatorFrame(float("nan"), 0.0, 0, None, None)
    with pytest.raises(FrameError, match="sequence"):
        OperatorFrame(0.0, 0.0, -1, None, None)
    with pytest.raises(FrameError, match="tracked"):
        HandFrame(Pose.identity(), np.zeros((21, 3)), np.ones(21))       # not bool
    with pytest.raises(FrameError, match="NaN"):
        HandFrame(Pose.identity(), np.full((21, 3), np.nan), np.ones(21, bool))
    with pytest.raises(FrameError, match="left"):
        OperatorFrame(0.0, 0.0, 0, "hand", None)
    frame = _frame(1.0)
    assert frame.hand("left") is not None and frame.hand("right") is None
    with pytest.raises(FrameError, match="'left' or 'right'"):
        frame.hand("middle")
    with pytest.raises(ValueError):
        frame.left.keypoints[0, 0] = 1.0                                 # frames are immutable


def test_feedback_channels_are_safe_no_ops_on_devices_without_them():
    glove, headset = devices.create_device("glove"), devices.create_device("webxr", port=0)
    glove.publish_scene([{"body": "b", "type": "box", "size": [1, 1, 1]}])    # not connected, no-op
    glove.publish_poses({"b": [0, 0, 0, 1, 0, 0, 0]})
    glove.publish_hud({"instruction": "x"})
    assert glove.publish_haptics(np.zeros((2, 5))) is False                 # not connected yet
    assert headset.publish_haptics(np.zeros((2, 5))) is False
