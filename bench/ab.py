#!/usr/bin/env python3
"""Interleaved A/B pairs: two builds of one server, the same load, user and kernel CPU apart.

A change to the hot path moves the cost per operation by a few percent, and one run on a
shared VM moves by a third. So each pair starts a fresh process of each server in turn (the
order alternating from pair to pair), pinned to CPU 0 with the load generator on CPU 1 as
`bench/compare.py` does. It warms each one up, then measures one window, and the report
counts the pairs each side won. This is how `bench/PERFORMANCE.md` quotes its A/B figures.

Usage:
  bench/ab.py --loadgen target/release/loadgen [--mode legacy] [--concurrency 16]
              [--pairs 5] [--duration 5] [--warmup 1] A=COMMAND B=COMMAND

COMMAND is a server command line with {port} for a free port, e.g.
"old=/tmp/old/sterna serve --http 127.0.0.1:{port}". Prefix it with `env VAR=...` to change the
environment of one side. Python 3.11 standard library only; Linux (/proc).
"""

import argparse
import os
import shlex
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (the process, pinning and /proc helpers)


def measure(args, command: str, log_dir: Path, tag: str) -> dict:
    """One fresh server: warm-up, then the measured window; ops/s and µs of CPU per op."""
    port = compare.free_port()
    cmd = args.server_pin + shlex.split(command.replace("{port}", str(port)))
    env = dict(os.environ, STERNA_LOG="error")
    proc = compare.start_server(cmd, env, log_dir / f"{tag}.log", port, 30)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        if args.warmup > 0:
            compare.run_loadgen(args, url, args.mode, args.concurrency, args.warmup)
        user0, sys0 = compare.cpu_split(proc.pid)
        res = compare.run_loadgen(args, url, args.mode, args.concurrency, args.duration)
        user1, sys1 = compare.cpu_split(proc.pid)
    finally:
        compare.stop_server(proc)
    if "failure" in res:
        raise RuntimeError(f"{tag}: {res['failure']}")
    if res["errors"] or not res["ops"]:
        raise RuntimeError(f"{tag}: {res['errors']} errors, {res['ops']} operations")
    ops = res["ops"]
    return {"ops_per_s": res["ops_per_s"], "user_us": (user1 - user0) / ops * 1e6,
            "kernel_us": (sys1 - sys0) / ops * 1e6}


def report(names: list[str], pairs: list[dict]) -> str:
    a, b = names
    lines = [f"| pair | {a} ops/s | {a} user µs/op | {a} kernel µs/op "
             f"| {b} ops/s | {b} user µs/op | {b} kernel µs/op |",
             "|--:|--:|--:|--:|--:|--:|--:|"]
    for i, p in enumerate(pairs, 1):
        cells = [f"{p[n]['ops_per_s']:,.0f} | {p[n]['user_us']:.1f} | {p[n]['kernel_us']:.1f}" for n in names]
        lines.append(f"| {i} | " + " | ".join(cells) + " |")
    med = {n: {k: statistics.median(p[n][k] for p in pairs) for k in ("ops_per_s", "user_us", "kernel_us")}
           for n in names}
    cells = [f"{med[n]['ops_per_s']:,.0f} | {med[n]['user_us']:.1f} | {med[n]['kernel_us']:.1f}" for n in names]
    lines.append("| median | " + " | ".join(cells) + " |")
    cpu = {n: [p[n]["user_us"] + p[n]["kernel_us"] for p in pairs] for n in names}
    wins = sum(cpu[b][i] < cpu[a][i] for i in range(len(pairs)))
    change = med[b]["ops_per_s"] / med[a]["ops_per_s"] - 1
    lines += ["", f"{b} used less server CPU per operation in {wins} of {len(pairs)} pairs; "
              f"median ops/s {change:+.1%} against {a}."]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--loadgen", type=Path, required=True, help="the load generator binary")
    p.add_argument("--mode", default="legacy", choices=compare.MODES)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--pairs", type=int, default=5)
    p.add_argument("--duration", type=float, default=5.0, help="measured seconds per server")
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--log-dir", type=Path, default=Path("target/bench/ab-logs"))
    p.add_argument("servers", nargs=2, help="NAME=COMMAND, {port} replaced")
    args = p.parse_args()
    specs = [s.split("=", 1) for s in args.servers]
    if any(len(s) != 2 or not s[0] or not s[1] for s in specs) or specs[0][0] == specs[1][0]:
        p.error("give two servers as NAME=COMMAND with different names")
    if args.pairs < 1 or args.duration <= 0 or args.warmup < 0 or args.concurrency < 1:
        p.error("need --pairs ≥ 1, --duration > 0, --warmup ≥ 0, --concurrency ≥ 1")
    if not args.loadgen.is_file():
        p.error(f"no load generator at {args.loadgen} (cargo build --release -p sterna-bench)")
    pinned, pin_note = compare.pinning()
    args.server_pin = ["taskset", "-c", "0"] if pinned else []
    args.loadgen_pin = ["taskset", "-c", "1"] if pinned else []
    if not pinned:
        print(f"WARNING: not pinned ({pin_note}): not comparable", file=sys.stderr)
    names = [s[0] for s in specs]
    commands = dict(specs)
    pairs = []
    try:
        for i in range(args.pairs):
            order = names if i % 2 == 0 else names[::-1]
            pair = {}
            for n in order:
                pair[n] = measure(args, commands[n], args.log_dir, f"{n}-pair{i + 1}")
                print(f"pair {i + 1} {n}: {pair[n]['ops_per_s']:,.0f} ops/s, user {pair[n]['user_us']:.1f} "
                      f"µs/op, kernel {pair[n]['kernel_us']:.1f}", file=sys.stderr)
            pairs.append(pair)
    except (RuntimeError, KeyboardInterrupt) as e:
        print(f"stopped: {e}", file=sys.stderr)
        compare._stop_all()
        if not pairs:
            return 1
    print(f"{args.mode}, C={args.concurrency}, {compare.fmt_secs(args.duration)} s after "
          f"{compare.fmt_secs(args.warmup)} s warm-up, a fresh process per run"
          + (", server on CPU 0 and load generator on CPU 1" if pinned else ", NOT pinned") + ":\n")
    print(report(names, pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
