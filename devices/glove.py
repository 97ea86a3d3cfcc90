"""Exoskeleton glove over ZeroMQ: the app-side ``GloveDevice`` and the glove-side ``GloveLink``.

Sockets (each side binds the socket it publishes on, the ZeroMQ convention):
    glove  PUB --(glove packets, ~100 Hz)-->  SUB app    (app connects to ``endpoint``)
    glove  SUB <--(haptic packets, 25 Hz)---  PUB app    (app binds ``haptics_bind``)
"""
from __future__ import annotations

import time

import numpy as np
import zmq

from dataclasses import dataclass, field

from devices.base import (ActionQueue, BackgroundReader, ConnectionInfo, Device, DeviceError, DropCounter,
                          LatestFrame, Reading)
from devices.config import DeviceConfig, DeviceContext
from devices.frame import NUM_NODES, FrameError, HandFrame, OperatorFrame
from devices.glove_protocol import (BUTTONS, GloveHand, GlovePacket, PacketError, decode_glove, decode_haptic,
                                    encode_glove, encode_haptic)
from devices.handmodel import nominal_wrist, world_nodes


def packet_to_frame(packet: GlovePacket, received: float, device: str = "glove") -> OperatorFrame:
    """Turn a validated glove packet into an ``OperatorFrame`` (nodes via the hand model)."""
    hands = {}
    for side, hand in packet.hands.items():
        wrist = hand.wrist if hand.wrist is not None else nominal_wrist(side)
        hands[side] = HandFrame(wrist, world_nodes(hand.angles, side, wrist),
                                np.ones(NUM_NODES, bool), hand.wrist is not None, hand.angles)
    return OperatorFrame(packet.timestamp, received, packet.sequence, hands.get("left"),
                         hands.get("right"), None, packet.engage, device)


DEVICE_NAME = "glove"
# A press within this long of the same button's previous press is contact bounce (or a
# double press that would start and at once stop a take), not a second press.
BUTTON_DEBOUNCE_S = 0.3
# A glove cannot offer the window's list of reasons, so its Reject button says "other" (the
# list's catch-all, ui.record_panel.REJECT_REASONS); the reviewer can refine it in the window.
GLOVE_REJECT_REASON = "other"
BUTTON_ARGS: dict[str, object] = {"reject": GLOVE_REJECT_REASON}


@DeviceConfig.register_subclass(DEVICE_NAME)
@dataclass(frozen=True, kw_only=True)
class GloveConfig(DeviceConfig):
    label = "Exoskeleton glove (ZeroMQ)"
    menu_order = 1
    no_frames_hint = "start the glove bridge publishing to this endpoint (a test stream: teleop glove-sim)"
    endpoint: str = field(default="tcp://127.0.0.1:5570", metadata={"help": "the glove's ZeroMQ PUB endpoint"})
    haptics_bind: str = field(default="tcp://*:5571", metadata={"help": "where the app's haptics PUB binds"})
    stale_after: float = field(default=0.1, metadata={"help": "seconds after which a frame is stale"})
    rcv_hwm: int = field(default=1000, metadata={"help": "ZeroMQ receive high-water mark (0: unbounded)"})

    def build(self, context: DeviceContext) -> GloveDevice:
        return GloveDevice(self.endpoint, self.haptics_bind, self.stale_after, self.rcv_hwm)


