#!/usr/bin/env bash
# Instructions per operation of the endpoint (in process, no sockets: independent of load),
# counted by callgrind: (Ir(N2) - Ir(N1)) / (N2 - N1) for echo, MRTR, the 2025-11-25 push flow
# (legacy: a session opened once, then call, pushed question, answer, result) and an in-session
# echo (legacy-echo). Every count is independent of N1 N2 (the legacy one too, since a session's
# streams kept for replay are swept at amortized O(1) per new stream). Each line also gives
# the heap allocations the endpoint makes per operation (counted by `instr`'s allocator in a
# plain run of N2 operations; the harness's own are not counted).
# Usage: bench/instructions.sh path/to/instr [N1 N2]
set -euo pipefail
bin=$1; n1=${2:-200}; n2=${3:-1200}
for mode in echo mrtr legacy legacy-echo; do
  ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$mode" "$1" 2>&1 \
         | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }
  a=$(ir "$n1"); b=$(ir "$n2")
  allocs=$("$bin" "$mode" "$n2" 2>&1 | sed -n 's/.* made \([0-9.]*\) allocations\/op (\([0-9]*\) bytes.*/\1 allocations\/op (\2 bytes)/p')
  echo "$mode $(( (b - a) / (n2 - n1) )) instructions/op, $allocs"
done
