"""Take files: one HDF5 file per take in robomimic's layout, written crash-safely.

While recording, ticks go to an append-only journal (:mod:`recordings.journal`); ``finish()``
converts it into ``<take_id>.h5`` atomically (temp file, fsync, rename). A journal left behind by a
crash is turned into a take marked ``interrupted`` by :func:`recover_interrupted`.

Layout (T ticks; ``states[t]``/``obs[t]`` are BEFORE ``actions[t]``, robomimic's convention)::

    data/                      attrs: total, env_args (JSON)
    data/demo_0/               attrs: num_samples, model_file (MJCF), env_args (JSON), meta (JSON),
                                      review (JSON: status, reason, report), interrupted
      actions (T, 58) f4       states (T, D) f8         obs/state (T, 130) f4
      initial_state (D,) f8    instruction_index (T,) i4 subtask_latched (T, K) u1
      progress (T,) f4         timing (T, len(TIMING)) f8  operator_frames (T, F) f8
      tick_flags (T, len(FLAGS)) u1
      rewards (T,) f8          dones (T,) i8            next_obs/state (T, 130) f4
      scene_events () str      JSON list of {tick, event, type, effect} (recordings.take_events)

``env_args`` follows robomimic's ``{env_name, type, env_kwargs}`` and keeps our own keys beside
them; ``rewards``/``dones``/``next_obs`` are defined in :mod:`recordings.robomimic_layout`. Takes
written before these existed lack them (and ``scene_events``); readers treat them as optional.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import h5py
import numpy as np

from recordings.errors import TakeError
from recordings import robomimic_layout as rl
from recordings.journal import Column, fsync_dir, read_journal
from recordings.take_events import H5_NAME as H5_EVENTS
from recordings.take_events import read_journal_events

TIMING = ("wall_time", "frame_age_ms", "retarget_ms", "physics_ms", "score_ms", "tick_ms")
FLAGS = ("engaged", "held", "stale")
STATUSES = ("recorded", "accepted", "rejected", "validated_pass", "validated_fail", "exported")
H5_PATHS = {"actions": "actions", "states": "states", "obs": "obs/state", "instruction": "instruction_index",
            "subtasks": "subtask_latched", "progress": "progress", "timing": "timing",
            "frame": "operator_frames", "flags": "tick_flags"}
DEMO = "data/demo_0"
OPTIONAL_PATHS = {"rewards": "rewards", "dones": "dones", "next_obs": "next_obs/state"}
NEXT_OBS_LAST = "next_obs_last.npz"     # in a journal folder: the recorder's observation after its last step
NO_FRAME_AGE_MS = -1.0      # timing/frame_age_ms of a tick that had no device frame (kept finite)


def age_to_ms(age_s: float) -> float:
    """A device frame's age (s; inf when there was none) as the take stores it (ms)."""
    return float(age_s) * 1e3 if np.isfinite(age_s) else NO_FRAME_AGE_MS


def age_from_ms(ages_ms: np.ndarray) -> np.ndarray:
    """The inverse of :func:`age_to_ms` over a column: (T,) seconds, inf where there was no frame."""
    ages_ms = np.asarray(ages_ms, np.float64)
    return np.where(ages_ms < 0, np.inf, ages_ms / 1e3)


