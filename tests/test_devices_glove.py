"""Glove: wire protocol, hand model, real ZeroMQ round trip with haptics, 10,000 fuzzed packets."""
from __future__ import annotations

import struct
import time
import zlib

import numpy as np
import pytest
import zmq

import devices
from devices.frame import Pose
from devices.glove import BUTTON_DEBOUNCE_S, GLOVE_REJECT_REASON, GloveDevice, GloveLink
from devices.glove_motion import GloveMotion
from devices.glove_protocol import (GLOVE_SIZE, GloveHand, PacketError, decode_glove, decode_haptic,
                                    encode_glove, encode_haptic)
from devices.handmodel import grasp_angles, local_nodes
from teleop.core.errors import ConfigError
from teleop.core.seeding import stable_rng
from helpers import wait_for


def _reseal(body: bytes) -> bytes:
    return body[:-4] + struct.pack("<I", zlib.crc32(body[:-4]))


def _valid(seq: int = 7) -> bytes:
    return encode_glove(seq, 1.5, GloveMotion().hands(0.3), engage=True)


def test_protocol_round_trip_keeps_every_field():
    hands = GloveMotion().hands(1.2)
    packet = decode_glove(encode_glove(42, 3.25, {"left": hands["left"],
                                                  "right": GloveHand(hands["right"].angles, None)}, True))
    assert (packet.sequence, packet.timestamp, packet.engage) == (42, 3.25, True)
    np.testing.assert_allclose(packet.hands["left"].angles, hands["left"].angles, atol=1e-6)
    np.testing.assert_allclose(packet.hands["left"].wrist.position, hands["left"].wrist.position, atol=1e-6)
    assert packet.hands["right"].wrist is None
    forces = np.arange(10.0).reshape(2, 5)
    np.testing.assert_allclose(decode_haptic(encode_haptic(3, 1.0, forces)).forces, forces, atol=1e-6)


@pytest.mark.parametrize("mutate, reason", [
    (lambda b: b[:-1], "size"),
    (lambda b: b"XGLV" + b[4:], "magic"),
    (lambda b: _reseal(b[:4] + struct.pack("<H", 2) + b[6:]), "version"),
    (lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:], "crc"),
    (lambda b: _reseal(b[:6] + struct.pack("<H", 1 << 9) + b[8:]), "flags"),
    (lambda b: _reseal(b[:24] + struct.pack("<f", float("nan")) + b[28:]), "nonfinite"),
    (lambda b: _reseal(b[:24] + struct.pack("<f", 3.0) + b[28:]), "range"),
    (lambda b: _reseal(b[:24 + 23 * 4] + struct.pack("<f", 0.2) + b[24 + 24 * 4:]), "quaternion"),
])
def test_bad_packets_are_rejected_with_their_reason(mutate, reason):
    with pytest.raises(PacketError) as err:
        decode_glove(mutate(_valid()))
    assert err.value.reason == reason


def test_hand_model_is_human_sized_mirrored_and_curls():
    open_right = local_nodes(grasp_angles(0.0), "right")
    assert 0.17 < np.linalg.norm(open_right[12]) < 0.20          # wrist to middle tip
    np.testing.assert_allclose(local_nodes(grasp_angles(0.0), "left")[:, 1], -open_right[:, 1])
    closed = local_nodes(grasp_angles(1.0), "right")
    assert closed[8, 2] < open_right[8, 2] - 0.08                 # index tip comes back toward the palm
    assert closed[8, 0] > 0.02                                    # ... on the palm side


def test_registry_builds_glove_and_names_choices_for_unknown():
    assert isinstance(devices.create_device("glove"), GloveDevice)   # no I/O in the constructor
    with pytest.raises(ConfigError, match="'glove'"):
        devices.create_device("exoskeleton")


def _wait(predicate, timeout: float = 10.0) -> bool:
    return wait_for(predicate, timeout)


def _wait_quiet(dev, settle: float = 0.1, timeout: float = 5.0) -> bool:
    """True once the device's received counter stops changing for ``settle`` seconds."""
    last, end = -1, time.monotonic() + timeout
    while time.monotonic() < end:
        if dev.received == last:
            return True
        last = dev.received
        time.sleep(settle)
    return False


