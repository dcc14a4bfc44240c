#!/usr/bin/env python3
"""Memory of a server process: idle, per held connection, per open 2025-11-25 session.

Starts each server given as NAME=COMMAND ({port} in COMMAND is replaced by a free port),
waits until it listens on 127.0.0.1, and reads /proc/PID/status: VmRSS (resident), RssAnon
(private anonymous memory: heap, stacks; what the process itself allocated) and RssFile
(pages of the binary and libraries, shared with every process that maps them). Then:

  conns     opens N keep-alive connections, each answered once (a JSON-RPC `ping`), holds
            them, and reports the growth per connection;
  sessions  (servers named with --sessions; in a fresh process, so that the heap the
            connections left behind does not hide the growth) opens N 2025-11-25 sessions (`initialize` and
            `notifications/initialized`), spread over source addresses 127.0.0.2… so that no
            client exceeds a per-client share (sterna: 100 sessions each), and reports the
            growth per session.

Each figure is the median over --reps repetitions (3 by default), the servers interleaved in
each: the file-backed part of RSS moves with the page cache from one process to the next (the
pages the kernel maps around a fault are those it holds then), so one process of each compares
badly.

Usage: bench/memory.py [--reps N] [--conns N] [--sessions-count N] [--sessions NAME,...] NAME=COMMAND ...
Python 3.11 standard library only; Linux (/proc).
"""

import argparse
import json
import resource
import shlex
import socket
import subprocess
import time

PING = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "memory-bench", "version": "1"}}})
INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})


def status(pid: int) -> dict:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[key] = int(value.split()[0])  # KiB
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(body: str, port: int, headers: dict) -> bytes:
    head = [f"POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Content-Type: application/json",
            "Accept: application/json, text/event-stream", f"Content-Length: {len(body)}"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n" + body).encode()


def exchange(sock: socket.socket, data: bytes) -> bytes:
    """Sends one request, reads until the head of the answer has arrived."""
    sock.sendall(data)
    got = b""
    while b"\r\n\r\n" not in got:
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def held_connections(port: int, n: int) -> list:
    headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}
    conns = []
    for _ in range(n):
        s = connect(port)
        exchange(s, request(PING, port, headers))
        conns.append(s)
    return conns


def open_sessions(port: int, n: int, per_source: int = 100) -> int:
    opened = 0
    for i in range(n):
        source = f"127.0.{2 + i // per_source // 250}.{2 + (i // per_source) % 250}"
        with connect(port, source) as s:
            head = exchange(s, request(INIT, port, {})).decode("latin-1")
        sid = next((line.split(":", 1)[1].strip() for line in head.split("\r\n")
                    if line.lower().startswith("mcp-session-id:")), None)
        if not sid:
            continue
        with connect(port, source) as s:
            exchange(s, request(INITIALIZED, port, {"Mcp-Session-Id": sid,
                                                    "MCP-Protocol-Version": "2025-11-25"}))
        opened += 1
    return opened


def wait_listening(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("server did not listen")


def start(command: str) -> tuple[subprocess.Popen, int]:
    """The server listening, after a second to settle."""
    port = free_port()
    proc = subprocess.Popen(shlex.split(command.replace("{port}", str(port))),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
    except BaseException:
        proc.kill()
        raise
    time.sleep(1)
    return proc, port


def stop(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()


def measure(name: str, command: str, args) -> dict:
    proc, port = start(command)
    try:
        row = {"server": name, "idle": status(proc.pid)}
        conns = held_connections(port, args.conns)
        time.sleep(1)
        row["conns"] = status(proc.pid)
        for c in conns:
            c.close()
    finally:
        stop(proc)
    if name in args.sessions:
        # A fresh process: the heap the connections left behind would hold the sessions
        # without the RSS growing (glibc keeps freed memory), flattering the figure.
        proc, port = start(command)
        try:
            row["before_sessions"] = status(proc.pid)
            row["opened"] = open_sessions(port, args.sessions_count)
            time.sleep(1)
            row["sessions"] = status(proc.pid)
        finally:
            stop(proc)
    return row


def figures(r: dict, args) -> dict:
    """The numbers of one measurement, by column."""
    idle, conns = r["idle"], r["conns"]
    out = {"idle": idle["VmRSS"], "anon": idle["RssAnon"], "file": idle["RssFile"],
           "conn": (conns["VmRSS"] - idle["VmRSS"]) * 1024 / max(args.conns, 1),
           "conn_anon": (conns["RssAnon"] - idle["RssAnon"]) * 1024 / max(args.conns, 1),
           "peak": conns["VmHWM"]}
    if "sessions" in r:
        b, s, n = r["before_sessions"], r["sessions"], max(r["opened"], 1)
        out.update(opened=r["opened"], session=(s["VmRSS"] - b["VmRSS"]) * 1024 / n,
                   session_anon=(s["RssAnon"] - b["RssAnon"]) * 1024 / n)
    return out


def median(values: list) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=3, help="repetitions, servers interleaved; medians")
    p.add_argument("--conns", type=int, default=1000)
    p.add_argument("--sessions-count", type=int, default=10000)
    p.add_argument("--sessions", default="", help="comma-separated servers that take 2025 sessions")
    p.add_argument("servers", nargs="+", help="NAME=COMMAND, {port} replaced")
    args = p.parse_args()
    args.sessions = set(filter(None, args.sessions.split(",")))
    want = args.conns + 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(want, soft), hard), hard))
    specs = [spec.partition("=")[::2] for spec in args.servers]
    runs: dict = {name: [] for name, _ in specs}
    for rep in range(max(args.reps, 1)):
        for name, command in specs:
            runs[name].append(figures(measure(name, command, args), args))
    print(f"Medians of {max(args.reps, 1)} repetition(s), servers interleaved.\n")
    print("| server | idle RSS KiB | idle private (RssAnon) KiB | idle file-backed KiB "
          f"| RSS B/conn ({args.conns:,} held) | private B/conn | peak RSS (VmHWM) KiB with them "
          "| RSS B/session | private B/session |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    for name, _ in specs:
        m = {k: median([f[k] for f in runs[name]]) for k in runs[name][0]}
        cells = [f"{m[k]:,.0f}" for k in ("idle", "anon", "file", "conn", "conn_anon", "peak")]
        if "session" in m:
            cells += [f"{m['session']:,.0f} ({m['opened']:,.0f} opened)", f"{m['session_anon']:,.0f}"]
        else:
            cells += ["–", "–"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nEach repetition's idle RSS / private / peak KiB:")
    for name, _ in specs:
        reps = ", ".join(f"{f['idle']:,} / {f['anon']:,} / {f['peak']:,}" for f in runs[name])
        print(f"- {name}: {reps}", flush=True)


if __name__ == "__main__":
    main()