@dataclass(frozen=True)
class TakeMeta:
    """Everything about a take except its per-tick arrays."""

    take_id: str
    task_id: str
    seed_index: int
    episode_index: int
    operator: str
    model_xml: str
    model_fingerprint: str
    initial_state: tuple[float, ...]
    instructions: tuple[str, ...]
    subtask_names: tuple[str, ...]
    frame_columns: tuple[str, ...] = ()
    device: str = "unknown"
    embodiment: str = "bidex_fr3_22dof"
    control_hz: float = 25.0
    retarget_config: str = ""
    retarget_config_hash: str = ""
    operator_profile: str = ""
    software: dict = field(default_factory=dict)
    created: float = 0.0

    def env_args(self) -> dict:
        """robomimic's ``{env_name, type, env_kwargs}``, with our own keys kept beside them."""
        ours = {"task_id": self.task_id, "seed_index": self.seed_index, "episode_index": self.episode_index,
                "embodiment": self.embodiment, "model_fingerprint": self.model_fingerprint,
                "control_hz": self.control_hz}
        return {"env_name": self.task_id, "type": rl.ROBOMIMIC_GYM_TYPE, "env_kwargs": dict(ours), **ours}

    def to_json(self) -> dict:
        out = asdict(self)
        out.pop("model_xml")
        out.pop("initial_state")
        return out

    def columns(self) -> list[Column]:
        return [Column("actions", "<f4", (58,)), Column("states", "<f8", (len(self.initial_state),)),
                Column("obs", "<f4", (130,)), Column("instruction", "<i4", ()),
                Column("subtasks", "|u1", (len(self.subtask_names),)), Column("progress", "<f4", ()),
                Column("timing", "<f8", (len(TIMING),)), Column("frame", "<f8", (len(self.frame_columns),)),
                Column("flags", "|u1", (len(FLAGS),))]


@dataclass(frozen=True)
class Review:
    status: str = "recorded"
    reason: str = ""
    report: dict = field(default_factory=dict)
    updated: float = 0.0


@dataclass(frozen=True)
class Take:
    """A take read back from its HDF5 file."""

    path: Path
    meta: TakeMeta
    arrays: dict[str, np.ndarray]
    review: Review
    interrupted: bool
    events: tuple[dict, ...] = ()        # scene events (recordings.take_events); () for older takes

    @property
    def length(self) -> int:
        return int(self.arrays["actions"].shape[0])

    @property
    def initial_state(self) -> np.ndarray:
        return np.asarray(self.meta.initial_state, dtype=np.float64)



def _meta_from_json(raw: dict, model_xml: str, initial_state, where) -> TakeMeta:
    names = {f.name for f in fields(TakeMeta)} - {"model_xml", "initial_state"}
    try:
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items() if k in names}
        return TakeMeta(model_xml=model_xml, initial_state=tuple(float(x) for x in initial_state), **kwargs)
    except TypeError as exc:
        raise TakeError(where, f"attribute 'meta' is incomplete: {exc}") from exc