@pytest.fixture
def glove_pair():
    link = GloveLink("tcp://127.0.0.1:*", None)
    link.pub.setsockopt(zmq.SNDHWM, 0)
    dev = devices.create_device("glove", endpoint=link.endpoint, haptics_bind="tcp://127.0.0.1:*",
                                stale_after=0.2, rcv_hwm=0)
    dev.connect()
    link.connect_haptics(dev.haptics_endpoint)
    # ZeroMQ subscriptions take a moment: probe until the device has a frame, then let every
    # probe in flight arrive so the tests' counters start from a quiet socket.
    # (Probes sent before the subscription exists are lost by ZeroMQ, so wait for quiet.)
    assert _wait(lambda: (link.send_raw(_valid(0)), dev.read().frame is not None)[1])
    assert _wait_quiet(dev)
    yield link, dev
    dev.close()
    link.close()


def test_round_trip_over_zeromq_with_haptics(glove_pair):
    link, dev = glove_pair
    motion = GloveMotion()
    link.send(1000, 12.5, motion.hands(2.0), engage=True)
    assert _wait(lambda: dev.read().frame.sequence == 1000)
    reading = dev.read()
    frame = reading.frame
    assert not reading.stale and reading.age < 0.2
    assert frame.engage and frame.timestamp == 12.5 and frame.device == "glove"
    assert frame.left.wrist_tracked and frame.right.tracked.all()
    wrist = motion.hands(2.0)["right"].wrist
    np.testing.assert_allclose(frame.right.keypoints[0], wrist.position, atol=1e-5)
    assert 0.1 < np.linalg.norm(frame.right.keypoints[12] - frame.right.keypoints[0]) < 0.2
    forces = np.array([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9.5]])
    got = []
    assert _wait(lambda: (dev.publish_haptics(forces), got.extend(link.recv_haptics(0.01)))[0] and got)
    np.testing.assert_allclose(got[-1].forces, forces, atol=1e-6)
    time.sleep(0.3)
    assert dev.read().stale                                      # nothing new for > stale_after


def _fuzz_packet(rng, i: int) -> list[bytes]:
    base = bytearray(encode_glove(i, float(i) * 0.01, GloveMotion(seed=i % 5).hands(i * 0.01), bool(i % 2)))
    kind = i % 8
    if kind == 0:
        return [bytes(base)]
    if kind == 1:
        return [rng.bytes(int(rng.integers(0, 600)))]
    if kind == 2:
        return [bytes(base[:int(rng.integers(0, GLOVE_SIZE))])]
    if kind == 3:
        for _ in range(int(rng.integers(1, 6))):
            base[int(rng.integers(0, GLOVE_SIZE))] ^= 1 << int(rng.integers(0, 8))
        return [bytes(base)]
    if kind == 4:      # resealed float garbage: NaN, inf, huge, out-of-range angles
        at = 24 + 4 * int(rng.integers(0, 54))
        value = rng.choice([np.nan, np.inf, -np.inf, 1e30, 5.0, -3.0, 0.0])
        return [_reseal(bytes(base[:at]) + struct.pack("<f", value) + bytes(base[at + 4:]))]
    if kind == 5:      # resealed header garbage: version, flags
        at = int(rng.integers(4, 8))
        base[at] = int(rng.integers(0, 256))
        return [_reseal(bytes(base))]
    if kind == 6:
        return [bytes(base), b"extra"]
    return [bytes(base) + rng.bytes(int(rng.integers(1, 50)))]


def _expected_ok(parts: list[bytes]) -> bool:
    try:
        return len(parts) == 1 and decode_glove(parts[0]) is not None
    except PacketError:
        return False


