"""Checks on a take that need no simulation: every array of its declared shape and finite, indexes
in range, actions within the actuators' control ranges; and the digest that ties an export to
exactly the arrays validation checked.

Each check returns human-readable problems naming the dataset, the tick and the column, so a
failed validation says what is wrong rather than only that something is.
"""
from __future__ import annotations

import hashlib

import numpy as np

from recordings.takefile import ADDED_LATER, FLAGS, H5_PATHS, TIMING, Take
from teleop.sim import ACTION_DIM, OBS_DIM

# float32 actions are the float64 targets rounded once, so one may sit a rounding step outside a
# float64 range bound; anything beyond this (rad) is not rounding.
RANGE_SLACK = 1e-6
FINITE = ("actions", "states", "obs", "progress", "timing")      # frames are device data, kept as received


def declared_shapes(take: Take) -> dict[str, tuple[int, ...]]:
    m, t = take.meta, take.length
    shapes = {"actions": (t, ACTION_DIM), "states": (t, len(m.initial_state)), "obs": (t, OBS_DIM),
              "instruction": (t,), "subtasks": (t, len(m.subtask_names)), "progress": (t,),
              "timing": (t, len(TIMING)), "frame": (t, len(m.frame_columns)), "flags": (t, len(FLAGS)),
              "cue_hidden": (t,)}
    return {name: shape for name, shape in shapes.items() if name in take.arrays or name not in ADDED_LATER}


def _first_bad(mask: np.ndarray) -> str:
    where = np.argwhere(mask)[0]
    return f"tick {where[0]}" + (f", column {where[1]}" if len(where) > 1 else "")


def array_problems(take: Take) -> list[str]:
    """Shapes, finiteness and index ranges of every per-tick array."""
    problems = []
    if take.length == 0:
        return ["take has no ticks"]
    for name, shape in declared_shapes(take).items():
        arr = take.arrays[name]
        if arr.shape != shape:
            what = " (one column per subtask: " + ", ".join(take.meta.subtask_names) + ")" if name == "subtasks" else ""
            problems.append(f"dataset '{H5_PATHS[name]}' has shape {arr.shape}, declared {shape}{what}")
    if problems:
        return problems
    initial = take.initial_state
    if not np.all(np.isfinite(initial)):
        problems.append("initial_state contains NaN or infinite values")
    for name in FINITE:
        bad = ~np.isfinite(take.arrays[name])
        if bad.any():
            problems.append(f"dataset '{H5_PATHS[name]}' contains NaN or infinite values (first at {_first_bad(bad)})")
    instruction = take.arrays["instruction"]
    bad = (instruction < 0) | (instruction >= len(take.meta.instructions))
    if bad.any():
        problems.append(f"dataset '{H5_PATHS['instruction']}' indexes past the {len(take.meta.instructions)} "
                        f"instruction(s) (first at {_first_bad(bad)})")
    for name in ("subtasks", "flags", "cue_hidden"):
        if name not in take.arrays:      # cue_hidden: older takes lack it
            continue
        bad = take.arrays[name] > 1
        if bad.any():
            problems.append(f"dataset '{H5_PATHS[name]}' holds values other than 0/1 (first at {_first_bad(bad)})")
    if not np.array_equal(take.arrays["states"][0], initial):
        problems.append("dataset 'states' does not start at initial_state")
    return problems


def range_problems(actions: np.ndarray, low: np.ndarray, high: np.ndarray, names) -> list[str]:
    """Actions outside the actuators' control ranges (the recorder never produces one)."""
    a = np.asarray(actions, np.float64)
    outside = (a < low - RANGE_SLACK) | (a > high + RANGE_SLACK)
    if not outside.any():
        return []
    t, j = np.argwhere(outside)[0]
    return [f"dataset 'actions' leaves the control range at {int(outside.sum())} value(s); first: tick {t}, "
            f"joint {names[j]!r} = {a[t, j]:.6g}, range [{low[j]:.6g}, {high[j]:.6g}]"]


def take_digest(take: Take) -> str:
    """SHA-256 over everything export writes (arrays, initial state, model and instructions): an
    export compares it with the digest in the validation report to know the take is unchanged."""
    h = hashlib.sha256()
    for name in H5_PATHS:
        if name not in take.arrays:      # a dataset older takes lack: their digest stays what it was
            continue
        arr = np.ascontiguousarray(take.arrays[name])
        h.update(f"{name}:{arr.dtype.str}:{arr.shape};".encode())
        h.update(arr.tobytes())
    h.update(np.asarray(take.meta.initial_state, np.float64).tobytes())
    h.update("\x1f".join([take.meta.model_fingerprint, *take.meta.instructions, *take.meta.subtask_names]).encode())
    return h.hexdigest()
