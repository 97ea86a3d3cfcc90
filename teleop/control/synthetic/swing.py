"""Arcs about a hinge: the keyframes of a hand carrying a hinged part (lid, door, cap) round its joint."""
from __future__ import annotations

import numpy as np

ARC_STEP = 0.15     # rad between keys: short enough that the chords stay within ~3 mm of a 0.2 m arc


def axis_rotation(axis, angle: float) -> np.ndarray:
    """Rotation (3, 3) by ``angle`` (rad, right-handed) about the unit vector ``axis``."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def arc(pos, rot, anchor, axis, angle: float, turn: float = 1.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(palm position, palm rotation) keys carrying ``pos`` round the line through ``anchor`` along
    ``axis`` by ``angle``; the palm turns by ``turn`` times the part's rotation (1: rigidly with it).
    The first key is one step on, the last is at ``angle``."""
    pos, anchor = np.asarray(pos, float), np.asarray(anchor, float)
    n = max(1, int(np.ceil(abs(angle) / ARC_STEP)))
    keys = []
    for i in range(1, n + 1):
        th = angle * i / n
        keys.append((anchor + axis_rotation(axis, th) @ (pos - anchor), axis_rotation(axis, turn * th) @ rot))
    return keys
