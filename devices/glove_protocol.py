"""Glove wire protocol, version 1 (see docs/glove-protocol.md): pure encode / decode / validate.

Every multi-byte field is little-endian. A glove packet is exactly ``GLOVE_SIZE`` bytes:

    magic "TGLV" | version u16 | flags u16 | sequence u64 | device time f64 (s)
    | left hand: 20 angles f32 (rad), wrist x y z f32 (m), qw qx qy qz f32
    | right hand: the same | crc32 u32 of all preceding bytes

A haptic packet (app -> glove) is ``HAPTIC_SIZE`` bytes:

    magic "THAP" | version u16 | reserved u16 (0) | sequence u64 | time f64
    | 10 fingertip forces f32 (N, left thumb..little then right thumb..little) | crc32 u32
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

import numpy as np

from devices.frame import SIDES, Pose
from devices.handmodel import NUM_ANGLES, angle_limits
from teleop.core.errors import TeleopError

VERSION = 1
GLOVE_MAGIC = b"TGLV"
HAPTIC_MAGIC = b"THAP"
FLAG_ENGAGE = 1 << 0
FLAG_PRESENT = {"left": 1 << 1, "right": 1 << 2}
FLAG_WRIST = {"left": 1 << 3, "right": 1 << 4}
# Operator buttons on the glove (level signals, like engage: set while held), one flag bit each;
# the app turns a press (the bit's rising edge) into the operator action of the same name. Bits
# 5-8 were "must be 0" in version 1, so older gloves (never setting them) stay valid as they are.
FLAG_BUTTON = {"record": 1 << 5, "accept": 1 << 6, "reject": 1 << 7, "rerecord": 1 << 8}
BUTTONS: tuple[str, ...] = tuple(FLAG_BUTTON)
KNOWN_FLAGS = FLAG_ENGAGE | sum(FLAG_PRESENT.values()) | sum(FLAG_WRIST.values()) | sum(FLAG_BUTTON.values())
HAND_FLOATS = NUM_ANGLES + 7
_HEADER = struct.Struct("<4sHHQd")
_GLOVE = struct.Struct(f"<4sHHQd{2 * HAND_FLOATS}f")
_HAPTIC = struct.Struct("<4sHHQd10f")
_CRC = struct.Struct("<I")
GLOVE_SIZE = _GLOVE.size + _CRC.size      # 244
HAPTIC_SIZE = _HAPTIC.size + _CRC.size    # 68
MAX_WRIST_DISTANCE = 5.0                  # m from the operator-frame origin
MAX_FORCE = 1000.0                        # N
QUAT_TOLERANCE = 0.05                     # |norm - 1| accepted (float32 wire precision)
_LO, _HI = angle_limits()
DROP_REASONS = ("size", "magic", "version", "crc", "flags", "nonfinite", "range", "quaternion")


class PacketError(TeleopError):
    """A packet failed validation; ``reason`` is one of ``DROP_REASONS`` (the drop counter key)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


@dataclass(frozen=True)
class GloveHand:
    angles: np.ndarray          # (20,) rad, see devices.handmodel.ANGLE_NAMES
    wrist: Pose | None          # tracker pose in the operator frame, None without a tracker


@dataclass(frozen=True)
class GlovePacket:
    sequence: int
    timestamp: float
    engage: bool
    hands: dict                 # side -> GloveHand, only the hands present
    buttons: frozenset[str] = frozenset()   # the buttons held (names from ``BUTTONS``)


@dataclass(frozen=True)
class HapticPacket:
    sequence: int
    timestamp: float
    forces: np.ndarray          # (2, 5) N, rows left / right, thumb first


def _seal(body: bytes) -> bytes:
    return body + _CRC.pack(zlib.crc32(body))


def encode_glove(sequence: int, timestamp: float, hands: dict, engage: bool = False,
                 buttons: frozenset[str] | set[str] = frozenset()) -> bytes:
    """Pack a glove packet. ``hands``: side -> ``GloveHand`` (missing sides are absent);
    ``buttons``: the names (``BUTTONS``) held."""
    flags = FLAG_ENGAGE if engage else 0
    for name in buttons:
        flags |= FLAG_BUTTON[name]
    floats: list[float] = []
    for side in SIDES:
        hand = hands.get(side)
        block = np.zeros(HAND_FLOATS)
        block[NUM_ANGLES + 3] = 1.0                       # identity quaternion when unused
        if hand is not None:
            flags |= FLAG_PRESENT[side]
            block[:NUM_ANGLES] = hand.angles
            if hand.wrist is not None:
                flags |= FLAG_WRIST[side]
                block[NUM_ANGLES:NUM_ANGLES + 3] = hand.wrist.position
                block[NUM_ANGLES + 3:] = hand.wrist.quat
        floats.extend(block.tolist())
    return _seal(_GLOVE.pack(GLOVE_MAGIC, VERSION, flags, sequence, timestamp, *floats))


