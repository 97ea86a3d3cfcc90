"""Dataset export speed (six 480x360 streams per frame) and peak memory versus take length."""
from __future__ import annotations

import multiprocessing
import resource
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

NAME = "export"


def add_arguments(parser) -> None:
    parser.add_argument("--ticks", type=int, default=250, help="ticks per take (default 250 = 10 s)")
    parser.add_argument("--takes", type=int, default=1, help="takes in the timed export (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes for the timed export")


def _make_store(root: Path, lengths: list[int]) -> None:
    """Real takes of the bare robot following a smooth random walk, marked validated_pass."""
    from recordings.store import TakeStore
    from recordings.take import meta_for_episode
    from teleop.sim.scene import build_scene
    from teleop.core.seeding import stable_rng
    from teleop.sim import Sim

    sim = Sim(build_scene())
    with TakeStore(root) as store:
        for i, ticks in enumerate(lengths):
            sim.reset(i)
            meta = meta_for_episode(sim, "bench_task", i, i, "bench", ("Move around.",), ("moved",))
            walk = np.cumsum(stable_rng("bench-export", i).normal(0, 0.01, (ticks, sim.ctrl_low.size)), axis=0)
            actions = np.clip(sim.joint_positions + walk, sim.ctrl_low, sim.ctrl_high).astype(np.float32)
            writer = store.writer(meta)
            writer.open()
            for t, action in enumerate(actions):
                state, obs = sim.get_state(), sim.observation()
                sim.step(action)
                writer.append(actions=action, states=state, obs=obs, instruction=0,
                              subtasks=np.array([t > ticks // 2], np.uint8), progress=100.0 * (t > ticks // 2),
                              timing=np.zeros(6), frame=np.zeros(0), flags=np.zeros(3, np.uint8))
            store.add(writer.finish())
            store.set_review(meta.take_id, "validated_pass")


def _export_child(job: tuple[str, list[int], int]) -> dict:
    """Runs in a fresh process so ru_maxrss measures this export alone."""
    folder, lengths, workers = job
    from recordings.export import export_dataset
    _make_store(Path(folder) / "store", lengths)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    summary = export_dataset(Path(folder) / "store", Path(folder) / "out", workers=workers, progress=False,
                             mark_exported=False)
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {"frames": summary.frames, "seconds": summary.seconds, "streams": summary.streams, "ok": summary.ok,
            "peak_rss_mb": peak / 1024, "rss_before_mb": base / 1024}


def _run_child(folder: Path, lengths: list[int], workers: int) -> dict:
    ctx = multiprocessing.get_context("spawn")     # executor workers may start their own workers
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(_export_child, (str(folder), lengths, workers)).result()


def run(args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        short = _run_child(tmp / "short", [max(args.ticks // 4, 1)], 1)
        main = _run_child(tmp / "main", [args.ticks] * args.takes, args.workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "frames": main["frames"],
        "frames_per_s": round(main["frames"] / main["seconds"], 2),
        "streams": main["streams"],
        "peak_rss_mb": round(main["peak_rss_mb"], 1),
        "peak_rss_mb_quarter_length": round(short["peak_rss_mb"], 1),
        "ticks_per_take": args.ticks,
        "takes": args.takes,
        "workers": args.workers,
        "seconds": main["seconds"],
        "resolution": "480x360",
        "codecs": "rgb h264 crf23 veryfast g2; depth hevc 12-bit lossless ultrafast",
    }
