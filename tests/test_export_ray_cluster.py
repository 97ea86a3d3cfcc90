"""``teleop export --ray`` against a real multi-node Ray cluster on one machine (two ``ray start``
processes): a worker node killed while it builds a shard loses nothing and duplicates nothing."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from recordings.store import TakeStore
from takes_util import record_take
from teleop.sim import Sim

pytest.importorskip("ray", reason="ray is not installed (optional extra 'cluster')")
LeRobotDataset = pytest.importorskip("lerobot.datasets.lerobot_dataset").LeRobotDataset
TAKES = 4


@pytest.mark.timeout(300)
def test_a_worker_node_killed_mid_export_loses_and_duplicates_nothing(scene, tmp_path):
    from ray_cluster import ROOT, TwoNodeCluster
    store_root = tmp_path / "store"
    with TakeStore(store_root) as store:
        for i in range(TAKES):
            path, _ = record_take(store, Sim(scene), ticks=24, name=f"ray{i}", task_id=f"task{i % 2}")
            store.set_review(store.add(path).meta.take_id, "validated_pass")
        rows = sorted(store.rows(status="validated_pass"), key=lambda r: (r.task_id, r.created, r.take_id))
        takes = [store.load(r.take_id) for r in rows]
    out, shards = tmp_path / "ds", tmp_path / "ds.partial" / "shards"
    t0 = time.monotonic()
    cluster = TwoNodeCluster()
    try:
        cluster.wait_for_nodes()
        print(f"cluster of 2 nodes up after {time.monotonic() - t0:.1f} s")
        env = {**os.environ, **cluster.driver_env, "PYTHONPATH": str(ROOT)}
        export = subprocess.Popen([sys.executable, "-m", "teleop", "export", "--store", str(store_root), "--out",
                                   str(out), "--ray", cluster.address, "--json"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
        killed = _kill_the_worker_node_while_it_builds_a_shard(cluster, shards, export)
        stdout, stderr = export.communicate(timeout=200)
        print(f"export finished {time.monotonic() - t0:.1f} s after the cluster started: {stdout.strip()[-400:]}")
    finally:
        cluster.stop()
    assert killed, "no shard was in progress on the worker node"
    assert export.returncode == 0, stderr[-3000:]
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["ok"] and summary["episodes"] == TAKES and summary["rendered"] + summary["resumed"] == TAKES
    episodes = [json.loads(line) for line in (out / "meta" / "bidex_episodes.jsonl").read_text().splitlines()]
    assert [e["take_id"] for e in episodes] == [t.meta.take_id for t in takes]       # each once, in order
    ds = LeRobotDataset("bidex/teleop", root=out)
    assert ds.num_episodes == TAKES and len(ds) == sum(t.length for t in takes)
    actions = np.stack([np.asarray(a) for a in ds.hf_dataset["action"]])
    np.testing.assert_array_equal(actions, np.concatenate([t.arrays["actions"] for t in takes]))
    assert not (tmp_path / "ds.partial").exists()


def _kill_the_worker_node_while_it_builds_a_shard(cluster, shards, export, timeout: float = 150.0) -> bool:
    """Wait until a shard's build folder belongs to a process of the worker node, then kill the node."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and export.poll() is None:
        node = cluster.worker_node_pids()
        for tmp in shards.glob("*.tmp-*"):
            pid = int(tmp.name.split(".tmp-")[1].split("-")[0])
            if pid in node:
                cluster.kill_worker_node()
                print(f"killed the worker node ({len(node)} processes) while it built {tmp.name}; "
                      f"finished shards then: {len(list(shards.glob('*/bidex_shard.json')))}")
                return True
        time.sleep(0.1)
    return False
