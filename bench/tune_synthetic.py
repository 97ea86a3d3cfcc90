"""Sweep grasp parameters of a synthetic-operator script through the REAL loop and rank them.

    .venv/bin/python bench/tune_synthetic.py TASK [--episodes 5] [--grid pitch=0.5,0.6 height=0.10,0.11]
        [--only OBJECT ...] [--workers 2]

Each variant overrides arguments of the ``grasp`` steps (``pitch=...``; or of another step kind:
``place.lower=...``; all of them, or those of ``--only`` objects) and runs the
episodes 0..N-1; prints one JSON line per variant (successes, progress per episode), best first.
Used to choose the per-task grasp data in teleop/control/synthetic/scripts/.
"""
from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp


def run_variant(job) -> dict:
    task, override, only, episodes = job
    from retarget import load_config
    from teleop.control.session import Session
    from teleop.control.synthetic.operator import synthetic_device
    from teleop.control.synthetic.script import SCRIPT_DIR, parse_script
    from teleop.core.yamlio import load_yaml
    from teleop.tasks import TaskRuntime

    raw = load_yaml(SCRIPT_DIR / f"{task}.yaml", "synthetic-operator script")
    for step in raw["steps"]:
        for key, value in override.items():
            kind, _, arg = key.rpartition(".")          # "place.lower" -> place steps; "pitch" -> grasp steps
            if step["do"] == (kind or "grasp") and (not only or step.get("object") in only):
                step[arg] = value
    script = parse_script(raw, "variant")
    progress = []
    for episode in range(episodes):
        rt = TaskRuntime(task)
        session = Session(rt, load_config().build(rt.sim.scene))
        session.reset(0, episode)
        device = synthetic_device(rt, session.retargeter, script=script, seed=episode)
        device.connect()
        session.attach(device)
        while not device.finished:          # the closed-loop operator ends when its last step has
            session.tick()
        progress.append(round(rt.result().progress))
    return {"override": override, "successes": sum(p == 100 for p in progress), "progress": progress}


def _value(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("task")
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--grid", nargs="*", default=["pitch=0.5,0.6,0.7", "height=0.10,0.11,0.12"])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    keys, values = zip(*((k, [_value(v) for v in vs.split(",")]) for k, vs in (g.split("=") for g in args.grid)))
    jobs = [(args.task, dict(zip(keys, combo)), args.only, args.episodes) for combo in itertools.product(*values)]
    with mp.get_context("spawn").Pool(args.workers) as pool:
        results = pool.map(run_variant, jobs)
    for r in sorted(results, key=lambda r: (-r["successes"], -sum(r["progress"]))):
        print(json.dumps(r))


if __name__ == "__main__":
    main()
