"""WebXR server: pairing gate, certificate, frame conversion, 10,000 fuzzed websocket messages."""
from __future__ import annotations

import json
import ssl
import stat
import time
import urllib.request

import numpy as np
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

import devices
from devices.webxr.certs import ensure_certificate
from devices.webxr.messages import NODE_FROM_JOINT, MessageError, load_json, parse_action, parse_frame
from devices.webxr.scene_msgs import scene_message
from devices.webxr.server import HeadsetServer
from teleop.core.errors import ConfigError
from teleop.core.geometry import quat_to_mat
from teleop.core.seeding import stable_rng


def _tls() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE       # self-signed: the fingerprint is what an operator checks
    return ctx


def _xr_hand(wrist_xyz, tracked=True) -> dict:
    """A flat right hand in WebXR coordinates: palm down, fingers along -z (forward)."""
    joints = []
    for j in range(25):
        digit, k = divmod(max(j - 1, 0), 5) if j else (0, 0)
        x = wrist_xyz[0] + (-0.04 + 0.02 * digit if j else 0.0)
        z = wrist_xyz[2] - (0.02 + 0.03 * k if j else 0.0)
        joints += [x, wrist_xyz[1], z, 0.0, 0.0, 0.0, 1.0]
    return {"joints": joints, "tracked": [tracked] * 25, "emulated": [False] * 25}


def _frame_msg(seq: int = 0) -> dict:
    return {"type": "frame", "v": 1, "seq": seq, "t": 10.0 + seq / 90,
            "head": [0.0, 1.6, 0.0, 0.0, 0.0, 0.0, 1.0],
            "hands": {"right": _xr_hand([0.2, 1.1, -0.3]), "left": _xr_hand([-0.2, 1.1, -0.3])},
            "engage": False}


def test_frame_conversion_to_operator_frame():
    frame = parse_frame(_frame_msg(3), received=5.0)
    assert frame.sequence == 3 and frame.device == "webxr"
    np.testing.assert_allclose(frame.head.position, [0.0, 0.0, 1.6])       # y-up -> z-up
    np.testing.assert_allclose(quat_to_mat(frame.head.quat), np.eye(3), atol=1e-9)  # looking forward
    right = frame.right
    np.testing.assert_allclose(right.wrist.position, [0.3, -0.2, 1.1])      # -z fwd -> x, x right -> -y
    rot = quat_to_mat(right.wrist.quat)       # palm frame: z fingers, x palm side, y thumb
    np.testing.assert_allclose(rot[:, 2], [1, 0, 0], atol=1e-9)
    np.testing.assert_allclose(rot[:, 0], [0, 0, -1], atol=1e-9)            # palm faces down
    raw = right.raw
    assert raw.shape == (25, 7)
    np.testing.assert_allclose(right.keypoints, raw[NODE_FROM_JOINT, :3])
    assert right.tracked.all() and right.wrist_tracked


def test_untracked_joints_are_flagged_and_missing_wrist_drops_hand():
    msg = _frame_msg()
    msg["hands"]["right"]["tracked"][9] = False      # index tip lost
    msg["hands"]["right"]["emulated"][4] = True      # thumb tip estimated
    msg["hands"]["left"]["tracked"][0] = False       # no wrist
    frame = parse_frame(msg, 0.0)
    assert frame.left is None
    assert not frame.right.tracked[8] and not frame.right.tracked[4] and frame.right.tracked[5]


@pytest.mark.parametrize("text, reason", [
    (b"\x00\x01", "binary"), ("{", "json"), ("[1, 2]", "type"), ('{"type": 3}', "type"),
    ('{"type": "frame", "v": 1, "seq": 1, "t": NaN, "hands": {}}', "nonfinite"),
    ("[" * 50000, "json"), ("x" * (2 << 20), "too_large"),
])
def test_load_json_rejects_with_reason(text, reason):
    with pytest.raises(MessageError) as err:
        msg = load_json(text)
        parse_frame(msg, 0.0)
    assert err.value.reason == reason


def test_certificate_is_made_once_and_kept(tmp_path):
    first = ensure_certificate(tmp_path)
    second = ensure_certificate(tmp_path)
    assert first.fingerprint == second.fingerprint and len(first.fingerprint) == 95
    assert stat.S_IMODE(first.key_path.stat().st_mode) == 0o600
    assert "127.0.0.1" in first.addresses
    (tmp_path / "headset-cert.pem").write_text("garbage")
    with pytest.raises(ConfigError, match="headset-cert.pem"):
        ensure_certificate(tmp_path)


