"""A real two-node Ray cluster on this machine for tests: ``ray start --head`` and a second
``ray start --address`` as separate process groups, on loopback addresses only, every port chosen free,
one CPU each, bounded object stores. Stopped by killing exactly the processes it started (never
``ray stop``, which would stop every Ray on the machine). Nodes and addresses are loopback ones
(Ray itself binds its ports on every interface).

The cluster has its own authentication token: the driver process needs ``driver_env`` set before
``ray.init(address=cluster.address, _node_ip_address=HEAD_IP)``."""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
ROOT = Path(__file__).resolve().parents[1]
# Ray rewrites "127.0.0.1"/"localhost" to the host's outward IP (unreachable here): the nodes use
# other loopback addresses, which it keeps. Two addresses also make the nodes look like two hosts.
HEAD_IP, WORKER_IP = "127.0.0.2", "127.0.0.3"


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("0.0.0.0", 0))          # Ray binds every interface
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def free_range(size: int) -> int:
    """The first port of ``size`` consecutive free ports (for Ray's worker port range)."""
    for base in range(23000, 60000, 97):
        try:
            socks = []
            for p in range(base, base + size):
                s = socket.socket()
                s.bind(("0.0.0.0", p))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range")


def descendants(pid: int) -> set[int]:
    """``pid`` and every live process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(children.get(p, ()))
    return out


def kill_tree(proc: subprocess.Popen) -> None:
    pids = descendants(proc.pid)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(10)


class TwoNodeCluster:
    def __init__(self, env_extra: dict[str, str] | None = None):
        self.tmp = tempfile.mkdtemp(prefix="rayt", dir="/tmp")      # unix socket paths must stay short
        # Our own token: no other Ray on this machine (nor its ~/.ray/auth_token) can join or be joined.
        self.driver_env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
        self.gcs_port = free_ports(1)[0]
        self.address = f"{HEAD_IP}:{self.gcs_port}"
        path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        self.env = {**os.environ, "PYTHONPATH": path, "MUJOCO_GL": "egl", "PYOPENGL_PLATFORM": "egl",
                    **self.driver_env,
                    "RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "3",
                    "RAY_health_check_initial_delay_ms": "500", "RAY_USAGE_STATS_ENABLED": "0",
                    **(env_extra or {})}
        self.worker: subprocess.Popen | None = None
        self.head = self._start(["--head", f"--port={self.gcs_port}", f"--temp-dir={self.tmp}",
                                 "--include-dashboard=false"])
        try:
            self._wait_for_head()
            self.worker = self._start([f"--address={self.address}"], ip=WORKER_IP)
        except BaseException:
            self.stop()
            raise

    def _start(self, args: list[str], env: dict[str, str] | None = None, ip: str = HEAD_IP) -> subprocess.Popen:
        nm, om, agent, grpc, metrics, runtime = free_ports(6)
        base = free_range(24)
        cmd = [RAY, "start", "--block", *args, "--num-cpus=1", "--num-gpus=0", f"--node-ip-address={ip}",
               "--object-store-memory=80000000", f"--node-manager-port={nm}", f"--object-manager-port={om}",
               f"--min-worker-port={base}", f"--max-worker-port={base + 23}", f"--dashboard-agent-listen-port={agent}",
               f"--dashboard-agent-grpc-port={grpc}", f"--metrics-export-port={metrics}",
               f"--runtime-env-agent-port={runtime}", "--disable-usage-stats"]
        if "--head" in args:
            cmd.append("--include-log-monitor=false")
        log = open(Path(self.tmp) / ("head.log" if "--head" in args else "worker.log"), "w")
        proc = subprocess.Popen(cmd, env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        log.close()
        return proc

    def _wait_for_head(self, timeout: float = 60.0) -> None:
        """The worker node may only start once the head's GCS answers."""
        log = Path(self.tmp) / "head.log"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "Ray runtime started" in log.read_text():
                return
            if self.head.poll() is not None:
                raise RuntimeError(f"ray start --head exited {self.head.returncode}\n{self.logs()}")
            time.sleep(0.2)
        raise TimeoutError(f"the head node did not start\n{self.logs()}")

    def wait_for_nodes(self, n: int = 2, timeout: float = 90.0) -> None:
        """Until ``ray status`` (as a driver would see it) lists ``n`` live nodes."""
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            run = subprocess.run([RAY, "status", f"--address={self.address}"], env=self.env, capture_output=True,
                                 text=True, timeout=60)
            out = run.stdout
            if run.returncode == 0 and out.count("node_") >= n:
                return
            time.sleep(1.0)
        raise TimeoutError(f"the cluster never had {n} live nodes:\n{out}\n{self.logs()}")

    def logs(self) -> str:
        """The tail of both ``ray start`` outputs (for a failing test's message)."""
        return "\n".join(f"--- {p.name}\n" + p.read_text()[-3000:] for p in sorted(Path(self.tmp).glob("*.log")))

    def worker_node_pids(self) -> set[int]:
        return descendants(self.worker.pid)

    def kill_worker_node(self) -> None:
        kill_tree(self.worker)

    def stop(self) -> None:
        procs = [p for p in (self.worker, self.head) if p is not None]
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                pass
            kill_tree(proc)
        shutil.rmtree(self.tmp, ignore_errors=True)