def test_10000_fuzzed_packets_no_crash_all_accounted(glove_pair):
    link, dev = glove_pair
    before = dev.stats()
    rng = stable_rng("glove-fuzz")
    n, expected_ok = 10_000, 0
    for i in range(n):
        parts = _fuzz_packet(rng, i)
        expected_ok += _expected_ok(parts)
        link.pub.send_multipart(parts)
    assert _wait(lambda: dev.stats()["received"] - before["received"] >= n, 30.0)
    after = dev.stats()
    dropped = {k: v - before["dropped"].get(k, 0) for k, v in after["dropped"].items()}
    accepted = after["accepted"] - before["accepted"]
    assert after["received"] - before["received"] == n
    assert accepted + sum(dropped.values()) == n
    assert accepted == expected_ok and 1000 < accepted < 3000
    for reason in ("size", "crc", "nonfinite", "range", "multipart"):
        assert dropped.get(reason, 0) > 0, (reason, dropped)
    assert after["reader_errors"] == 0 and dev.is_connected
    link.send(n + 1, 1.0, GloveMotion().hands(0.0))              # still reads good packets after
    assert _wait(lambda: dev.read().frame.sequence == n + 1)


def test_connect_failure_is_a_clear_error_and_frame_validation():
    dev = GloveDevice(endpoint="not-an-endpoint", haptics_bind="tcp://127.0.0.1:*")
    with pytest.raises(devices.DeviceError, match="not-an-endpoint"):
        dev.connect()
    assert not dev.is_connected
    with pytest.raises(devices.FrameError, match="norm"):
        Pose(np.zeros(3), [1.0, 1.0, 0.0, 0.0])
    with pytest.raises(devices.FrameError, match="shape"):
        devices.HandFrame(Pose.identity(), np.zeros((20, 3)), np.ones(21, bool))


def test_glove_sim_command_streams_to_the_device_and_prints_haptics():
    import argparse
    import socket
    import threading

    from teleop.cli.commands.glove_sim import run_glove_sim
    with socket.socket() as s:                      # a free port for the simulator to bind
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dev = GloveDevice(endpoint=f"tcp://127.0.0.1:{port}", haptics_bind="tcp://127.0.0.1:*")
    dev.connect()
    lines, result = [], {}
    args = argparse.Namespace(bind=f"tcp://127.0.0.1:{port}", haptics=dev.haptics_endpoint, rate=100.0,
                              duration=1.5, period=1.0, engage_after=0.5, no_tracker=False, seed=0,
                              print_every=0.2)
    sim = threading.Thread(target=lambda: result.update(run_glove_sim(args, lines.append)))
    sim.start()
    reach, engaged = [], []
    while sim.is_alive():
        frame = dev.read().frame
        if frame is not None:
            reach.append(np.linalg.norm(frame.right.keypoints[8] - frame.right.keypoints[0]))
            engaged.append(frame.engage)
        dev.publish_haptics(np.full((2, 5), 2.5))
        time.sleep(0.04)
    dev.close()
    assert result["sent"] >= 120 and dev.stats()["dropped"] == {}
    assert max(reach) - min(reach) > 0.04                       # the fingers open and close
    assert engaged[0] is False and engaged[-1] is True          # the button comes on after 0.5 s
    assert result["haptic_packets"] > 10 and any("haptics #" in line and "2.5" in line for line in lines)


def test_glove_buttons_over_zeromq_are_one_action_per_press(glove_pair):
    """A button's rising edge is one press (held: still one; bounced within the debounce: one);
    Reject carries the glove's catch-all reason; old packets without buttons press nothing."""
    link, dev = glove_pair
    hands = GloveMotion().hands(0.5)
    assert dev.take_actions() == []                          # the fixture's probes carry no buttons
    seq = iter(range(2000, 3000))

    def send(*held):
        link.send(next(seq), 1.0, hands, buttons=set(held))

    for held in (("record",), ("record",), ("record",), (), ("record",)):   # held, released, bounced
        send(*held)
    assert _wait(lambda: dev.read().frame.sequence == 2004)
    assert dev.take_actions() == [("record", None)]
    time.sleep(BUTTON_DEBOUNCE_S + 0.05)
    for held in ((), ("accept",), ("accept", "reject"), ()):
        send(*held)
    assert _wait(lambda: dev.read().frame.sequence == 2008)
    assert dev.take_actions() == [("accept", None), ("reject", GLOVE_REJECT_REASON)]
    assert decode_glove(encode_glove(1, 0.0, hands, buttons={"rerecord"})).buttons == {"rerecord"}
    assert dev.stats()["actions"] == 3 and dev.stats()["dropped"] == {}
