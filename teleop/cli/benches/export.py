"""Dataset export speed (six 480x360 streams per frame), each stage alone, and peak memory versus take length."""
from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

NAME = "export"
ENCODE_FRAMES = 64       # frames kept in memory for the encode-alone measurement (~230 MB)


def add_arguments(parser) -> None:
    parser.add_argument("--ticks", type=int, default=250, help="ticks per take (default 250 = 10 s)")
    parser.add_argument("--takes", type=int, default=1, help="takes in the timed export (default 1)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes for the timed export")
    parser.add_argument("--baseline", action="store_true",
                        help="also time the same export with the settings before issue 14's speed work "
                             "(MuJoCo's default render quality, 32-pixel depth coding trees) and report the speed-up")


# The export settings before issue 14's speed work, for --baseline: MuJoCo's default render
# quality and x265 ultrafast's own 32-pixel coding trees (one render pass per camera was already in).
BASELINE = {"samples": 4, "slices": 28, "stacks": 16, "depth_ctu": 32}


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
                              timing=np.zeros(6), frame=np.zeros(0), flags=np.zeros(3, np.uint8), cue_hidden=0)
            store.add(writer.finish())
            store.set_review(meta.take_id, "validated_pass")


def _export_child(job: tuple[str, list[int], int, bool, dict]) -> dict:
    """Runs in a fresh process so ru_maxrss measures this export alone."""
    folder, lengths, workers, stages, overrides = job
    from recordings.export import export_dataset
    from recordings.export_shard import ExportSettings
    settings = ExportSettings(**overrides)
    _make_store(Path(folder) / "store", lengths)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu0 = _cpu_seconds()
    summary = export_dataset(Path(folder) / "store", Path(folder) / "out", workers=workers, progress=False,
                             mark_exported=False, settings=settings)
    cpu = _cpu_seconds() - cpu0
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    out = {"frames": summary.frames, "seconds": summary.seconds, "streams": summary.streams, "ok": summary.ok,
           "peak_rss_mb": peak / 1024, "rss_before_mb": base / 1024, "render_devices": summary.render_devices,
           "cpu_seconds": cpu}
    if stages:                   # after the export, so the stages never compete with it
        out.update(_stages(Path(folder) / "store", settings))
    return out


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all threads) and its finished children."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                         resource.RUSAGE_CHILDREN)))


def _stages(store_root: Path, settings) -> dict:
    """Each stage of the pipeline alone on the first take: rendering (the render process, frames
    drained as fast as they come) and encoding (lerobot's writer fed frames held in memory)."""
    import time

    from recordings.export import build_features, select_takes
    from recordings.export_shard import encoders, frame_dict, quiet_libraries, _wait_for_encoders
    from recordings.pipeline import RenderPipeline
    from recordings.render import stream_specs
    from recordings.store import TakeStore
    from recordings.takefile import read_take
    from teleop.sim.scene import build_scene

    quiet_libraries()
    with TakeStore(store_root) as store:
        take = read_take(Path(select_takes(store, None)[0].path))
    specs = stream_specs(build_scene().layout.cameras, settings.width, settings.height)
    kept, t0 = [], None
    with RenderPipeline(str(take.path), specs, settings.width, settings.height, quality=settings.quality) as frames:
        for _, frame in frames:
            t0 = t0 or time.perf_counter()        # from the first frame: process start-up excluded
            if len(kept) < ENCODE_FRAMES:
                kept.append(frame)
    render_ms = (time.perf_counter() - t0) / max(take.length - 1, 1) * 1e3

    from lerobot.datasets.lerobot_dataset import LeRobotDataset
    rgb, depth = encoders(settings)
    root = store_root.parent / "encode-alone"
    ds = LeRobotDataset.create(settings.repo_id, fps=25, features=build_features(1, settings), root=root,
                               robot_type="bench", use_videos=True, rgb_encoder=rgb, depth_encoder=depth,
                               streaming_encoding=True, encoder_queue_maxsize=8, encoder_threads=1)
    t0 = time.perf_counter()
    for t, images in enumerate(kept):
        _wait_for_encoders(ds)
        ds.add_frame(frame_dict(take, t, images, 1))
    ds.save_episode()
    encode_ms = (time.perf_counter() - t0) / len(kept) * 1e3
    ds.finalize()
    return {"render_ms_per_frame": round(render_ms, 1), "encode_ms_per_frame": round(encode_ms, 1),
            "encode_frames": len(kept), **_one_vs_two_passes(take, settings.quality)}


