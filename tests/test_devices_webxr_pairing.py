"""Pairing that an operator can rely on: a restarted app keeps its pairing code and certificate
(re-pairing only on purpose), and one headset at a time drives the robot."""
from __future__ import annotations

import json
import stat
from contextlib import ExitStack

import pytest
from test_devices_webxr import _frame_msg, _tls
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

import devices
from devices.webxr.pairing import PAIRING_NAME, ensure_pairing_code
from teleop.core.errors import ConfigError
from helpers import wait_for


def _device(tmp_path, **options):
    dev = devices.create_device("webxr", host="127.0.0.1", port=0, config_dir=tmp_path, **options)
    dev.connect()
    return dev


def test_restarted_app_keeps_pairing_code_and_certificate(tmp_path):
    first = _device(tmp_path)
    info = first.connection_info()
    first.close()
    again = _device(tmp_path)
    try:
        assert again.pairing_code == first.pairing_code and len(again.pairing_code) == 8
        assert again.connection_info().fingerprint == info.fingerprint
        assert stat.S_IMODE((tmp_path / PAIRING_NAME).stat().st_mode) == 0o600
        again.close()
        again.connect()                   # the same device object restarted (next episode)
        assert again.pairing_code == first.pairing_code
    finally:
        again.close()
    renewed = _device(tmp_path, new_pairing_code=True)    # re-pairing on purpose
    try:
        assert renewed.pairing_code != first.pairing_code
        renewed.close()
        renewed.connect()                 # renewed once, not at every restart
        code = renewed.pairing_code
    finally:
        renewed.close()
    assert (tmp_path / PAIRING_NAME).read_text().strip() == code


def test_pairing_code_file_edge_cases(tmp_path):
    assert ensure_pairing_code(tmp_path, fixed="MYCODE-1") == "MYCODE-1"
    assert ensure_pairing_code(tmp_path) == "MYCODE-1"          # a fixed code is kept too
    (tmp_path / PAIRING_NAME).write_text("bad code with spaces\n")
    fresh = ensure_pairing_code(tmp_path)                       # a damaged file: a new code
    assert fresh != "bad code with spaces" and ensure_pairing_code(tmp_path) == fresh
    with pytest.raises(ConfigError, match="pairing code"):
        ensure_pairing_code(tmp_path, fixed="a b")


def _ws(dev, client: str, takeover: bool = False):
    url = (f"wss://127.0.0.1:{dev.server.port}/ws?code={dev.pairing_code}&client={client}"
           + ("&takeover=1" if takeover else ""))
    return connect(url, ssl=_tls(), open_timeout=5, max_size=None)


def _wait(predicate, timeout: float = 5.0) -> bool:
    return wait_for(predicate, timeout)


def _closed_with(ws) -> tuple[int, str]:
    with pytest.raises(ConnectionClosed) as err:
        while True:
            ws.recv(timeout=5)
    return err.value.rcvd.code, err.value.rcvd.reason


def test_second_headset_is_refused_with_a_reason_and_counted(tmp_path):
    dev = _device(tmp_path)
    try:
        with _ws(dev, "first") as first:
            first.send(json.dumps(_frame_msg(1)))
            assert _wait(lambda: dev.read().frame is not None)
            with _ws(dev, "second") as second:
                try:
                    second.send(json.dumps(_frame_msg(900)))  # must never reach the robot
                except ConnectionClosed:
                    pass                                      # refused before it could send
                code, reason = _closed_with(second)
            assert code == 4409 and "another headset" in reason
            first.send(json.dumps(_frame_msg(2)))             # the first keeps driving
            assert _wait(lambda: dev.read().frame.sequence == 2)
            stats = dev.stats()
            assert stats["busy"] == 1 and stats["connects"] == 1 and stats["clients"] == 1
            assert stats["frames"] == 2
    finally:
        dev.close()


def test_takeover_is_explicit_and_a_reconnecting_page_replaces_itself(tmp_path):
    dev = _device(tmp_path)
    stack = ExitStack()
    try:
        first = stack.enter_context(_ws(dev, "first"))
        first.send(json.dumps(_frame_msg(1)))
        assert _wait(lambda: dev.read().frame is not None)
        # The same page reconnecting (its old socket not yet known dead) is not a second headset.
        again = stack.enter_context(_ws(dev, "first"))
        code, _ = _closed_with(first)
        assert code == 4411
        again.send(json.dumps(_frame_msg(2)))
        assert _wait(lambda: dev.read().frame.sequence == 2)
        with _ws(dev, "second", takeover=True) as second:      # explicit: the old one is told
            code, reason = _closed_with(again)
            assert code == 4410 and "took over" in reason
            second.send(json.dumps(_frame_msg(3)))
            assert _wait(lambda: dev.read().frame.sequence == 3)
        stats = dev.stats()
        assert stats["takeovers"] == 1 and stats["replaced"] == 1 and stats["busy"] == 0
        assert stats["accepted"] + sum(stats["dropped"].values()) == stats["received"]
    finally:
        stack.close()
        dev.close()
