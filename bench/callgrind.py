#!/usr/bin/env python3
"""Server instructions per operation, counted by callgrind (repeatable whatever else the
machine does): the server runs under `valgrind --tool=callgrind`, the load generator
drives it for two durations, and (Ir_long - Ir_short) / (ops_long - ops_short) cancels
start-up and shutdown. Usage:
  bench/callgrind.py [--servers name=path/to/sterna ...] [--modes echo,mrtr] [--short 4 --long 12]
The load generator is target/release/loadgen; build it with `cargo build --release -p sterna-bench`."""
import argparse, json, os, re, signal, socket, subprocess, sys, tempfile, time

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def wait_port(port, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close(); return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"server on {port} did not start")

def run(binary, mode, seconds, loadgen):
    port = free_port()
    out = tempfile.mktemp(prefix="callgrind.")
    server = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               binary, "serve", "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        res = subprocess.run([loadgen, "--url", f"http://127.0.0.1:{port}/mcp", "--mode", mode,
                              "--concurrency", "1", "--duration", str(seconds), "--warmup", "0"],
                             capture_output=True, text=True, check=True)
        ops = json.loads(res.stdout.strip().splitlines()[-1])["ops"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    text = open(out).read(); os.unlink(out)
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return ops, int(m.group(1))

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", nargs="+", required=True, help="name=path")
    ap.add_argument("--modes", default="echo,mrtr")
    ap.add_argument("--short", type=float, default=4)
    ap.add_argument("--long", type=float, default=12)
    ap.add_argument("--loadgen", default="target/release/loadgen")
    a = ap.parse_args()
    for mode in a.modes.split(","):
        for spec in a.servers:
            name, path = spec.split("=", 1)
            o1, i1 = run(path, mode, a.short, a.loadgen)
            o2, i2 = run(path, mode, a.long, a.loadgen)
            per = (i2 - i1) / max(1, o2 - o1)
            print(f"{mode:5} {name:10} {per:12,.0f} instructions/op  ({o1} and {o2} ops)", flush=True)

main()
