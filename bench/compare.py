#!/usr/bin/env python3
"""Side-by-side benchmark: sterna's HTTP demo server against the peer SDKs and a ceiling.

Usage (normally through scripts/bench, which builds the binaries first):

    python3 bench/compare.py [--quick] [--duration S] [--warmup S] [--reps N]
                             [--servers sterna,ts-sdk,py-sdk,rmcp,ceiling,ts-sdk-v1,py-sdk-v1]
                             [--modes echo,mrtr,legacy,legacy-echo] [--concurrency 1,32]

One run starts each server in turn (fresh once per repetition; repetitions are interleaved across
servers), pins it to CPU 0 and the load generator to CPU 1 (`taskset`), and measures at C=1 and C=32:
echo and MRTR (2026-07-28), and the 2025-11-25 modes in a session each worker keeps: `legacy` (the
push flow: tools/call answered as an SSE stream carrying a pushed elicitation/create, the answer
POSTed on a second connection, the result read from the stream) and `legacy-echo` (an in-session
echo), and `mrtr-h2` (MRTR with every worker's requests as streams of one shared prior-knowledge
HTTP/2 connection, against `mrtr`'s connection per worker). sterna serves all five; the 2026 peers (TS SDK 2.x, Python SDK 2.x, rmcp) echo and MRTR; the
2025 peers (TS SDK 1.x, Python SDK 1.x, sources in bench/peers/) the legacy modes; the ceiling
(bare hyper, bench/src/bin/ceiling.rs) echo and, as the floor under any 2025 server, the legacy
modes. Per measurement:

  1. a warm-up invocation of the load generator (`--duration WARMUP --warmup 0`), not recorded;
  2. the server's CPU time (utime+stime+cutime+cstime of the server process and all its
     descendants, /proc/PID/stat) is sampled;
  3. the measured invocation (`--duration DURATION --warmup 0`) runs;
  4. the CPU time is sampled again; the difference divided by the operations the load generator
     completed is the server CPU time per operation. VmHWM (/proc/PID/status, summed over the same
     processes) gives the peak RSS since the server started.

A run whose load generator reports errors > 0 (or fails, or whose server died) is invalid: it is
listed, and medians use the valid runs only. The load generator reports its own CPU time: at ~100%
of its core it, not the server, bounds ops/s, and server CPU time per operation is the fair figure.

Prints progress on stderr, then a markdown report on stdout (medians, ratios, targets), and writes
raw results to target/bench/results-<timestamp>.json. Python 3.11 standard library only.
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ALL_SERVERS = ["sterna", "ts-sdk", "py-sdk", "rmcp", "ceiling", "ts-sdk-v1", "py-sdk-v1"]
# 2025-11-25 peers whose sources live in this repository (bench/peers/NAME/run.sh); the others' run.sh
# are in the shared peers directory.
REPO_PEERS = ["ts-sdk-v1", "py-sdk-v1"]
PEERS = ["ts-sdk", "py-sdk", "rmcp"] + REPO_PEERS
ALIASES = {"ts": "ts-sdk", "typescript": "ts-sdk", "py": "py-sdk", "python": "py-sdk",
           "ts-v1": "ts-sdk-v1", "py-v1": "py-sdk-v1"}
LABELS = {"sterna": "sterna", "ts-sdk": "TS SDK", "py-sdk": "Python SDK", "rmcp": "rmcp",
          "ceiling": "ceiling (bare hyper)", "ts-sdk-v1": "TS SDK 1.x", "py-sdk-v1": "Python SDK 1.x"}
MODES = ["echo", "mrtr", "legacy", "legacy-echo", "mrtr-h2"]
LEGACY_MODES = ["legacy", "legacy-echo"]
CONCURRENCIES = [1, 32]
LOADGEN_SATURATED_PCT = 85.0
OTHER_LOAD_PCT = 10.0
CLK_TCK = os.sysconf("SC_CLK_TCK")

_live: list[subprocess.Popen] = []  # every server process this script started and has not stopped


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# /proc sampling


def _proc_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (ppid, utime+cutime, stime+cstime in clock ticks) for every visible process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                raw = f.read().decode("ascii", "replace")
        except OSError:
            continue
        # comm (field 2) may contain spaces and parentheses: split after the last ')'.
        rest = raw[raw.rfind(")") + 2:].split()
        # rest[0] is field 3 (state); ppid is field 4, utime..cstime are fields 14..17.
        try:
            user, system, cuser, csystem = (int(x) for x in rest[11:15])
            table[int(entry)] = (int(rest[1]), user + cuser, system + csystem)
        except (IndexError, ValueError):
            continue
    return table


def descendants(root: int, table: dict[int, tuple[int, int, int]] | None = None) -> list[int]:
    """root and every live descendant of it."""
    table = table if table is not None else _proc_table()
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid in table or pid == root:
            out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def cpu_split(root: int) -> tuple[float, float]:
    """CPU time (user, kernel; including reaped children) of root and its descendants, in seconds."""
    table = _proc_table()
    pids = [p for p in descendants(root, table) if p in table]
    return (sum(table[p][1] for p in pids) / CLK_TCK, sum(table[p][2] for p in pids) / CLK_TCK)


def cpu_seconds(root: int) -> float:
    """CPU time (user+sys, including reaped children) of root and its descendants, in seconds."""
    return sum(cpu_split(root))


def pinning(no_pin: bool = False) -> tuple[bool, str | None]:
    """Whether the server can be pinned to CPU 0 and the load generator to CPU 1 (`taskset`), and
    why not when it cannot."""
    if no_pin:
        return False, "--no-pin given"
    cpus = os.sched_getaffinity(0)
    if not shutil.which("taskset"):
        return False, "`taskset` not found (install util-linux)"
    if not {0, 1} <= cpus:
        return False, f"CPUs 0 and 1 are not both available (affinity {sorted(cpus)}, {len(cpus)} CPUs)"
    return True, None


def cpu_busy_seconds() -> dict[int, float]:
    """Busy (non-idle) time of each CPU since boot, from /proc/stat, in seconds."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                name, *v = line.split()
                v = [int(x) for x in v[:8]]  # user nice system idle iowait irq softirq steal
                out[int(name[3:])] = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / CLK_TCK
    return out


