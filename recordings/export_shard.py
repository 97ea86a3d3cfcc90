"""One take -> one single-episode LeRobot dataset ("shard"), rendered from a replay of its actions.

Runs inside a batch worker (local process or Ray task), so everything it needs travels in a
picklable :class:`ShardJob`. Before anything is encoded the take must pass the static checks and,
when it was validated, still have the digest validation saw; the images and observations then come
from replaying its actions, each replayed state checked against the recorded one
(:func:`recordings.render.replay_frames`). A shard is built in ``<dir>.tmp`` and renamed into
place when complete; it is reused by a later run only if its manifest (its key: settings, features
and the take's digest; every file with its size) still matches, which makes exports resumable.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from recordings.build import CROSS_BUILD_TOLERANCE, same_build
from recordings.checks import array_problems, take_digest
from recordings.errors import TakeError
from recordings.render import DEPTH_MAX_M, HEIGHT, WIDTH, replay_frames
from recordings.replay import scene_from_take
from recordings.takefile import Take, read_take
from teleop.core.errors import TeleopError
from teleop.sim import Sim

SHARD_INFO = "bidex_shard.json"
SHARD_OBS = "bidex_replayed_obs.npy"      # the replay's observations, for the export's statistics
ENCODER_QUEUE = 8           # frames buffered per stream; rendering, not encoding, is the slow side


@dataclass(frozen=True)
class ExportSettings:
    """Everything that changes the bytes of an export (part of the resume plan)."""

    width: int = WIDTH
    height: int = HEIGHT
    rgb_codec: str = "h264"          # vs lerobot's default AV1: a bit faster to encode, ~28 % to decode
    rgb_crf: int = 23
    rgb_preset: str = "veryfast"
    gop: int = 2                     # keyframe every 2 frames: cheap random access for training
    depth_codec: str = "hevc"        # lerobot's 12-bit depth path (gray12le, log quantisation)
    depth_lossless: bool = True
    depth_preset: str = "ultrafast"  # x265: 2.4x faster than its default, lossless either way
    depth_max_m: float = DEPTH_MAX_M
    repo_id: str = "bidex/teleop"


@dataclass(frozen=True)
class ShardJob:
    take_path: str
    shard_dir: str
    features: dict
    subtask_width: int
    fps: int
    settings: ExportSettings
    validated_digest: str = ""       # the digest in the take's validation report ("" if none)


@dataclass(frozen=True)
class ShardResult:
    take_id: str
    frames: int
    skipped: bool                    # already built by an earlier (interrupted) run
    seconds: float


def encoders(settings: ExportSettings):
    from lerobot.configs.video import DepthEncoderConfig, RGBEncoderConfig
    rgb = RGBEncoderConfig(vcodec=settings.rgb_codec, crf=settings.rgb_crf, preset=settings.rgb_preset,
                           g=settings.gop)
    x265 = ("lossless=1:" if settings.depth_lossless else "") + "log-level=error"
    depth = DepthEncoderConfig(vcodec=settings.depth_codec, g=settings.gop, preset=settings.depth_preset,
                               extra_options={"x265-params": x265}, depth_max=settings.depth_max_m)
    return rgb, depth


def frame_dict(take: Take, t: int, images: dict[str, np.ndarray], subtask_width: int,
               obs: np.ndarray | None = None) -> dict:
    """The LeRobot frame for tick ``t``: what was seen and known BEFORE action ``t`` (``obs``: the
    replay's observation; export always passes it)."""
    a = take.arrays
    latched = np.zeros(subtask_width, np.float32)
    progress = 0.0
    if t > 0:    # progress/latched[t] are recorded after action t; frame t shows the state before it
        latched[:a["subtasks"].shape[1]] = a["subtasks"][t - 1]
        progress = float(a["progress"][t - 1])
    obs = a["obs"][t] if obs is None else obs
    return {"action": a["actions"][t].astype(np.float32), "observation.state": np.asarray(obs, np.float32),
            "subtask.progress": np.array([progress], np.float32), "subtask.latched": latched, **images,
            "task": take.meta.instructions[int(a["instruction"][t])]}


def quiet_libraries() -> None:
    """Silence encoder statistics and per-step progress bars (libx264, HF datasets, tqdm):
    the export prints its own progress and summary."""
    import av.logging
    import datasets

    av.logging.set_libav_level(av.logging.ERROR)
    datasets.disable_progress_bars()
    os.environ["TQDM_DISABLE"] = "1"


def shard_key(job: ShardJob, digest: str) -> str:
    """What a shard's bytes depend on: a finished shard is reused only under the same key."""
    text = json.dumps([job.features, job.subtask_width, job.fps, asdict(job.settings), digest], sort_keys=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _manifest(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != SHARD_INFO}


def finished_shard(shard_dir: Path, key: str) -> dict | None:
    """The shard's info if it is complete for ``key`` (every file there with its size), else None."""
    try:
        info = json.loads((Path(shard_dir) / SHARD_INFO).read_text())
        files = info["files"]
        if info.get("key") != key or not files:
            return None
        for name, size in files.items():
            if (Path(shard_dir) / name).stat().st_size != size:
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return info


def checked_take(job: ShardJob) -> Take:
    """The take, if it may be exported: readable, every array sound, unchanged since validation."""
    take = read_take(Path(job.take_path))
    problems = array_problems(take)
    if problems:
        raise TakeError(take.path, "; ".join(problems))
    if job.validated_digest and take_digest(take) != job.validated_digest:
        raise TakeError(take.path, "the take changed since it was validated (its digest differs); "
                                   "validate it again before exporting")
    return take


def write_shard(job: ShardJob) -> ShardResult:
    """Replay, render and encode one take into ``job.shard_dir`` (skipped if already finished)."""
    quiet_libraries()
    t0 = time.perf_counter()
    final = Path(job.shard_dir)
    take = checked_take(job)
    key = shard_key(job, take_digest(take))
    info = finished_shard(final, key)
    if info is not None:
        return ShardResult(info["take_id"], info["frames"], True, time.perf_counter() - t0)
    shutil.rmtree(final, ignore_errors=True)      # stale (other settings, another take version) or torn
    tmp = final.with_name(final.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)        # left by a killed run: rebuild from scratch
    obs = _encode(take, tmp, job)
    np.save(tmp / SHARD_OBS, obs)
    info = {"take_id": take.meta.take_id, "frames": take.length, "key": key, "files": _manifest(tmp)}
    (tmp / SHARD_INFO).write_text(json.dumps(info))
    os.replace(tmp, final)
    return ShardResult(take.meta.take_id, take.length, False, time.perf_counter() - t0)


def _encode(take: Take, root: Path, job: ShardJob) -> np.ndarray:
    """Encode the replay; returns its observations (T, 130)."""
    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    rgb, depth = encoders(job.settings)
    sim = Sim(scene_from_take(take))
    ds = LeRobotDataset.create(job.settings.repo_id, fps=job.fps, features=job.features, root=root,
                               robot_type=take.meta.embodiment, use_videos=True, rgb_encoder=rgb,
                               depth_encoder=depth, streaming_encoding=True,
                               encoder_queue_maxsize=ENCODER_QUEUE, encoder_threads=1)
    observations = []
    try:
        tolerance = 0.0 if same_build(take.meta.software) else CROSS_BUILD_TOLERANCE
        frames = replay_frames(sim, take, sim.scene.layout.cameras, job.settings.width, job.settings.height,
                               tolerance)
        for t, (obs, images) in enumerate(frames):
            _wait_for_encoders(ds)
            ds.add_frame(frame_dict(take, t, images, job.subtask_width, obs))
            observations.append(obs)
        ds.save_episode()
        dropped = _dropped_frames(ds)
        if dropped:
            raise TakeError(take.path, f"video encoder dropped frames {dropped}; the shard is discarded")
    finally:
        ds.finalize()
    return np.asarray(observations, np.float32)


# lerobot 0.6 has no public API for its streaming encoder's queues and drop counters; these are
# the private names export relies on. ``streaming_encoder_internals`` checks them and fails loudly
# (tests pin them), so a lerobot upgrade that renames one can never silently switch off
# back-pressure or dropped-frame detection.
ENCODER_ATTRS = ("writer", "_streaming_encoder", "_frame_queues", "_dropped_frames")


def streaming_encoder_internals(ds) -> tuple[dict, dict]:
    """(frame queues, dropped-frame counts) of a dataset's streaming encoder, by camera key."""
    writer = getattr(ds, ENCODER_ATTRS[0], None)
    encoder = getattr(writer, ENCODER_ATTRS[1], None)
    queues, dropped = getattr(encoder, ENCODER_ATTRS[2], None), getattr(encoder, ENCODER_ATTRS[3], None)
    if not isinstance(queues, dict) or not isinstance(dropped, dict):
        import lerobot
        raise TeleopError(f"lerobot {getattr(lerobot, '__version__', '?')}: the streaming encoder no longer has "
                          f"{'.'.join(ENCODER_ATTRS)}; export needs them for back-pressure and dropped-frame checks")
    return queues, dropped


def _wait_for_encoders(ds) -> None:
    """Back-pressure: lerobot's streaming encoder DROPS a frame whose queue stays full for 0.1 s
    (right for live cameras, wrong for an offline export), so wait until every queue has room."""
    queues, _ = streaming_encoder_internals(ds)
    while any(q.full() for q in queues.values()):
        time.sleep(0.005)


def _dropped_frames(ds) -> dict[str, int]:
    _, counts = streaming_encoder_internals(ds)
    return {k: v for k, v in counts.items() if v}