def write_take_h5(path: Path, meta: TakeMeta, arrays: dict[str, np.ndarray], review: Review,
                  interrupted: bool, events: list[dict] | tuple = (), next_obs_last: np.ndarray | None = None) -> Path:
    """Write a complete take file atomically (temp file in the same folder, fsync, rename).

    ``next_obs_last`` is the observation after the last action; without it, it is re-simulated
    (see :mod:`recordings.robomimic_layout`)."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    extra = _robomimic_arrays(meta, arrays, list(events), next_obs_last, path)
    with h5py.File(tmp, "w") as h5:
        data = h5.create_group("data")
        data.attrs["total"] = int(arrays["actions"].shape[0])
        data.attrs["env_args"] = json.dumps(meta.env_args())
        demo = data.create_group("demo_0")
        for name, h5path in H5_PATHS.items():
            arr = arrays[name]
            kwargs = {"compression": "lzf", "chunks": True} if arr.ndim == 2 and arr.shape[0] > 0 else {}
            demo.create_dataset(h5path, data=arr, **kwargs)
        for name, h5path in OPTIONAL_PATHS.items():
            demo.create_dataset(h5path, data=extra[name])
        demo.create_dataset(H5_EVENTS, data=json.dumps(list(events)))
        demo.create_dataset("initial_state", data=np.asarray(meta.initial_state, np.float64))
        demo.attrs["num_samples"] = int(arrays["actions"].shape[0])
        demo.attrs["model_file"] = meta.model_xml
        demo.attrs["env_args"] = json.dumps(meta.env_args())
        demo.attrs["meta"] = json.dumps(meta.to_json())
        demo.attrs["review"] = json.dumps(asdict(review))
        demo.attrs["interrupted"] = bool(interrupted)
        demo["timing"].attrs["columns"] = json.dumps(TIMING)
        demo["tick_flags"].attrs["columns"] = json.dumps(FLAGS)
        demo["operator_frames"].attrs["columns"] = json.dumps(list(meta.frame_columns))
        demo["instruction_index"].attrs["instructions"] = json.dumps(list(meta.instructions))
        demo["subtask_latched"].attrs["subtasks"] = json.dumps(list(meta.subtask_names))
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return path


def _robomimic_arrays(meta: TakeMeta, arrays: dict, events: list[dict], last, where) -> dict[str, np.ndarray]:
    length = int(arrays["actions"].shape[0])
    if length and last is None:
        last = rl.resimulate_last_obs(meta.model_xml, meta.model_fingerprint, arrays["states"][-1],
                                      arrays["actions"][-1], events, length, where)
    return {"rewards": rl.rewards_from_progress(arrays["progress"]), "dones": rl.dones_for(length),
            "next_obs": rl.next_obs(np.asarray(arrays["obs"], np.float32), last)}


def read_take(path: Path) -> Take:
    """Load a take; a truncated, corrupted or incomplete file raises :class:`TakeError`."""
    path = Path(path)
    try:
        with h5py.File(path, "r") as h5:
            if DEMO not in h5:
                raise TakeError(path, f"group {DEMO!r} is missing: not a take file")
            demo = h5[DEMO]
            arrays = {}
            for name, h5path in H5_PATHS.items():
                if h5path not in demo:
                    raise TakeError(path, f"dataset '{DEMO}/{h5path}' is missing")
                arrays[name] = demo[h5path][()]
            for name, h5path in OPTIONAL_PATHS.items():
                if h5path in demo:
                    arrays[name] = demo[h5path][()]
            events = tuple(json.loads(demo[H5_EVENTS][()])) if H5_EVENTS in demo else ()
            meta = _meta_from_json(json.loads(demo.attrs["meta"]), str(demo.attrs["model_file"]),
                                   demo["initial_state"][()], path)
            review = Review(**json.loads(demo.attrs["review"]))
            interrupted = bool(demo.attrs["interrupted"])
    except TakeError:
        raise
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise TakeError(path, f"unreadable take file ({type(exc).__name__}: {exc})") from exc
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise TakeError(path, f"per-tick datasets disagree on length: {lengths}")
    if arrays["states"].shape[1:] != (len(meta.initial_state),):
        raise TakeError(path, "dataset 'states' width differs from 'initial_state'")
    return Take(path, meta, arrays, review, interrupted, events)


def update_review(path: Path, review: Review) -> None:
    """Change a take's review status in place (a small attribute write; arrays are untouched)."""
    if review.status not in STATUSES:
        raise TakeError(path, f"status {review.status!r} is not one of {', '.join(STATUSES)}")
    stamped = Review(review.status, review.reason, review.report, review.updated or time.time())
    with h5py.File(path, "r+") as h5:
        h5[DEMO].attrs["review"] = json.dumps(asdict(stamped))


def finalize_journal(folder: Path, interrupted: bool) -> Path:
    """Turn a journal folder into ``<take_id>.h5`` next to it, then remove the journal."""
    folder = Path(folder)
    contents = read_journal(folder)
    header = contents.header
    meta = _meta_from_json(header["meta"], header["model_xml"], header["initial_state"], folder / "header.json")
    review = Review(reason="interrupted: recovered from the journal" if interrupted else "")
    last = None
    if (folder / NEXT_OBS_LAST).exists():
        with np.load(folder / NEXT_OBS_LAST) as saved:
            if int(saved["ticks"]) == contents.ticks:    # else written for ticks a torn tail lost
                last = saved["obs"]
    events = [e for e in read_journal_events(folder) if int(e["tick"]) <= contents.ticks]
    path = write_take_h5(folder.with_name(f"{meta.take_id}.h5"), meta, contents.arrays, review, interrupted,
                         events, last)
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    return path


def recover_interrupted(root: Path) -> list[Path]:
    """Every journal left by a crash becomes an interrupted take; returns their paths."""
    recovered = []
    for folder in sorted(Path(root).glob("*.partial")):
        if (folder / "header.json").exists():
            recovered.append(finalize_journal(folder, interrupted=True))
    return recovered