def test_scene_message_validates_geoms():
    text = scene_message([{"name": "t", "body": "world", "type": "box", "size": [1, 2, 3]}])
    assert json.loads(text)["geoms"][0]["rgba"] == [0.7, 0.7, 0.7, 1.0]
    with pytest.raises(ConfigError, match="'mesh'"):
        scene_message([{"body": "b", "type": "mesh", "size": [1, 1, 1]}])
    with pytest.raises(ConfigError, match="size"):
        scene_message([{"body": "b", "type": "box", "size": [1, float("nan"), 1]}])


@pytest.fixture
def headset(tmp_path):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path)
    dev.connect()
    yield dev
    dev.close()


def test_pairing_code_required(headset):
    base = f"wss://127.0.0.1:{headset.server.port}/ws"
    for url in (base, f"{base}?code=WRONGCODE", f"{base}?code="):
        with pytest.raises(InvalidStatus) as err:
            connect(url, ssl=_tls(), open_timeout=5)
        assert err.value.response.status_code == 403
    assert headset.stats()["refused"] == 3 and headset.stats()["connects"] == 0
    with connect(f"{base}?code={headset.pairing_code}", ssl=_tls(), open_timeout=5) as ws:
        ws.send(json.dumps(_frame_msg(1)))
        deadline = time.monotonic() + 5
        while headset.read().frame is None and time.monotonic() < deadline:
            time.sleep(0.01)
    assert headset.read().frame.sequence == 1
    https = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                        urllib.request.HTTPSHandler(context=_tls()))
    base_url = f"https://127.0.0.1:{headset.server.port}"
    assert b"importmap" in https.open(f"{base_url}/", timeout=5).read()     # the page, over HTTPS
    assert b"BEGIN CERTIFICATE" in https.open(f"{base_url}/cert.pem", timeout=5).read()
    for path in ("/static/../server.py", "/static/%2e%2e/server.py", "/vendor/three/../../../x"):
        with pytest.raises(urllib.error.HTTPError) as err:
            https.open(base_url + path, timeout=5)
        assert err.value.code == 404
        err.value.close()


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def _fuzz_message(rng, i: int):
    msg = _frame_msg(i)
    kind = i % 10
    if kind == 0:
        return json.dumps(msg)
    if kind == 1:
        text = json.dumps(msg)
        return text[:int(rng.integers(0, len(text)))]
    if kind == 2:
        return rng.bytes(int(rng.integers(1, 300))).decode("latin-1")
    if kind == 3:
        return json.dumps([None, 3, "frame", [], {"type": 5}, {"type": None}][i % 6])
    if kind == 4:      # a field replaced by a value of the wrong type or shape
        hand = msg["hands"]["right"]
        target = _pick(rng, ["seq", "t", "v", "head", "engage", "joints", "tracked", "hands"])
        junk = _pick(rng, ["x", None, -1, 1.5, True, [], {}, [1, 2]])
        (hand if target in ("joints", "tracked") else msg)[target] = junk
        return json.dumps(msg)
    if kind == 5:      # NaN / Infinity literals, and 1e400 which JSON parses to inf
        text = json.dumps(msg)
        at = text.index("1.1", int(rng.integers(0, len(text) // 2)))
        return text[:at] + _pick(rng, ["NaN", "Infinity", "-Infinity", "1e400"]) + text[at + 3:]
    if kind == 6:      # huge or off-by-one arrays
        size = 250_000 if i % 1000 == 6 else _pick(rng, [0, 174, 176, 5000])
        msg["hands"]["left"]["joints"] = [0.5] * size
        return json.dumps(msg)
    if kind == 7:
        return rng.bytes(int(rng.integers(1, 100)))
    if kind == 8:
        return ["[" * 100_000, '{"type": "launch_missiles"}', "{}", ""][i % 4]
    return json.dumps([{"type": "ack", "what": "poses", "seq": i, "count": 3},
                       {"type": "ack", "what": "poses", "seq": "x"},
                       {"type": "hello", "v": 1},
                       {"type": "frame", "v": 2, "seq": 1, "t": 0.0, "hands": {}}][i % 4])


def test_10000_fuzzed_messages_no_crash_all_accounted(headset):
    rng = stable_rng("webxr-fuzz")
    reference = HeadsetServer()           # never started: only its message handler is used
    n = 10_000
    url = f"wss://127.0.0.1:{headset.server.port}/ws?code={headset.pairing_code}"
    with connect(url, ssl=_tls(), open_timeout=5, max_size=None) as ws:
        for i in range(n):
            message = _fuzz_message(rng, i)
            reference.handle_message(message, 0.0)
            ws.send(message)
        deadline = time.monotonic() + 60
        while headset.stats()["received"] < n and time.monotonic() < deadline:
            time.sleep(0.05)
        ws.send(json.dumps(_frame_msg(n + 1)))        # the same connection still works
        deadline = time.monotonic() + 5
        while headset.read().frame.sequence != n + 1 and time.monotonic() < deadline:
            time.sleep(0.01)
    stats, expected = headset.stats(), reference.stats()
    assert stats["received"] == n + 1 and stats["connects"] == 1
    assert stats["accepted"] + sum(stats["dropped"].values()) == n + 1
    assert stats["dropped"] == expected["dropped"] and stats["frames"] == expected["frames"] + 1
    assert "internal" not in stats["dropped"]
    for reason in ("binary", "too_large", "json", "nonfinite", "type", "schema"):
        assert stats["dropped"].get(reason, 0) > 0, (reason, stats["dropped"])
    assert 1000 <= stats["frames"] <= 2000 and headset.read().frame.sequence == n + 1


def test_oversized_message_closes_connection_counted_and_reconnect_works(headset):
    url = f"wss://127.0.0.1:{headset.server.port}/ws?code={headset.pairing_code}"
    with connect(url, ssl=_tls(), open_timeout=5, max_size=None) as ws:
        ws.send("x" * (5 << 20))          # above the 4 MiB websocket limit: the server closes
        with pytest.raises(ConnectionClosed):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # what the server sent a new page first, then the close
                ws.recv(timeout=max(0.01, deadline - time.monotonic()))
    with connect(url, ssl=_tls(), open_timeout=5) as ws:
        ws.send(json.dumps(_frame_msg(77)))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and getattr(headset.read().frame, "sequence", None) != 77:
            time.sleep(0.01)
    stats = headset.stats()
    assert stats["dropped"].get("too_large") == 1 and stats["connects"] == 2
    assert headset.read().frame.sequence == 77


def test_robot_scene_converts_to_scene_and_pose_messages():
    import mujoco

    from devices.webxr.scene_msgs import body_poses, geoms_from_model, poses_message
    from teleop.sim.scene import build_scene
    model = build_scene().model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    geoms = json.loads(scene_message(geoms_from_model(model)))["geoms"]
    assert len(geoms) > 40 and {g["type"] for g in geoms} >= {"box", "capsule"}
    poses = body_poses(model, data)
    assert set(poses) == {g["body"] for g in geoms} - {"world"}
    bodies = json.loads(poses_message(poses, 5))["bodies"]
    np.testing.assert_allclose(bodies["left_link1"][:3], data.body("left_link1").xpos, atol=1e-5)
    with pytest.raises(ConfigError, match="7 numbers"):
        poses_message({"a": [1, 2, 3]}, 1)


@pytest.mark.parametrize("msg, names", [
    ({"type": "action"}, ("action.name missing", "valid: ")),
    ({"type": "action", "name": "launch_missiles"}, ("action.name 'launch_missiles'", "accept")),
    ({"type": "action", "name": 3}, ("action.name 3", "record")),
    ({"type": "action", "name": "reject", "arg": [1]}, ("action.arg of 'reject'", "list")),
    ({"type": "action", "name": "reject", "arg": "x" * 201}, ("action.arg of 'reject'", "200 characters")),
])
def test_malformed_action_names_the_field_and_the_choices(msg, names):
    with pytest.raises(MessageError) as err:
        parse_action(msg)
    assert err.value.reason == "action"
    for text in names:
        assert text in str(err.value), str(err.value)


def test_actions_over_the_websocket_reach_the_device_malformed_ones_are_dropped_and_logged(headset):
    url = f"wss://127.0.0.1:{headset.server.port}/ws?code={headset.pairing_code}"
    with connect(url, ssl=_tls(), open_timeout=5) as ws:
        for text in ('{"type": "action", "name": "record", "arg": null}', '{"type": "action", "name": "fly"}',
                     '{"type": "action", "name": "reason", "arg": 2}',
                     '{"type": "action", "name": "back", "arg": 1e400}',      # JSON's inf
                     '{"type": "action", "name": "reject", "arg": "dropped the object"}'):
            ws.send(text)
        deadline = time.monotonic() + 5
        while headset.stats()["received"] < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
    stats = headset.stats()
    assert headset.take_actions() == [("record", None), ("reason", 2), ("reject", "dropped the object")]
    assert stats["actions"] == 3 and stats["dropped"] == {"action": 2}
    assert "action.arg of 'back' must be finite" in stats["last_error"]
    assert headset.take_actions() == []
