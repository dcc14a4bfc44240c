#!/usr/bin/env bash
# Where a server's CPU goes under load: starts SERVER pinned to CPU 0, drives it with the load
# generator on CPU 1 (MODE at concurrency C), counts the server's system calls per operation over
# a 3 s run (perf stat), samples it during another (perf record, 4 kHz), and prints the share of samples in
# the kernel, glibc's allocator, memcpy, serde, hyper, tokio, crypto and sterna itself.
# Usage: bench/profile.sh SERVER MODE [C]   (SERVER: a `sterna` binary, or the `ceiling`)
#        env LOADGEN (default target/release/loadgen). Needs perf and permission to use it.
set -euo pipefail
bin=$1; mode=$2; c=${3:-16}
loadgen=${LOADGEN:-target/release/loadgen}
out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ "$(basename "$bin")" = ceiling ]; then args=(--port "$port"); else args=(serve --http "127.0.0.1:$port"); fi
STERNA_LOG=error taskset -c 0 "$bin" "${args[@]}" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
drive() {
  taskset -c 1 "$loadgen" --url "http://127.0.0.1:$port/mcp" --mode "$mode" --concurrency "$c" \
    --duration "$1" --warmup 0 >"$out/load.json"
}
drive 1  # warm-up
events=syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_write,syscalls:sys_enter_recvfrom
events+=,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_getrandom
# System calls: counted over a whole load run (the server is idle before and after it).
perf stat -x, -e "$events" -p "$pid" -o "$out/stat.csv" -- sleep 4 &
stat=$!
sleep 0.2
drive 3
wait "$stat"
cp "$out/load.json" "$out/counted.json"
drive 4 &
load=$!
sleep 1
perf record -q -F 4000 -p "$pid" -o "$out/perf.data" -- sleep 2 2>/dev/null
wait "$load"
perf report -i "$out/perf.data" --no-children --sort dso,sym -g none --stdio 2>/dev/null \
  | grep -E '^ +[0-9.]+%' >"$out/report.txt"
python3 - "$mode" "$out" <<'PY'
import csv, json, re, sys
from collections import Counter
mode, out = sys.argv[1], sys.argv[2]
ops = json.load(open(f"{out}/counted.json"))["ops"]
calls = [f"{row[2].split('sys_enter_')[1]} {int(row[0]) / ops:.2f}"
         for row in csv.reader(open(f"{out}/stat.csv")) if len(row) > 2 and row[0].isdigit()]
print(f"{mode}: system calls per op: " + ", ".join(calls))
kinds = [("memcpy", r"memmove|memcpy|memset|memcmp"),
         ("serde", r"serde_json|serde_core|serde::|ryu|itoa"),
         ("crypto", r"sha2|chacha|poly1305|hkdf|hmac|aead|base64|core_arch|cipher|crypto_common|universal_hash"),
         ("sterna", r"sterna"),
         ("hyper/http", r"hyper|httparse|http::|h2::"),
         ("tokio/futures", r"tokio|mio|futures")]
shares = Counter()
for line in open(f"{out}/report.txt"):
    m = re.match(r"\s+([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
    if not m:
        continue
    pct, dso, ring, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4)
    allocator = "libc" in dso and re.search(r"malloc|free|realloc|unlink_chunk|consolidate|tcache", sym)
    if ring == "k":
        kind = "kernel"
    elif allocator:
        kind = "allocator (glibc)"
    else:
        kind = next((k for k, rx in kinds if re.search(rx, sym)), None)
    if kind is None:
        kind = "other libc" if re.search(r"libc|vdso|libm", dso) else "other"
    shares[kind] += pct
print(f"{mode}: share of the server's CPU samples: "
      + ", ".join(f"{k} {v:.0f}%" for k, v in shares.most_common()))
PY