def _one_vs_two_passes(take, quality, frames: int = 20) -> dict:
    """CPU time per frame (all threads, llvmpipe's included) of the six streams: one render pass
    per camera (ours) against mujoco.Renderer's two (colour, then depth), same states and
    multisampling, in turn."""
    import time

    import mujoco

    from recordings.render import StateRenderer
    from recordings.replay import scene_from_take
    from teleop.sim import Sim

    sim = Sim(scene_from_take(take))
    vis = sim.model.vis.quality                        # mujoco.Renderer reads these from the model
    vis.offsamples, vis.numslices, vis.numstacks = quality
    cameras = sim.scene.layout.cameras
    states = take.arrays["states"][:frames]

    def two(renderer):
        for cam in cameras:
            renderer.update_scene(sim.data, camera=cam)
            renderer.render()
            renderer.enable_depth_rendering()
            renderer.render()
            renderer.disable_depth_rendering()

    def timed(render) -> float:
        t0 = time.process_time()
        for state in states:
            sim.set_state(state)
            render()
        return (time.process_time() - t0) / len(states) * 1e3
    with StateRenderer(sim.model, cameras, quality=quality) as ours, mujoco.Renderer(sim.model, 360, 480) as theirs:
        timed(lambda: ours.render(sim.data))                 # warm both up
        timed(lambda: two(theirs))
        one_ms, two_ms = timed(lambda: ours.render(sim.data)), timed(lambda: two(theirs))
    return {"render_cpu_ms_one_pass": round(one_ms, 1), "render_cpu_ms_two_passes": round(two_ms, 1)}


def _run_child(folder: Path, lengths: list[int], workers: int, stages: bool = False,
               overrides: dict | None = None) -> dict:
    ctx = multiprocessing.get_context("spawn")     # executor workers may start their own workers
    with ProcessPoolExecutor(1, mp_context=ctx) as pool:
        return pool.submit(_export_child, (str(folder), lengths, workers, stages, overrides or {})).result()


def _codecs(settings) -> str:
    lossless = "lossless " if settings.depth_lossless else ""
    return (f"rgb {settings.rgb_codec} crf{settings.rgb_crf} {settings.rgb_preset} g{settings.gop}; depth "
            f"{settings.depth_codec} 12-bit {lossless}{settings.depth_preset} ctu{settings.depth_ctu}; "
            f"render msaa {settings.samples}, {settings.slices}x{settings.stacks} segments")


def run(args) -> dict:
    from recordings.export_shard import ExportSettings

    tmp = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        short = _run_child(tmp / "short", [max(args.ticks // 4, 1)], 1)
        main = _run_child(tmp / "main", [args.ticks] * args.takes, args.workers, stages=True)
        old = _run_child(tmp / "baseline", [args.ticks] * args.takes, args.workers, overrides=BASELINE) \
            if args.baseline else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fps = main["frames"] / main["seconds"]
    baseline = {} if old is None else {
        "baseline_frames_per_s": round(old["frames"] / old["seconds"], 2),
        "speedup_vs_baseline": round(fps / (old["frames"] / old["seconds"]), 2),
        # CPU time per frame, every process and thread: what a loaded machine distorts least
        "baseline_cpu_ms_per_frame": round(old["cpu_seconds"] / old["frames"] * 1e3, 1),
        "cpu_speedup_vs_baseline": round((old["cpu_seconds"] / old["frames"]) / (main["cpu_seconds"] / main["frames"]),
                                         2),
        "baseline_codecs": _codecs(ExportSettings(**BASELINE))}
    slower = max(main["render_ms_per_frame"], main["encode_ms_per_frame"])
    return {
        "frames": main["frames"],
        "frames_per_s": round(fps, 2),
        "render_ms_per_frame": main["render_ms_per_frame"],
        "encode_ms_per_frame": main["encode_ms_per_frame"],
        # the whole export (start-up, aggregation and statistics included) against its slower stage
        "pipeline_ratio": round(fps / (1e3 / slower), 3),
        "encode_frames": main["encode_frames"],
        "render_cpu_ms_one_pass": main["render_cpu_ms_one_pass"],
        "render_cpu_ms_two_passes": main["render_cpu_ms_two_passes"],
        "render_devices": main["render_devices"],
        # CPU time the whole export spent per frame (every thread and process): the frames/s this
        # machine could reach with every core busy is cores * 1000 / cpu_ms_per_frame.
        "cpu_ms_per_frame": round(main["cpu_seconds"] / main["frames"] * 1e3, 1),
        "cores": os.cpu_count(),
        "streams": main["streams"],
        "peak_rss_mb": round(main["peak_rss_mb"], 1),
        "peak_rss_mb_quarter_length": round(short["peak_rss_mb"], 1),
        "ticks_per_take": args.ticks,
        "takes": args.takes,
        "workers": args.workers,
        "seconds": main["seconds"],
        "resolution": "480x360",
        "codecs": _codecs(ExportSettings()),
        **baseline,
    }