def _check_envelope(data: bytes, size: int, magic: bytes) -> None:
    if len(data) != size:
        raise PacketError("size", f"expected {size} bytes, got {len(data)}")
    if data[:4] != magic:
        raise PacketError("magic", f"expected {magic!r}, got {bytes(data[:4])!r}")
    version = struct.unpack_from("<H", data, 4)[0]
    if version != VERSION:
        raise PacketError("version", f"protocol version {version}, this build reads {VERSION}")
    if zlib.crc32(data[:-4]) != _CRC.unpack_from(data, size - 4)[0]:
        raise PacketError("crc", "checksum mismatch")


def _check_time(timestamp: float) -> None:
    if not np.isfinite(timestamp):
        raise PacketError("nonfinite", "device timestamp")
    if timestamp < 0:
        raise PacketError("range", f"device timestamp {timestamp} < 0")


def _decode_hand(side: str, block: np.ndarray, has_wrist: bool) -> GloveHand:
    angles = block[:NUM_ANGLES]
    if np.any(angles < _LO) or np.any(angles > _HI):
        raise PacketError("range", f"{side} joint angle outside the glove's limits")
    wrist = None
    if has_wrist:
        pos, quat = block[NUM_ANGLES:NUM_ANGLES + 3], block[NUM_ANGLES + 3:]
        if np.linalg.norm(pos) > MAX_WRIST_DISTANCE:
            raise PacketError("range", f"{side} wrist {MAX_WRIST_DISTANCE} m beyond the origin")
        norm = float(np.linalg.norm(quat))
        if abs(norm - 1.0) > QUAT_TOLERANCE:
            raise PacketError("quaternion", f"{side} wrist quaternion norm {norm:.3f}")
        wrist = Pose(pos, quat / norm)
    return GloveHand(angles.copy(), wrist)


def decode_glove(data: bytes) -> GlovePacket:
    """Validate and unpack a glove packet; raises ``PacketError`` naming the drop reason."""
    _check_envelope(data, GLOVE_SIZE, GLOVE_MAGIC)
    _, _, flags, seq, timestamp, *floats = _GLOVE.unpack_from(data)
    if flags & ~KNOWN_FLAGS:
        raise PacketError("flags", f"unknown flag bits {flags & ~KNOWN_FLAGS:#x}")
    _check_time(timestamp)
    values = np.asarray(floats, dtype=np.float64).reshape(2, HAND_FLOATS)
    if not np.all(np.isfinite(values)):
        raise PacketError("nonfinite", "NaN or infinite hand value")
    hands = {side: _decode_hand(side, values[i], bool(flags & FLAG_WRIST[side]))
             for i, side in enumerate(SIDES) if flags & FLAG_PRESENT[side]}
    held = frozenset(name for name, bit in FLAG_BUTTON.items() if flags & bit)
    return GlovePacket(int(seq), float(timestamp), bool(flags & FLAG_ENGAGE), hands, held)


def encode_haptic(sequence: int, timestamp: float, forces) -> bytes:
    """Pack fingertip forces (2, 5) or (10,) newtons (left thumb..little, right thumb..little)."""
    f = np.asarray(forces, dtype=np.float64).reshape(10)
    return _seal(_HAPTIC.pack(HAPTIC_MAGIC, VERSION, 0, sequence, timestamp, *f.tolist()))


def decode_haptic(data: bytes) -> HapticPacket:
    _check_envelope(data, HAPTIC_SIZE, HAPTIC_MAGIC)
    _, _, reserved, seq, timestamp, *floats = _HAPTIC.unpack_from(data)
    if reserved:
        raise PacketError("flags", f"reserved field is {reserved}, expected 0")
    _check_time(timestamp)
    forces = np.asarray(floats, dtype=np.float64)
    if not np.all(np.isfinite(forces)):
        raise PacketError("nonfinite", "NaN or infinite force")
    if np.any(forces < 0) or np.any(forces > MAX_FORCE):
        raise PacketError("range", f"force outside [0, {MAX_FORCE}] N")
    return HapticPacket(int(seq), float(timestamp), forces.reshape(2, 5))
