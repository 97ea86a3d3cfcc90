"""Take files: one HDF5 file per take in robomimic's layout, written crash-safely.

While recording, ticks go to an append-only journal (:mod:`recordings.journal`); ``finish()``
converts it into ``<take_id>.h5`` atomically (temp file, fsync, rename; :mod:`recordings.finalize`).
A finished file is never modified in place: a review change writes a new copy and renames it over
the old one, so a reader or a crash only ever sees a complete file.

Layout (T ticks; ``states[t]``/``obs[t]`` are BEFORE ``actions[t]``, robomimic's convention)::

    data/                      attrs: total, env_args (JSON)
    data/demo_0/               attrs: num_samples, model_file (MJCF), env_args (JSON), meta (JSON),
                                      review (JSON: status, reason, report), interrupted
      actions (T, 58) f4       states (T, D) f8         obs/state (T, 130) f4
      initial_state (D,) f8    instruction_index (T,) i4 subtask_latched (T, K) u1
      progress (T,) f4         timing (T, len(TIMING)) f8  operator_frames (T, F) f8
      tick_flags (T, len(FLAGS)) u1  cue_hidden (T,) u1: the task's memory cue provably hidden in states[t]
      rewards (T,) f8          dones (T,) i8            next_obs/state (T, 130) f4
      scene_events () str      JSON list of {tick, event, type, effect} (recordings.take_events)

``env_args`` follows robomimic's ``{env_name, type, env_kwargs}`` and keeps our own keys beside
them; ``rewards``/``dones``/``next_obs`` are defined in :mod:`recordings.robomimic_layout`. Takes
written before these existed lack them (and ``scene_events``); readers treat them as optional.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import h5py
import numpy as np

from recordings import faults
from recordings.errors import TakeError
from recordings import robomimic_layout as rl
from recordings.journal import Column, fsync_dir
from recordings.locks import store_lock
from recordings.take_events import H5_NAME as H5_EVENTS
from teleop.robot import default_control_hz
from teleop.sim import ACTION_DIM, OBS_DIM

TIMING = ("wall_time", "frame_age_ms", "retarget_ms", "physics_ms", "score_ms", "tick_ms")
FLAGS = ("engaged", "held", "stale")
STATUSES = ("recorded", "accepted", "rejected", "validated_pass", "validated_fail", "exported")
H5_PATHS = {"actions": "actions", "states": "states", "obs": "obs/state", "instruction": "instruction_index",
            "subtasks": "subtask_latched", "progress": "progress", "timing": "timing",
            "frame": "operator_frames", "flags": "tick_flags", "cue_hidden": "cue_hidden"}
ADDED_LATER = ("cue_hidden",)     # per-tick datasets takes recorded before them lack (readers: optional)
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
    control_hz: float = field(default_factory=default_control_hz)     # takes carry the rate they ran at
    retarget_config: str = ""
    retarget_config_hash: str = ""
    operator_profile: str = ""
    software: dict = field(default_factory=dict)
    created: float = 0.0
    continued_from: str = ""        # "<take_id>@<tick>": the prefix this take continues (recordings.splice)
    cue: dict = field(default_factory=dict)     # memory tasks: {kind, what} of the cue (teleop.tasks.cues)

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
        return [Column("actions", "<f4", (ACTION_DIM,)), Column("states", "<f8", (len(self.initial_state),)),
                Column("obs", "<f4", (OBS_DIM,)), Column("instruction", "<i4", ()),
                Column("subtasks", "|u1", (len(self.subtask_names),)), Column("progress", "<f4", ()),
                Column("timing", "<f8", (len(TIMING),)), Column("frame", "<f8", (len(self.frame_columns),)),
                Column("flags", "|u1", (len(FLAGS),)), Column("cue_hidden", "|u1", ())]


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
    stamp: str = ""          # the file's identity when read (inode:mtime_ns:size); "" if it changed meanwhile

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


TMP_SUFFIX = ".tmp"              # <id>.h5.tmp: being finalised by the journal's owner
REVIEW_TMP_SUFFIX = ".review.tmp"  # <id>.h5.review.tmp: a review change, made under the store lock


def file_stamp(path: Path) -> str:
    """What identifies one version of a file: a rename-replace changes the inode, an edit the
    mtime or size. The index keeps it to know which rows are stale."""
    st = os.stat(path)
    return f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"


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
            if name not in arrays and name in ADDED_LATER:      # a journal written before the column existed
                continue
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
    _fsync_file(tmp)
    faults.checkpoint("tmp_written")
    os.replace(tmp, path)
    fsync_dir(path.parent)
    faults.checkpoint("h5_renamed")
    return path


def _robomimic_arrays(meta: TakeMeta, arrays: dict, events: list[dict], last, where) -> dict[str, np.ndarray]:
    length = int(arrays["actions"].shape[0])
    if length and last is None:
        last = rl.resimulate_last_obs(meta.model_xml, meta.model_fingerprint, arrays["states"][-1],
                                      arrays["actions"][-1], events, length, where)
    return {"rewards": rl.rewards_from_progress(arrays["progress"]), "dones": rl.dones_for(length),
            "next_obs": rl.next_obs(np.asarray(arrays["obs"], np.float32), last)}
def _fsync_file(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def read_take(path: Path) -> Take:
    """Load a take; a missing, truncated, corrupted or incomplete file raises :class:`TakeError`
    (whatever h5py raised: corrupt heaps surface as RuntimeError, bad attributes as OSError...)."""
    path = Path(path)
    for _ in range(3):       # a file replaced while being read is read again (the stamp says so)
        try:
            before = file_stamp(path)
        except OSError as exc:
            raise TakeError(path, f"unreadable take file ({type(exc).__name__}: {exc})") from exc
        take = _read(path)
        try:
            if file_stamp(path) == before:
                return Take(take.path, take.meta, take.arrays, take.review, take.interrupted, take.events, before)
        except OSError:
            pass
    return take


def _read(path: Path) -> Take:
    try:
        with h5py.File(path, "r") as h5:
            if DEMO not in h5:
                raise TakeError(path, f"group {DEMO!r} is missing: not a take file")
            demo = h5[DEMO]
            arrays = {}
            for name, h5path in H5_PATHS.items():
                if h5path not in demo and name in ADDED_LATER:
                    continue
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
    except Exception as exc:  # noqa: BLE001 - any failure to decode the file means it is unreadable
        raise TakeError(path, f"unreadable take file ({type(exc).__name__}: {exc})") from exc
    lengths = {name: arr.shape[0] if arr.ndim else None for name, arr in arrays.items()}
    if len(set(lengths.values())) != 1 or None in lengths.values():
        raise TakeError(path, f"per-tick datasets disagree on length: {lengths}")
    if arrays["states"].shape[1:] != (len(meta.initial_state),):
        raise TakeError(path, "dataset 'states' width differs from 'initial_state'")
    return Take(path, meta, arrays, review, interrupted, events)


def update_review(path: Path, review: Review) -> None:
    """Change a take's review status: a new copy with the new attribute replaces the file atomically
    (arrays untouched), under the store lock so concurrent changes never interleave."""
    path = Path(path)
    if review.status not in STATUSES:
        raise TakeError(path, f"status {review.status!r} is not one of {', '.join(STATUSES)}")
    stamped = Review(review.status, review.reason, review.report, review.updated or time.time())
    tmp = path.with_name(path.name + REVIEW_TMP_SUFFIX)
    with store_lock(path.parent):
        if not path.exists():
            raise TakeError(path, "take file is gone (deleted or quarantined by another process?)")
        try:
            shutil.copyfile(path, tmp)
            with h5py.File(tmp, "r+") as h5:
                h5[DEMO].attrs["review"] = json.dumps(asdict(stamped))
            _fsync_file(tmp)
            os.replace(tmp, path)
        except Exception as exc:  # noqa: BLE001 - the old file is untouched; say which one
            tmp.unlink(missing_ok=True)
            raise TakeError(path, f"could not update the review ({type(exc).__name__}: {exc})") from exc
        fsync_dir(path.parent)