def peak_rss_kib(root: int) -> int:
    """Sum of VmHWM (peak resident set) over root and its descendants, in KiB."""
    total = 0
    for pid in descendants(root):
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


# ---------------------------------------------------------------------------------------------
# processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tail(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def start_server(cmd: list[str], env: dict, logpath: Path, port: int, timeout: float) -> subprocess.Popen:
    """Starts cmd in its own session (so it and its children can be signalled as a group) and
    waits until 127.0.0.1:port accepts TCP connections."""
    logpath.parent.mkdir(parents=True, exist_ok=True)
    with open(logpath, "ab") as logf:
        logf.write(f"$ {' '.join(cmd)}\n".encode())
        logf.flush()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
    _live.append(proc)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            _live.remove(proc)
            raise RuntimeError(f"server exited with status {proc.returncode} before listening on "
                               f"port {port}; log {logpath}\n{tail(logpath)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop_server(proc)
            raise RuntimeError(f"server not listening on port {port} after {timeout:.0f} s; "
                               f"log {logpath}\n{tail(logpath)}")
        time.sleep(0.1)


def stop_server(proc: subprocess.Popen) -> None:
    """SIGTERM to the server's process group, SIGKILL after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # The group may outlive its leader (e.g. a child that ignored SIGTERM).
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc in _live:
        _live.remove(proc)


def _stop_all() -> None:
    for proc in list(_live):
        stop_server(proc)


def _on_signal(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


# ---------------------------------------------------------------------------------------------
# load generator


def fmt_secs(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def run_loadgen(args, url: str, mode: str, c: int, duration: float) -> dict:
    """One load generator invocation (no internal warm-up); returns its JSON line, or
    {"failure": ...}."""
    cmd = args.loadgen_pin + [str(args.loadgen), "--url", url, "--mode", mode, "--concurrency", str(c),
                              "--duration", fmt_secs(duration), "--warmup", "0"]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + 120)
    except subprocess.TimeoutExpired:
        return {"failure": f"load generator timed out: {' '.join(cmd)}"}
    lines = [ln for ln in r.stdout.splitlines() if ln.strip().startswith("{")]
    if r.returncode != 0 or not lines:
        return {"failure": f"load generator exited {r.returncode}: {r.stderr.strip()[-500:]}"}
    try:
        out = json.loads(lines[-1])
    except json.JSONDecodeError as e:
        return {"failure": f"unparsable load generator output ({e}): {lines[-1][:200]}"}
    missing = [k for k in ("ops", "ops_per_s", "errors", "p50_ms", "p99_ms", "loadgen_cpu_s", "duration_s")
               if k not in out]
    if missing:
        return {"failure": f"load generator output lacks {missing}: {lines[-1][:200]}"}
    if r.stderr.strip():
        out["stderr"] = r.stderr.strip()[-500:]
    return out


# ---------------------------------------------------------------------------------------------
# servers


def find_peers_dir() -> Path | None:
    cands = [os.environ.get("STERNA_PEERS_DIR")]
    if os.environ.get("STERNA_SHARED_DIR"):
        cands.append(os.path.join(os.environ["STERNA_SHARED_DIR"], "peers"))
    cands += [str(REPO.parent / "shared" / "peers"), "/work/shared/peers"]
    for c in cands:
        if c and (Path(c) / "rmcp" / "run.sh").is_file():
            return Path(c).resolve()
    return None


def peer_run_sh(args, name: str) -> Path:
    """Where a peer's run.sh lives: bench/peers/ for the 2025 peers, the shared peers directory for
    the others."""
    if name in REPO_PEERS:
        return REPO / "bench" / "peers" / name / "run.sh"
    return args.peers_dir / name / "run.sh"


def server_cmd(args, name: str, port: int) -> list[str]:
    if name == "sterna":
        return [str(args.sterna), "serve", "--http", f"127.0.0.1:{port}"]
    if name == "ceiling":
        return [str(args.ceiling), "--port", str(port)]
    return ["bash", str(peer_run_sh(args, name)), str(port)]


def server_env(args) -> dict:
    env = dict(os.environ)
    env["STERNA_LOG"] = "error"
    env["PEERS_HOME"] = str(args.peers_home)
    # run.sh builds rmcp into $CARGO_TARGET_DIR if set; keep peer builds under PEERS_HOME.
    env.pop("CARGO_TARGET_DIR", None)
    return env


def modes_for(name: str) -> list[str]:
    if name == "ceiling":
        return ["echo"] + LEGACY_MODES
    if name in REPO_PEERS:
        return LEGACY_MODES
    if name in PEERS:
        return ["echo", "mrtr"]
    return MODES


def prepare_peers(args) -> None:
    """Installs/builds each selected peer (first run: npm install, pip install, cargo build) by
    starting it once, unpinned and untimed, then stopping it."""
    failures = {}
    for name in list(args.servers):
        if name not in PEERS:
            continue
        port = free_port()
        log(f"preparing {name} (installs into {args.peers_home}; the first run may take minutes)")
        t0 = time.monotonic()
        try:
            proc = start_server(server_cmd(args, name, port), server_env(args),
                                args.log_dir / f"{name}-prepare.log", port, args.install_timeout)
        except RuntimeError as e:
            log(f"ERROR: {name} could not be prepared, leaving it out of this run: {e}")
            failures[name] = str(e)
            args.servers.remove(name)
            continue
        stop_server(proc)
        log(f"{name} ready ({time.monotonic() - t0:.1f} s)")
    return failures


def measure_server(args, name: str, rep: int, runs: list, server_reps: list) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    logpath = args.log_dir / f"{name}-rep{rep}.log"
    proc = start_server(args.server_pin + server_cmd(args, name, port), server_env(args), logpath, port,
                        args.ready_timeout)
    try:
        for mode in modes_for(name):
            if mode not in args.modes:
                continue
            for c in args.concurrency:
                problems = []
                if args.warmup > 0:
                    w = run_loadgen(args, url, mode, c, args.warmup)
                    if "failure" in w:
                        problems.append(f"warm-up: {w['failure']}")
                    elif w["errors"]:
                        problems.append(f"warm-up: {w['errors']} errors")
                busy0, (user0, sys0), t0 = cpu_busy_seconds(), cpu_split(proc.pid), time.monotonic()
                res = run_loadgen(args, url, mode, c, args.duration)
                (user1, sys1), busy1, wall = cpu_split(proc.pid), cpu_busy_seconds(), time.monotonic() - t0
                cpu0, cpu1 = user0 + sys0, user1 + sys1
                alive = proc.poll() is None
                rss = peak_rss_kib(proc.pid) if alive else None
                row = {"server": name, "rep": rep, "mode": mode, "concurrency": c, "url": url,
                       "server_pid": proc.pid, "server_alive": alive, "server_cpu_s": cpu1 - cpu0,
                       "server_peak_rss_kib": rss, "loadgen": res, "problems": problems}
                if args.pinned:
                    # Busy time on the server's and the load generator's CPU not used by them: other
                    # processes competing for the pinned cores (it skews the figures).
                    row["other_cpu0_pct"] = 100.0 * max(0.0, busy1[0] - busy0[0] - (cpu1 - cpu0)) / wall
                    lg_cpu = res.get("loadgen_cpu_s", 0.0) if "failure" not in res else 0.0
                    row["other_cpu1_pct"] = 100.0 * max(0.0, busy1[1] - busy0[1] - lg_cpu) / wall
                if "failure" in res:
                    problems.append(res["failure"])
                else:
                    ops = res["ops"]
                    row["server_cpu_us_per_op"] = (cpu1 - cpu0) / ops * 1e6 if ops else None
                    # The kernel's part: sockets, wake-ups, loopback delivery (the same work for any
                    # server speaking the same messages; the rest is the server's own code).
                    row["server_kernel_us_per_op"] = (sys1 - sys0) / ops * 1e6 if ops else None
                    row["loadgen_cpu_pct"] = (100.0 * res["loadgen_cpu_s"] / res["duration_s"]
                                              if res["duration_s"] else None)
                    if res["errors"]:
                        problems.append(f"{res['errors']} errors")
                    if not ops:
                        problems.append("no operations completed")
                if not alive:
                    problems.append(f"server exited ({proc.returncode}); log {logpath}")
                row["valid"] = "failure" not in res and not res["errors"] and res["ops"] > 0 and alive
                runs.append(row)
                if "failure" in res:
                    log(f"  {name} {mode} C={c}: FAILED {res['failure']}")
                else:
                    log(f"  {name} {mode} C={c}: {res['ops_per_s']:,.0f} ops/s, p99 {res['p99_ms']:.2f} ms, "
                        f"server {fmt_num(row['server_cpu_us_per_op'])} µs/op "
                        f"({fmt_num(row['server_kernel_us_per_op'])} in the kernel), "
                        f"loadgen {fmt_num(row['loadgen_cpu_pct'])}% CPU"
                        + (f", other load on CPU0/CPU1 {row['other_cpu0_pct']:.0f}%/{row['other_cpu1_pct']:.0f}%"
                           if "other_cpu0_pct" in row else "")
                        + (f", errors {res['errors']}" if res["errors"] else "")
                        + ("" if row["valid"] else "  [INVALID: " + "; ".join(problems) + "]"))
                if not alive:
                    return
        server_reps.append({"server": name, "rep": rep, "peak_rss_kib": peak_rss_kib(proc.pid)})
    finally:
        stop_server(proc)


# ---------------------------------------------------------------------------------------------
# aggregation and report


def fmt_num(x, digits: int = 0) -> str:
    if x is None:
        return "—"
    if digits == 0 and abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 100:
        return f"{x:,.{digits}f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def fmt_ratio(x) -> str:
    return "—" if x is None else f"{x:.2f}×"


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def aggregate(runs: list, server_reps: list) -> dict:
    """Medians per (server, mode, C) over valid runs (over all runs, flagged, if none is valid)."""
    cells = {}
    for key in sorted({(r["server"], r["mode"], r["concurrency"]) for r in runs},
                      key=lambda k: (ALL_SERVERS.index(k[0]), MODES.index(k[1]), k[2])):
        rows = [r for r in runs if (r["server"], r["mode"], r["concurrency"]) == key]
        valid = [r for r in rows if r["valid"]]
        use = valid or [r for r in rows if "failure" not in r["loadgen"]]
        lg = [r["loadgen"] for r in use]
        rss = [r["server_peak_rss_kib"] for r in use]
        cells["/".join(map(str, key))] = {
            "server": key[0], "mode": key[1], "concurrency": key[2],
            "runs": len(rows), "valid_runs": len(valid), "all_invalid": not valid,
            "errors": sum(r["loadgen"].get("errors", 0) for r in rows),
            "ops_per_s": median([x["ops_per_s"] for x in lg]),
            "p50_ms": median([x["p50_ms"] for x in lg]),
            "p90_ms": median([x.get("p90_ms") for x in lg]),
            "p99_ms": median([x["p99_ms"] for x in lg]),
            "server_cpu_us_per_op": median([r.get("server_cpu_us_per_op") for r in use]),
            "server_kernel_us_per_op": median([r.get("server_kernel_us_per_op") for r in use]),
            "loadgen_cpu_pct": median([r.get("loadgen_cpu_pct") for r in use]),
            "peak_rss_mib": (median(rss) / 1024) if median(rss) is not None else None,
            "other_cpu0_pct": median([r.get("other_cpu0_pct") for r in use]),
            "other_cpu1_pct": median([r.get("other_cpu1_pct") for r in use]),
        }
    peaks = {}
    for name in {s["server"] for s in server_reps}:
        peaks[name] = median([s["peak_rss_kib"] for s in server_reps if s["server"] == name]) / 1024
    return {"cells": cells, "server_peak_rss_mib": peaks}


def cell(agg, server, mode, c):
    return agg["cells"].get(f"{server}/{mode}/{c}")


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def evaluate_targets(agg: dict) -> list[dict]:
    out = []

    def add(desc, need, mine, theirs, metric, op, limit, unit, server, times=1):
        a, b = cell(agg, "sterna", *mine), cell(agg, server, *theirs)
        if metric == "peak_rss_mib":
            av, bv = agg["server_peak_rss_mib"].get("sterna"), agg["server_peak_rss_mib"].get(server)
            a = a or (next((c for c in agg["cells"].values() if c["server"] == "sterna"), None)
                      if av is not None else None)
            b = b or (next((c for c in agg["cells"].values() if c["server"] == server), None)
                      if bv is not None else None)
        else:
            av, bv = (a or {}).get(metric), (b or {}).get(metric)
            bv = bv * times if bv is not None else None
        r = ratio(av, bv)
        entry = {"target": desc, "need": need, "sterna": av, "other": bv, "ratio": r, "unit": unit,
                 "vs": server}
        if a is None or b is None or av is None or bv is None:
            entry["status"] = "SKIP"
            missing = [f"{s} {mode} C={c}" for s, x, (mode, c) in (("sterna", a, mine), (server, b, theirs))
                       if x is None]
            if metric == "peak_rss_mib":
                missing = [s for s, v in (("sterna", av), (server, bv)) if v is None]
            entry["note"] = " and ".join(missing or ["data"]) + " not measured"
        else:
            entry["status"] = "PASS" if (r <= limit if op == "<=" else r >= limit) else "MISS"
            notes = []
            if a["all_invalid"] or b["all_invalid"]:
                entry["status"] += " (invalid runs)"
                notes.append("every run of a side had errors")
            if metric == "ops_per_s" and (a.get("loadgen_cpu_pct") or 0) >= LOADGEN_SATURATED_PCT:
                notes.append(f"loadgen at {a['loadgen_cpu_pct']:.0f}% CPU on sterna: its ops/s is a "
                             "lower bound, see CPU/op")
            if notes:
                entry["note"] = "; ".join(notes)
        out.append(entry)

    m32, e32, e1 = ("mrtr", 32), ("echo", 32), ("echo", 1)
    add("MRTR C=32: server CPU time/op ≤ 1/3 of rmcp's", "≤ 0.33×", m32, m32, "server_cpu_us_per_op",
        "<=", 1 / 3, "µs", "rmcp")
    add("MRTR C=32: ops/s ≥ 2.5× rmcp's", "≥ 2.5×", m32, m32, "ops_per_s", ">=", 2.5, "ops/s", "rmcp")
    add("MRTR C=32: ops/s ≥ 20× TS SDK's", "≥ 20×", m32, m32, "ops_per_s", ">=", 20, "ops/s", "ts-sdk")
    add("MRTR C=32: ops/s ≥ 20× Python SDK's", "≥ 20×", m32, m32, "ops_per_s", ">=", 20, "ops/s", "py-sdk")
    add("echo C=32: ops/s ≥ 2× rmcp's", "≥ 2×", e32, e32, "ops_per_s", ">=", 2, "ops/s", "rmcp")
    add("echo C=32: p99 ≤ 1/2 of rmcp's", "≤ 0.5×", e32, e32, "p99_ms", "<=", 0.5, "ms", "rmcp")
    add("MRTR C=32: p99 ≤ 1/2 of rmcp's", "≤ 0.5×", m32, m32, "p99_ms", "<=", 0.5, "ms", "rmcp")
    add("peak RSS ≤ rmcp's", "≤ 1×", m32, m32, "peak_rss_mib", "<=", 1.0, "MiB", "rmcp")
    add("echo C=32: server CPU time/op within 2× of the ceiling's", "≤ 2×", e32, e32,
        "server_cpu_us_per_op", "<=", 2.0, "µs", "ceiling")
    add("echo C=1: server CPU time/op within 2× of the ceiling's", "≤ 2×", e1, e1,
        "server_cpu_us_per_op", "<=", 2.0, "µs", "ceiling")
    # Both eras, near the limit (C=16).
    p16, m16, e16 = ("legacy", 16), ("mrtr", 16), ("echo", 16)
    add("push flow C=16: ops/s ≥ 10× the TS SDK 1.x's", "≥ 10×", p16, p16, "ops_per_s", ">=", 10,
        "ops/s", "ts-sdk-v1")
    add("push flow C=16: server CPU time/op ≤ 3× sterna's MRTR op", "≤ 3×", p16, m16,
        "server_cpu_us_per_op", "<=", 3.0, "µs", "sterna")
    add("echo C=16: server CPU time/op ≤ 1.3× the ceiling's", "≤ 1.3×", e16, e16,
        "server_cpu_us_per_op", "<=", 1.3, "µs", "ceiling")
    add("MRTR C=16: server CPU time/op ≤ 1.5× two ceiling requests", "≤ 1.5×", m16, e16,
        "server_cpu_us_per_op", "<=", 1.5, "µs", "ceiling", times=2)
    return out


def machine_info() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                                capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        commit = None
    return {"nproc": os.cpu_count(), "cpu_model": model or platform.processor() or "unknown",
            "kernel": platform.release(), "python": platform.python_version(), "commit": commit,
            "loadavg_at_start": loadavg()}


def loadavg() -> str | None:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return None


def render(args, meta: dict, agg: dict, targets: list, runs: list, interrupted: bool) -> str:
    m = meta["machine"]
    L = []
    L.append(f"## sterna benchmark — {meta['started']} — {m['nproc']} CPUs, {m['cpu_model']}, "
             f"Linux {m['kernel']}, commit {m['commit']}")
    L.append("")
    pin = ("server pinned to CPU 0, load generator to CPU 1" if meta["pinned"]
           else "**WARNING: NOT PINNED** — " + meta["pin_note"])
    L.append(f"{pin}; {fmt_secs(args.duration)} s measured after {fmt_secs(args.warmup)} s warm-up; "
             f"median of {args.reps} repetition(s), interleaved across servers; MRTR op = 2 HTTP requests; "
             "legacy op (2025-11-25 push flow in a session) = 2 HTTP requests (the call, answered as an "
             "SSE stream carrying the pushed question and then the result, and the answer's POST); "
             f"load average before the run {m['loadavg_at_start']} (other load on the machine skews results).")
    if interrupted:
        L.append("")
        L.append("**INTERRUPTED — partial results.**")
    for name, err in (meta.get("prepare_failures") or {}).items():
        L.append("")
        L.append(f"**{LABELS[name]} left out: install/start failed** — {err.splitlines()[0]}")
    L.append("")
    L.append("| server | mode | C | ops/s | p50 ms | p99 ms | server CPU µs/op | of which kernel "
             "| loadgen CPU % | peak RSS MiB | errors | valid runs |")
    L.append("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    saturated = []
    for c in agg["cells"].values():
        flag = " ⚠" if c["all_invalid"] else ""
        lg = c["loadgen_cpu_pct"]
        if lg is not None and lg >= LOADGEN_SATURATED_PCT:
            saturated.append(f"{c['server']} {c['mode']} C={c['concurrency']} ({lg:.0f}%)")
        L.append(f"| {LABELS[c['server']]}{flag} | {c['mode']} | {c['concurrency']} | {fmt_num(c['ops_per_s'])} "
                 f"| {fmt_num(c['p50_ms'])} | {fmt_num(c['p99_ms'])} | {fmt_num(c['server_cpu_us_per_op'])} "
                 f"| {fmt_num(c.get('server_kernel_us_per_op'))} | {fmt_num(lg)} | {fmt_num(c['peak_rss_mib'])} | {c['errors']} "
                 f"| {c['valid_runs']}/{c['runs']} |")
    L.append("")
    peaks = sorted(agg["server_peak_rss_mib"].items(), key=lambda kv: ALL_SERVERS.index(kv[0]))
    L.append("Peak RSS is VmHWM since the server started (rows run in table order within a repetition)."
             + (" Server peak RSS (median over repetitions): "
                + ", ".join(f"{LABELS[s]} {v:.1f} MiB" for s, v in peaks) + "." if peaks else ""))
    if saturated:
        L.append("")
        L.append(f"**Load generator near saturation** (≥ {LOADGEN_SATURATED_PCT:.0f}% of its core): "
                 + ", ".join(saturated) + ". There ops/s and latency are bounded by the load generator; "
                 "compare server CPU µs/op instead.")
    busy = [f"{c['server']} {c['mode']} C={c['concurrency']} ({c['other_cpu0_pct']:.0f}%/{c['other_cpu1_pct']:.0f}%)"
            for c in agg["cells"].values()
            if max(c.get("other_cpu0_pct") or 0, c.get("other_cpu1_pct") or 0) >= OTHER_LOAD_PCT]
    if busy:
        L.append("")
        L.append(f"**Other load on the pinned CPUs** (≥ {OTHER_LOAD_PCT:.0f}% of CPU 0/CPU 1 used by other "
                 "processes during the measured window): " + ", ".join(busy)
                 + ". These figures are skewed; rerun on an idle machine.")
    if any(c["all_invalid"] for c in agg["cells"].values()):
        L.append("")
        L.append("⚠ = every run of that row reported errors or failed; its figures are shown but not valid.")
    invalid = [r for r in runs if not r["valid"]]
    if invalid:
        L.append("")
        L.append(f"Invalid runs ({len(invalid)}, excluded from medians where a valid run exists):")
        for r in invalid:
            what = "start" if r.get("start_failure") else f"{r['mode']} C={r['concurrency']}"
            L.append(f"- {r['server']} rep {r['rep']} {what}: " + "; ".join(p.splitlines()[0] for p in r["problems"]))

    # ratios
    others = [s for s in PEERS + ["ceiling"] if s in {c["server"] for c in agg["cells"].values()}]
    if any(c["server"] == "sterna" for c in agg["cells"].values()) and others:
        L.append("")
        L.append("Ratios sterna/other (ops/s: higher is better for sterna; p99, CPU/op, RSS: lower is better):")
        L.append("")
        L.append("| sterna / | mode | C | ops/s | p99 | server CPU/op | peak RSS |")
        L.append("|---|---|--:|--:|--:|--:|--:|")
        levels = sorted({c["concurrency"] for c in agg["cells"].values()})
        for o in others:
            for mode in modes_for(o):
                for c in levels:
                    a, b = cell(agg, "sterna", mode, c), cell(agg, o, mode, c)
                    if not a or not b:
                        continue
                    L.append(f"| {LABELS[o]} | {mode} | {c} | {fmt_ratio(ratio(a['ops_per_s'], b['ops_per_s']))} "
                             f"| {fmt_ratio(ratio(a['p99_ms'], b['p99_ms']))} "
                             f"| {fmt_ratio(ratio(a['server_cpu_us_per_op'], b['server_cpu_us_per_op']))} "
                             f"| {fmt_ratio(ratio(a['peak_rss_mib'], b['peak_rss_mib']))} |")

    L.append("")
    L.append("Targets (ratios from this run):")
    L.append("")
    for t in targets:
        if t["ratio"] is not None:
            detail = (f"sterna {fmt_num(t['sterna'])} {t['unit']} vs {LABELS[t['vs']]} {fmt_num(t['other'])} "
                      f"{t['unit']} = {fmt_ratio(t['ratio'])} (need {t['need']})")
        else:
            detail = f"(need {t['need']})"
        note = f" — {t['note']}" if t.get("note") else ""
        L.append(f"- **{t['status']}** {t['target']}: {detail}{note}")
    passed = sum(t["status"] == "PASS" for t in targets)
    missed = sum(t["status"].startswith("MISS") for t in targets)
    L.append("")
    L.append(f"{passed} PASS, {missed} MISS, {len(targets) - passed - missed} other.")
    return "\n".join(L)


# ---------------------------------------------------------------------------------------------


def parse_args(argv):
    cache = Path(os.environ.get("STERNA_CACHE", Path.home() / ".cache" / "sterna"))
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Environment: STERNA_CACHE (default ~/.cache/sterna; peers install "
                                       "into $STERNA_CACHE/peers), STERNA_PEERS_DIR or STERNA_SHARED_DIR "
                                       "(where the peers' run.sh live), CARGO_TARGET_DIR.")
    p.add_argument("--duration", type=float, default=10.0, help="measured seconds per run (default 10)")
    p.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds before each run (default 2)")
    p.add_argument("--reps", type=int, default=3, help="repetitions, interleaved across servers (default 3)")
    p.add_argument("--quick", action="store_true", help="duration 3 s, 1 repetition (explicit flags win)")
    p.add_argument("--servers", default=",".join(ALL_SERVERS),
                   help=f"comma-separated subset of {','.join(ALL_SERVERS)} (default all)")
    p.add_argument("--modes", default=",".join(MODES),
                   help=f"comma-separated subset of {','.join(MODES)} (default all)")
    p.add_argument("--concurrency", default=",".join(map(str, CONCURRENCIES)),
                   help="comma-separated concurrency levels (default 1,32)")
    p.add_argument("--no-pin", action="store_true", help="do not pin with taskset (not comparable)")
    p.add_argument("--ready-timeout", type=float, default=120.0, help="seconds to wait for a server to listen")
    p.add_argument("--install-timeout", type=float, default=1800.0,
                   help="seconds to wait for a peer's first install/build (default 1800)")
    p.add_argument("--out-dir", type=Path, default=target / "bench", help="results directory (default target/bench)")
    p.add_argument("--loadgen", type=Path, default=target / "release" / "loadgen")
    p.add_argument("--sterna", type=Path, default=target / "release" / "sterna")
    p.add_argument("--ceiling", type=Path, default=target / "release" / "ceiling")
    p.add_argument("--peers-home", type=Path, default=cache / "peers", help="where peers install (PEERS_HOME)")
    p.add_argument("--peers-dir", type=Path, default=None,
                   help="directory holding ts-sdk/ py-sdk/ rmcp/ run.sh (the 2025 peers are in bench/peers/)")
    raw = sys.argv[1:] if argv is None else argv
    a = p.parse_args(raw)
    if a.quick:
        if not any(x == "--duration" or x.startswith("--duration=") for x in raw):
            a.duration = 3.0
        if not any(x == "--reps" or x.startswith("--reps=") for x in raw):
            a.reps = 1
    names = []
    for s in a.servers.split(","):
        s = ALIASES.get(s.strip().lower(), s.strip().lower())
        if not s:
            continue
        if s not in ALL_SERVERS:
            p.error(f"unknown server {s!r}; choose from {', '.join(ALL_SERVERS)}")
        if s not in names:
            names.append(s)
    a.servers = sorted(names, key=ALL_SERVERS.index)
    a.modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    if any(m not in MODES for m in a.modes):
        p.error(f"--modes takes a subset of {','.join(MODES)}")
    # A server that serves none of the chosen modes is left out (e.g. the ceiling for --modes legacy).
    a.servers = [s for s in a.servers if any(m in a.modes for m in modes_for(s))]
    if not a.servers:
        p.error("no selected server serves the selected modes")
    a.concurrency = [int(x) for x in a.concurrency.split(",") if x.strip()]
    if a.duration <= 0 or a.warmup < 0 or a.reps < 1:
        p.error("need --duration > 0, --warmup ≥ 0, --reps ≥ 1")
    return a


def main(argv=None) -> int:
    args = parse_args(argv)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.log_dir = args.out_dir / "logs" / stamp

    problems = []
    for name, path in (("loadgen", args.loadgen), ("sterna", args.sterna), ("ceiling", args.ceiling)):
        if (name == "loadgen" or name in args.servers) and not os.access(path, os.X_OK):
            problems.append(f"{name} binary not found at {path} (build: cargo build --release -p sterna-bench "
                            "-p sterna-cli, or use scripts/bench)")
    shared = [s for s in args.servers if s in PEERS and s not in REPO_PEERS]
    if shared:
        args.peers_dir = (args.peers_dir or find_peers_dir())
        if not args.peers_dir or not all((args.peers_dir / s / "run.sh").is_file() for s in shared):
            problems.append("peers' run.sh not found: set STERNA_PEERS_DIR (or STERNA_SHARED_DIR) or pass "
                            "--peers-dir")
    if problems:
        for pr in problems:
            print(f"error: {pr}", file=sys.stderr)
        return 2

    pinned, pin_note = pinning(args.no_pin)
    if not pinned:
        for _ in range(3):
            log(f"WARNING: running WITHOUT CPU pinning: {pin_note}. Server and load generator compete for "
                "CPUs; figures are not comparable with pinned runs.")
    args.pinned = pinned
    args.server_pin = ["taskset", "-c", "0"] if pinned else []
    args.loadgen_pin = ["taskset", "-c", "1"] if pinned else []

    meta = {"started": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"), "machine": machine_info(),
            "pinned": pinned, "pin_note": None if pinned else pin_note,
            "config": {"duration_s": args.duration, "warmup_s": args.warmup, "reps": args.reps,
                       "servers": args.servers, "modes": args.modes, "concurrency": args.concurrency,
                       "loadgen": str(args.loadgen), "peers_home": str(args.peers_home),
                       "method": "separate warm-up invocation, then server CPU sampled from /proc right "
                                 "before and after the measured invocation (both with --warmup 0)"}}

    atexit.register(_stop_all)
    signal.signal(signal.SIGTERM, _on_signal)
    runs, server_reps, interrupted = [], [], False
    n_meas = sum(len([m for m in modes_for(s) if m in args.modes]) for s in args.servers) * len(args.concurrency)
    est = args.reps * n_meas * (args.duration + args.warmup + 0.5)
    log(f"servers {', '.join(args.servers)}; {args.reps} rep(s) × {n_meas} measurements; "
        f"≈{est / 60:.1f} min after preparation; logs in {args.log_dir}")
    try:
        meta["prepare_failures"] = prepare_peers(args)
        for rep in range(1, args.reps + 1):
            for name in args.servers:
                log(f"rep {rep}/{args.reps}: {name}")
                try:
                    measure_server(args, name, rep, runs, server_reps)
                except RuntimeError as e:
                    log(f"  {name}: {e}")
                    runs.append({"server": name, "rep": rep, "mode": "echo", "concurrency": 0,
                                 "valid": False, "loadgen": {"failure": str(e)}, "problems": [str(e)],
                                 "start_failure": True})
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: stopping servers, reporting partial results")
    finally:
        _stop_all()

    measured = [r for r in runs if not r.get("start_failure")]
    agg = aggregate(measured, server_reps)
    targets = evaluate_targets(agg)
    report = render(args, meta, agg, targets, runs, interrupted)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / f"results-{stamp}.json"
    with open(out, "w") as f:
        json.dump({**meta, "interrupted": interrupted, "runs": runs, "server_reps": server_reps,
                   "medians": agg, "targets": targets, "report_markdown": report}, f, indent=2)
    print(report)
    print(f"\nRaw results: {out}")
    log(f"wrote {out}")
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
