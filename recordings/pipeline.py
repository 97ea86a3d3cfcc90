"""Rendering and encoding of one take pipelined across two processes, with bounded memory.

The shard process (which owns lerobot's dataset writer and its encoder threads) starts a render
process; frames travel through a ring of ``slots`` preallocated frames in shared memory:

    render process:  replay to tick t, checked -> take a free slot -> render every stream into it
                     -> "ready t" (with the replayed observation)
    shard process:   wait for "ready t" -> copy the frame out -> free the slot -> encode

so rendering one frame overlaps encoding earlier ones on another core, nothing is pickled per
frame, and memory is ``slots`` frames plus the encoder's own bounded queues, whatever the length.
The render process only imports MuJoCo (no torch), chooses its GL device first
(:mod:`recordings.gl_device`), and renders the take's CHECKED replay of its actions
(:func:`recordings.render.checked_replay`, scene events applied): a take that changed since
``digest`` was taken, or whose replay diverges from the recorded states, fails with its reason.
"""
from __future__ import annotations

import multiprocessing as mp
import queue
import time
import traceback
from dataclasses import dataclass
from multiprocessing import shared_memory
from collections.abc import Iterator

import numpy as np

from recordings.errors import TakeError
from recordings.render import DATASET_QUALITY, RenderQuality

SLOTS = 4               # frames in flight between the processes (6 streams at 480x360: 3.6 MB each)
POLL_S = 0.5            # how often a waiting side checks that the other is still alive


@dataclass(frozen=True)
class StreamLayout:
    key: str
    shape: tuple[int, ...]
    dtype: str
    offset: int


def layout(specs) -> tuple[list[StreamLayout], int]:
    """Byte layout of one frame slot (64-byte aligned streams) and the slot size."""
    out, offset = [], 0
    for spec in specs:
        out.append(StreamLayout(spec.key, tuple(spec.shape), np.dtype(spec.dtype).str, offset))
        nbytes = int(np.prod(spec.shape)) * np.dtype(spec.dtype).itemsize
        offset += (nbytes + 63) // 64 * 64
    return out, offset


def slot_views(buf, streams: list[StreamLayout], slot_size: int, slot: int) -> dict[str, np.ndarray]:
    base = slot * slot_size
    return {s.key: np.ndarray(s.shape, s.dtype, buffer=buf, offset=base + s.offset) for s in streams}


@dataclass(frozen=True)
class RenderJob:
    take_path: str
    width: int
    height: int
    shm_name: str
    streams: list[StreamLayout]
    slot_size: int
    worker: int = 0             # spreads render processes over GPUs when there are several
    digest: str = ""            # the take's digest as the shard process checked it ("" = not checked)
    quality: RenderQuality = DATASET_QUALITY


def render_main(job: RenderJob, free: mp.Queue, ready: mp.Queue) -> None:
    """The render process: every frame of the take into the ring, in order (runs in a child)."""
    try:
        from recordings.gl_device import configure_rendering
        device = configure_rendering(job.worker)           # before any GL context exists
        ready.put(("device", device.kind, device.description))
        _render_take(job, free, ready)
    except TakeError as exc:       # the take's own fault (diverged, changed): its reason, no traceback
        ready.put(("take_error", exc.detail))
    except BaseException:  # noqa: BLE001 - report everything to the shard process, then stop
        ready.put(("error", traceback.format_exc()))


def _render_take(job: RenderJob, free: mp.Queue, ready: mp.Queue) -> None:
    from recordings.build import CROSS_BUILD_TOLERANCE, same_build
    from recordings.checks import take_digest
    from recordings.render import StateRenderer, checked_replay
    from recordings.replay import scene_from_take
    from recordings.takefile import read_take
    from teleop.sim import Sim

    take = read_take(job.take_path)
    if job.digest and take_digest(take) != job.digest:
        raise TakeError(take.path, "the take changed while it was being exported; export it again")
    sim = Sim(scene_from_take(take))
    tolerance = 0.0 if same_build(take.meta.software) else CROSS_BUILD_TOLERANCE
    shm = shared_memory.SharedMemory(name=job.shm_name)
    try:
        with StateRenderer(sim.model, sim.scene.layout.cameras, job.width, job.height,
                           job.quality) as renderer:
            for t, obs in checked_replay(sim, take, tolerance):
                slot = _next_slot(free)
                if slot is None:                           # the shard process gave up (or died)
                    return
                t0 = time.perf_counter()
                renderer.render_into(sim.data, slot_views(shm.buf, job.streams, job.slot_size, slot))
                ready.put(("frame", t, slot, time.perf_counter() - t0, obs))
        ready.put(("done",))
    finally:
        shm.close()


def _next_slot(free: mp.Queue) -> int | None:
    """A free slot, or None once the shard process stopped or vanished (a SIGKILLed parent
    cannot stop its daemon children: without this check they would wait forever)."""
    parent = mp.parent_process()
    while True:
        try:
            return free.get(timeout=POLL_S)
        except queue.Empty:
            if parent is not None and not parent.is_alive():
                return None


class RenderPipeline:
    """Iterates a take's rendered frames, produced by a render process (context manager)."""

    def __init__(self, take_path: str, specs, width: int, height: int, slots: int = SLOTS, worker: int = 0,
                 digest: str = "", quality: RenderQuality = DATASET_QUALITY):
        self.streams, self.slot_size = layout(specs)
        self.slots = slots
        self._shm = shared_memory.SharedMemory(create=True, size=self.slot_size * slots)
        ctx = mp.get_context("spawn")              # a clean process: its own GL state, no torch
        self._free, self._ready = ctx.Queue(), ctx.Queue()
        for slot in range(slots):
            self._free.put(slot)
        job = RenderJob(take_path, width, height, self._shm.name, self.streams, self.slot_size, worker,
                        digest, quality)
        self._proc = ctx.Process(target=render_main, args=(job, self._free, self._ready), daemon=True,
                                 name="export-render")
        self._proc.start()
        self.take_path = take_path
        self.device = ("unknown", "")
        self.render_seconds = 0.0           # summed time the render process spent per frame
        self.frames = 0
        self.observations: list[np.ndarray] = []     # the replay's observation before each action so far

    def _message(self):
        while True:
            try:
                return self._ready.get(timeout=POLL_S)
            except queue.Empty:
                if not self._proc.is_alive():
                    raise TakeError(self.take_path,
                                    f"the render process died (exit code {self._proc.exitcode})") from None

    def __iter__(self) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        """(t, frame) in order; each frame is a private copy (the slot is reused at once); the
        observation of tick ``t`` is ``observations[t]``."""
        while True:
            msg = self._message()
            if msg[0] == "device":
                self.device = (msg[1], msg[2])
            elif msg[0] == "error":
                raise TakeError(self.take_path, f"rendering failed in the render process:\n{msg[1]}")
            elif msg[0] == "take_error":
                raise TakeError(self.take_path, msg[1])
            elif msg[0] == "done":
                return
            else:
                _, t, slot, seconds, obs = msg
                views = slot_views(self._shm.buf, self.streams, self.slot_size, slot)
                frame = {k: v.copy() for k, v in views.items()}
                del views                                  # no view may outlive the mapping
                self._free.put(slot)
                self.render_seconds += seconds
                self.frames += 1
                self.observations.append(obs)
                yield t, frame

    def close(self) -> None:
        if self._proc.is_alive():
            self._free.put(None)
            self._proc.join(5)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        for q in (self._free, self._ready):
            q.close()
            q.join_thread()
        self._shm.close()
        self._shm.unlink()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