class GloveDevice(Device):
    """Reads glove packets on a SUB socket in a background thread; publishes haptics.

    Options: ``endpoint`` (the glove's PUB address to connect to), ``haptics_bind`` (where the
    app's haptic PUB binds; port ``*`` picks a free one, see ``haptics_endpoint``),
    ``stale_after`` (s), ``rcv_hwm`` (ZeroMQ receive high-water mark, 0 = unbounded).
    """

    def __init__(self, endpoint: str = "tcp://127.0.0.1:5570",
                 haptics_bind: str = "tcp://*:5571", stale_after: float = 0.1, rcv_hwm: int = 1000):
        self.endpoint = endpoint
        self.haptics_bind = haptics_bind
        self.rcv_hwm = int(rcv_hwm)
        self._slot = LatestFrame(stale_after)
        self.drops = DropCounter()
        self.received = 0
        self.sequence_gaps = 0
        self._last_seq: int | None = None
        self._ctx: zmq.Context | None = None
        self._sub = self._pub = None
        self._reader: BackgroundReader | None = None
        self._haptic_seq = 0
        self.haptics_endpoint = ""
        self._actions = ActionQueue()
        self._held: frozenset[str] = frozenset()
        self._pressed_at: dict[str, float] = {}

    def connect(self) -> None:
        if self._ctx is not None:
            raise DeviceError("glove already connected")
        self._ctx = zmq.Context()
        try:
            self._sub = self._ctx.socket(zmq.SUB)
            self._sub.setsockopt(zmq.RCVHWM, self.rcv_hwm)
            self._sub.setsockopt(zmq.LINGER, 0)
            self._sub.setsockopt(zmq.SUBSCRIBE, b"")
            self._sub.connect(self.endpoint)
            self._pub = self._ctx.socket(zmq.PUB)
            self._pub.setsockopt(zmq.LINGER, 0)
            self._pub.setsockopt(zmq.SNDHWM, 4)    # haptics are latest-value: never queue up
            self._pub.bind(self.haptics_bind)
            self.haptics_endpoint = self._pub.getsockopt_string(zmq.LAST_ENDPOINT)
        except zmq.ZMQError as exc:
            self.close()
            raise DeviceError(f"glove: cannot open {self.endpoint} / {self.haptics_bind}: {exc}") from exc
        self._reader = BackgroundReader("glove-reader", self._poll)
        self._reader.start()

    def _poll(self, timeout: float) -> None:
        if not self._sub.poll(int(timeout * 1000)):
            return
        while True:
            try:
                parts = self._sub.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return
            self.handle_message(parts, time.monotonic())

    def handle_message(self, parts: list[bytes], received: float) -> bool:
        """Validate one ZeroMQ message; keep it as the latest frame or count why it was dropped."""
        self.received += 1
        if len(parts) != 1:
            self.drops.drop("multipart")
            return False
        try:
            packet = decode_glove(parts[0])
            frame = packet_to_frame(packet, received, DEVICE_NAME)
        except PacketError as exc:
            self.drops.drop(exc.reason)
            return False
        except FrameError:                 # valid packet, impossible hand (defensive)
            self.drops.drop("frame")
            return False
        if self._last_seq is not None and packet.sequence != self._last_seq + 1:
            self.sequence_gaps += 1        # lost or restarted: informative, still accepted
        self._last_seq = packet.sequence
        self._slot.put(frame)
        self._buttons(packet.buttons, received)
        return True

    def _buttons(self, held: frozenset[str], now: float) -> None:
        """A button's rising edge is one press -> one operator action (held longer: still one).
        A lost packet only delays an edge; it never makes a second one."""
        for name in BUTTONS:
            if name in held and name not in self._held:
                if now - self._pressed_at.get(name, -float("inf")) >= BUTTON_DEBOUNCE_S:
                    self._actions.put(name, BUTTON_ARGS.get(name))
                self._pressed_at[name] = now
        self._held = held

    def take_actions(self) -> list[tuple[str, object]]:
        return self._actions.take()

    def read(self) -> Reading:
        return self._slot.get()

    def publish_haptics(self, forces) -> bool:
        """Send fingertip forces (2, 5) N (left/right, thumb first); False if not sent."""
        if self._pub is None:
            return False
        data = encode_haptic(self._haptic_seq, time.monotonic(), np.clip(forces, 0.0, 1000.0))
        try:
            self._pub.send(data, zmq.NOBLOCK)
        except zmq.Again:
            return False
        self._haptic_seq += 1
        return True

    def close(self) -> None:
        if self._reader is not None:
            reader, self._reader = self._reader, None
            if not reader.stop():
                # ZeroMQ sockets are not thread-safe: closing one under a poll that is still
                # running can crash the process. Leave them (and the context) to the process.
                self._sub = self._pub = self._ctx = None
                return
        for sock in (self._sub, self._pub):
            if sock is not None:
                sock.close(0)
        self._sub = self._pub = None
        if self._ctx is not None:
            self._ctx.term()
            self._ctx = None

    @property
    def is_connected(self) -> bool:
        return self._reader is not None and self._reader.alive

    def connection_info(self) -> ConnectionInfo:
        where = f"glove packets from {self.endpoint}"
        if self.haptics_endpoint:
            where += f", haptics on {self.haptics_endpoint}"
        return ConnectionInfo(where if self.is_connected else f"not connected ({where})")

    def stats(self) -> dict:
        return {"received": self.received, "accepted": self._slot.accepted, "actions": self._actions.put_count,
                "dropped": self.drops.snapshot(), "sequence_gaps": self.sequence_gaps,
                "reader_errors": self._reader.errors if self._reader else 0}


class GloveLink:
    """The glove side (glove bridge firmware, ``teleop glove-sim``, tests): publish packets,
    receive haptics. ``bind`` is the glove PUB address; ``connect_haptics`` the app's PUB."""

    def __init__(self, bind: str = "tcp://*:5570", haptics: str | None = "tcp://127.0.0.1:5571"):
        self._ctx = zmq.Context()
        self.pub = self._ctx.socket(zmq.PUB)
        self.pub.setsockopt(zmq.LINGER, 0)
        self.pub.bind(bind)
        self.endpoint = self.pub.getsockopt_string(zmq.LAST_ENDPOINT)
        self.sub = None
        self.haptic_drops = DropCounter()
        if haptics:
            self.connect_haptics(haptics)

    def connect_haptics(self, endpoint: str) -> None:
        self.sub = self._ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.sub.connect(endpoint)

    def send(self, sequence: int, timestamp: float, hands: dict[str, GloveHand], engage=False,
             buttons: frozenset[str] | set[str] = frozenset()) -> None:
        self.pub.send(encode_glove(sequence, timestamp, hands, engage, buttons))

    def send_raw(self, data: bytes) -> None:
        self.pub.send(data)

    def recv_haptics(self, timeout: float = 0.0) -> list:
        """All haptic packets waiting (waiting up to ``timeout`` s for the first)."""
        out = []
        if self.sub is None or not self.sub.poll(int(timeout * 1000)):
            return out
        while True:
            try:
                data = self.sub.recv(zmq.NOBLOCK)
            except zmq.Again:
                return out
            try:
                out.append(decode_haptic(data))
            except PacketError as exc:
                self.haptic_drops.drop(exc.reason)

    def close(self) -> None:
        for sock in (self.pub, self.sub):
            if sock is not None:
                sock.close(0)
        self._ctx.term()
