#!/usr/bin/env python3
"""The cost of a fleet: sterna's demo server as 1 replica (direct) against 3 replicas sharing
Redis behind nginx (deploy/nginx.conf.template), and the Redis replay store against the
in-memory one for single-use operations.

Usage (normally through scripts/bench-fleet, which builds the release binaries first):

    python3 bench/fleet.py [--duration S] [--warmup S] [--reps N] [--concurrency C,...]

Setups, each started fresh per repetition (repetitions interleaved):

  direct        1 replica, `sterna serve --http` (in-memory replay store), the load generator
                talking to it directly;
  direct-redis  1 replica, `sterna serve --http --redis` (Redis replay store, session store, bus);
  nginx-3       3 replicas `sterna serve --http --redis --replica rN` behind nginx;
  direct-cluster, nginx-3-cluster
                the same two on a Redis Cluster (3 primaries, `redis+cluster://`; `--setups`
                picks them: they are not run by default).

Modes: `mrtr` (provision_database: 2 requests per operation, no Redis involved) and
`single-use` (redeem_voucher: the final leg consumes its state in the replay store).

Server CPU per operation is the CPU time (/proc, utime+stime) of every process of the setup —
replicas, nginx and redis-server, each also reported alone — during the measured run, divided by
the operations completed. Nothing is pinned: on a 2-CPU machine, 3 replicas + nginx + Redis + the
load generator share both cores, which is the point of the comparison (what a fleet costs per
operation), not a claim about a fleet's throughput on real hardware.

Prints progress on stderr and a markdown table on stdout. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (the /proc helpers, process control and the load generator runner)

REPO = compare.REPO
SETUPS = ["direct", "direct-redis", "nginx-3"]
ALL_SETUPS = SETUPS + ["direct-cluster", "nginx-3-cluster"]
MODES = ["mrtr", "single-use"]


def bindable(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:port (a cluster node's bus port)."""
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


class Fleet:
    """The processes of one setup; `parts` maps a role to its processes."""

    def __init__(self, setup: str, sterna: Path, run: Path):
        self.parts: dict[str, list] = {"replicas": [], "nginx": [], "redis": []}
        keys = subprocess.run([str(sterna), "keygen"], capture_output=True, text=True, check=True).stdout.strip()
        env = dict(os.environ, STERNA_STATE_KEYS=keys, STERNA_LOG="error")
        redis_url = None
        if setup.endswith("-cluster"):
            redis_url = self.start_cluster(env, run)
        elif setup != "direct":
            port = compare.free_port()
            cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
            self.parts["redis"].append(compare.start_server(cmd, env, run / "redis.log", port, 10))
            redis_url = f"redis://127.0.0.1:{port}/"
        nginx = setup.startswith("nginx-3")
        n = 3 if nginx else 1
        ports = []
        for i in range(1, n + 1):
            port = compare.free_port()
            # nginx's X-Forwarded-For names the client, as the deployment guide sets it up.
            # The load generator is one client: its single-use share must hold a whole run.
            cmd = [str(sterna), "serve", "--http", f"127.0.0.1:{port}", "--replica", f"r{i}",
                   "--trusted-proxies", "127.0.0.1", "--single-use-share", "10000000"]
            if redis_url:
                cmd += ["--redis", redis_url]
            self.parts["replicas"].append(compare.start_server(cmd, env, run / f"r{i}.log", port, 30))
            ports.append(port)
        if not nginx:
            self.url = f"http://127.0.0.1:{ports[0]}/mcp"
            return
        port = compare.free_port()
        upstreams = " ".join(f"server 127.0.0.1:{p} max_fails=0;" for p in ports)
        conf = (REPO / "deploy/nginx.conf.template").read_text()
        conf = conf.replace("@RUN@", str(run)).replace("@LISTEN@", f"127.0.0.1:{port}").replace("@UPSTREAMS@", upstreams)
        (run / "nginx.conf").write_text(conf)
        cmd = ["nginx", "-p", str(run), "-c", str(run / "nginx.conf"), "-e", str(run / "nginx-error.log"),
               "-g", "daemon off;"]
        self.parts["nginx"].append(compare.start_server(cmd, env, run / "nginx.log", port, 10))
        self.url = f"http://127.0.0.1:{port}/mcp"

    def start_cluster(self, env: dict, run: Path) -> str:
        """3 `--cluster-enabled` nodes joined by `redis-cli --cluster create`: the URL."""
        ports = []
        while len(ports) < 3:
            port = compare.free_port()
            if port < 55000 and port not in ports and bindable(port + 10000):
                ports.append(port)
        for port in ports:
            cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                   "--cluster-enabled", "yes", "--cluster-config-file", str(run / f"nodes-{port}.conf")]
            self.parts["redis"].append(compare.start_server(cmd, env, run / f"redis-{port}.log", port, 10))
        addrs = [f"127.0.0.1:{p}" for p in ports]
        subprocess.run(["redis-cli", "--cluster", "create", *addrs, "--cluster-replicas", "0", "--cluster-yes"],
                       capture_output=True, check=True, stdin=subprocess.DEVNULL)
        deadline = time.time() + 30
        while not all("cluster_state:ok" in subprocess.run(["redis-cli", "-p", str(p), "cluster", "info"],
                                                            capture_output=True, text=True).stdout for p in ports):
            if time.time() > deadline:
                raise RuntimeError("the Redis Cluster is not ok")
            time.sleep(0.05)
        return "redis+cluster://" + ",".join(addrs) + "/"

    def cpu(self) -> dict[str, float]:
        return {role: sum(compare.cpu_seconds(p.pid) for p in procs) for role, procs in self.parts.items()}

    def stop(self) -> None:
        for procs in self.parts.values():
            for p in procs:
                compare.stop_server(p)


