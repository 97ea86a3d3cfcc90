"""`teleop export --ray` on a real multi-node Ray cluster on this machine, full-size frames, with the
worker node killed while it builds a shard. Prints JSON: the export's figures and the audit.

Two `ray start` processes (a head and a worker node, each its own raylet; tests/ray_cluster.py),
`--takes` validated takes of the bare robot (smooth random walk, 480x360, six streams), the export
in its own process with `--ray <head>`; as soon as a shard's build folder belongs to a process of
the worker node, that node is killed (SIGKILL to its whole process tree). Then the audit: every
take exported exactly once, in order, actions bit-identical to the takes, lerobot's own
LeRobotDataset loads it, and nothing left in the work folder.

    PYTHONPATH=. .venv/bin/python bench/export_ray_cluster.py --takes 4 --ticks 100
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")
ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]          # the two-node cluster helper lives with the tests
KILL_TIMEOUT_S = 300.0          # how long to wait for a shard on the worker node before giving up


def _store(root: Path, takes: int, ticks: int) -> list:
    import numpy as np

    from recordings.store import TakeStore
    from takes_util import record_take
    from teleop.sim import Sim
    from teleop.sim.scene import build_scene

    sim = Sim(build_scene())
    with TakeStore(root) as store:
        for i in range(takes):
            path, _ = record_take(store, sim, ticks=ticks, name=f"ray-bench-{i}", task_id=f"task{i % 2}")
            store.set_review(store.add(path).meta.take_id, "validated_pass")
        rows = sorted(store.rows(status="validated_pass"), key=lambda r: (r.task_id, r.created, r.take_id))
        loaded = [store.load(r.take_id) for r in rows]
    return [(t.meta.take_id, np.asarray(t.arrays["actions"])) for t in loaded]


def _kill_worker_node_during_a_shard(cluster, shards: Path, export: subprocess.Popen) -> str | None:
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while time.monotonic() < deadline and export.poll() is None:
        node = cluster.worker_node_pids()
        for tmp in shards.glob("*.tmp-*"):
            if int(tmp.name.split(".tmp-")[1].split("-")[0]) in node:
                cluster.kill_worker_node()
                return tmp.name.split(".tmp-")[0]
        time.sleep(0.1)
    return None


def _audit(out: Path, takes: list) -> dict:
    import numpy as np
    from lerobot.datasets.lerobot_dataset import LeRobotDataset

    episodes = [json.loads(line) for line in (out / "meta" / "bidex_episodes.jsonl").read_text().splitlines()]
    exported = [e["take_id"] for e in episodes]
    ds = LeRobotDataset("bidex/teleop", root=out)
    actions = np.stack([np.asarray(a) for a in ds.hf_dataset["action"]])
    return {"episodes": ds.num_episodes, "frames_in_dataset": len(ds),
            "takes_lost": len({t for t, _ in takes} - set(exported)),
            "takes_duplicated": len(exported) - len(set(exported)),
            "in_take_order": exported == [t for t, _ in takes],
            "actions_bit_identical": bool(np.array_equal(actions, np.concatenate([a for _, a in takes]))),
            "work_folder_left": (out.parent / f"{out.name}.partial").exists()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--takes", type=int, default=4)
    ap.add_argument("--ticks", type=int, default=100)
    args = ap.parse_args()
    from ray_cluster import TwoNodeCluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    try:
        takes = _store(tmp / "store", args.takes, args.ticks)
        out, shards = tmp / "ds", tmp / "ds.partial" / "shards"
        t0 = time.monotonic()
        cluster = TwoNodeCluster()
        try:
            cluster.wait_for_nodes()
            cluster_s = time.monotonic() - t0
            env = {**os.environ, **cluster.driver_env, "PYTHONPATH": str(ROOT)}
            t1 = time.monotonic()
            export = subprocess.Popen([sys.executable, "-m", "teleop", "export", "--store", str(tmp / "store"),
                                       "--out", str(out), "--ray", cluster.address, "--json"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                      start_new_session=True)
            killed = _kill_worker_node_during_a_shard(cluster, shards, export)
            stdout, stderr = export.communicate(timeout=1800)
            export_s = time.monotonic() - t1
        finally:
            cluster.stop()
        if export.returncode != 0:
            print(stderr[-3000:], file=sys.stderr)
            return 1
        summary = json.loads(stdout.strip().splitlines()[-1])
        frames = sum(len(a) for _, a in takes)
        print(json.dumps({"nodes": 2, "takes": args.takes, "ticks_per_take": args.ticks, "frames": frames,
                          "killed_worker_node_during": killed, "cluster_start_s": round(cluster_s, 1),
                          "export_s": round(export_s, 1), "frames_per_s": round(frames / export_s, 2),
                          "rendered": summary["rendered"], "resumed": summary["resumed"],
                          **_audit(out, takes), "load_average_1min": round(os.getloadavg()[0], 2)}))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
