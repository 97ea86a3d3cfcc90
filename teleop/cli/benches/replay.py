"""Validation throughput: replaying a take with scoring, as a ratio to raw physics on the same take."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from recordings.store import TakeStore
from recordings.build import same_build
from recordings.replay_check import replay_compare
from recordings.takefile import read_take
from recordings.validate import task_runtime
from teleop.control.episode import Episode, EpisodeOptions

NAME = "replay"


def add_arguments(parser) -> None:
    parser.add_argument("--task", default="put_peach_in_fruit_bowl", help="task to record and replay")
    parser.add_argument("--take", help="an existing take file instead of recording one")
    parser.add_argument("--repeats", type=int, default=3, help="best of N timings (noisy machines)")


def _record(task: str, folder: Path) -> Path:
    with TakeStore(folder) as store:
        _, take = Episode(EpisodeOptions(task=task, device="synthetic")).run(store, operator="bench")
    return take.path


def _time(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run(args) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        take = read_take(Path(args.take) if args.take else _record(args.task, Path(tmp)))
    rt = task_runtime(take.meta.task_id, horizon=take.length)
    sim, actions = rt.sim, take.arrays["actions"].astype(float)

    def physics():
        sim.set_state(take.initial_state)
        for a in actions:
            sim.step(a)

    def replay():
        rt.restore(take.initial_state)
        replay_compare(rt, take, same_build(take.meta.software))

    steps = len(actions) * sim.substeps
    physics_rate = steps / _time(physics, args.repeats)
    replay_rate = steps / _time(replay, args.repeats)
    return {"task": take.meta.task_id, "ticks": len(actions), "physics_steps_per_s": round(physics_rate, 1),
            "replay_steps_per_s": round(replay_rate, 1),
            "replay_vs_physics_ratio": round(replay_rate / physics_rate, 3)}