def measure(args, setup: str, rep: int, rows: list) -> None:
    run = Path(tempfile.mkdtemp(prefix=f"sterna-fleet-{setup}-"))
    fleet = Fleet(setup, args.sterna, run)
    try:
        for mode in MODES:
            for c in args.concurrency:
                compare.run_loadgen(args, fleet.url, mode, c, args.warmup)
                before = fleet.cpu()
                res = compare.run_loadgen(args, fleet.url, mode, c, args.duration)
                after = fleet.cpu()
                if "failure" in res or res["errors"] or not res["ops"]:
                    compare.log(f"  {setup} {mode} C={c}: INVALID {res.get('failure') or res.get('stderr') or res.get('errors')}")
                    continue
                us = {role: (after[role] - before[role]) / res["ops"] * 1e6 for role in after}
                row = {"setup": setup, "mode": mode, "c": c, "rep": rep, "ops_s": res["ops_per_s"],
                       "p99": res["p99_ms"], "us": us, "total": sum(us.values())}
                rows.append(row)
                compare.log(f"  {setup} {mode} C={c}: {res['ops_per_s']:,.0f} ops/s, p99 {res['p99_ms']:.2f} ms, "
                            f"CPU µs/op replicas {us['replicas']:.0f} nginx {us['nginx']:.0f} redis {us['redis']:.0f}")
    finally:
        fleet.stop()
        shutil.rmtree(run, ignore_errors=True)


def report(rows: list, args) -> str:
    out = ["| setup | mode | C | ops/s | p99 ms | replicas µs/op | nginx µs/op | redis µs/op | total server CPU µs/op |",
           "|---|---|--:|--:|--:|--:|--:|--:|--:|"]
    for setup in args.setups:
        for mode in MODES:
            for c in args.concurrency:
                sel = [r for r in rows if (r["setup"], r["mode"], r["c"]) == (setup, mode, c)]
                if not sel:
                    continue
                med = statistics.median
                out.append(f"| {setup} | {mode} | {c} | {med(r['ops_s'] for r in sel):,.0f} | "
                           f"{med(r['p99'] for r in sel):.2f} | {med(r['us']['replicas'] for r in sel):.0f} | "
                           f"{med(r['us']['nginx'] for r in sel):.0f} | {med(r['us']['redis'] for r in sel):.0f} | "
                           f"{med(r['total'] for r in sel):.0f} |")
    return "\n".join(out)


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, default=10.0)
    p.add_argument("--warmup", type=float, default=2.0)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--concurrency", default="32", help="comma-separated (default 32)")
    p.add_argument("--setups", default=",".join(SETUPS),
                   help=f"comma-separated, of {', '.join(ALL_SETUPS)} (default {','.join(SETUPS)})")
    args = p.parse_args(argv)
    args.setups = args.setups.split(",")
    if unknown := [s for s in args.setups if s not in ALL_SETUPS]:
        p.error(f"unknown setup(s): {', '.join(unknown)}")
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    args.sterna = REPO / "target/release/sterna"
    args.loadgen = REPO / "target/release/loadgen"
    args.loadgen_pin = []
    for tool in ("redis-server", "nginx"):
        if not shutil.which(tool):
            print(f"{tool} is required (apt-get install redis-server nginx)", file=sys.stderr)
            return 1
    atexit.register(compare._stop_all)
    rows: list = []
    compare.log(f"load average before: {os.getloadavg()}")
    for rep in range(args.reps):
        for setup in args.setups:
            measure(args, setup, rep, rows)
    compare.log(f"load average after: {os.getloadavg()}")
    print(report(rows, args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
