"""Digest every synthetic-operator script's open-loop plan, to show a planner change leaves them alone.

    .venv/bin/python bench/plan_digest.py [TASK ...] [--episodes 0-4,20-24] > before.json
    (change the planner)
    .venv/bin/python bench/plan_digest.py ... > after.json
    .venv/bin/python bench/plan_digest.py --compare before.json after.json

For each scripted task and episode: the task's deterministic reset, then the open-loop plan of its
script from that scene (the plan the closed-loop operator starts from; its steps are planned by the
same handlers), hashed over every key's time, palm pose, grip and grasp name. Prints JSON
``{task: {episode: sha256[:16]}}``; ``--compare`` prints the tasks whose digests differ, and those only one side has.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys


def _episodes(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def digest(task: str, episodes: list[int]) -> dict[str, str]:
    from teleop.control.synthetic.human import HandShapes, load_grasps
    from teleop.control.synthetic.operator import open_loop_planner
    from teleop.control.synthetic.script import load_script
    from teleop.tasks import TaskRuntime

    rt = TaskRuntime(task)
    script = load_script(task)
    shapes = HandShapes(rt.sim.scene, load_grasps(rt.sim.scene))
    out = {}
    for episode in episodes:
        rt.reset(0, episode)
        h = hashlib.sha256()
        for side, timeline in sorted(open_loop_planner(rt, shapes).plan(script).items()):
            h.update(side.encode())
            for k in timeline.keys:
                h.update(repr((k.t, k.grip, k.grasp)).encode())
                h.update(k.pos.tobytes() + k.rot.tobytes())
        out[str(episode)] = h.hexdigest()[:16]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="*", help="default: every scripted task")
    ap.add_argument("--episodes", default="0-4,20-24")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        before, after = (json.load(open(p)) for p in args.compare)
        both = set(before) & set(after)
        print(json.dumps({"compared": len(both), "changed": sorted(t for t in both if before[t] != after[t]),
                          "added": sorted(set(after) - both), "removed": sorted(set(before) - both)}, indent=1))
        sys.exit(0)
    from teleop.control.synthetic.script import scripted_tasks

    tasks = args.tasks or scripted_tasks()
    print(json.dumps({t: digest(t, _episodes(args.episodes)) for t in tasks}, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
