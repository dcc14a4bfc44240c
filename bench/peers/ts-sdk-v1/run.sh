#!/usr/bin/env bash
# Usage: run.sh [PORT]   (env: TS_EVENT_STORE=0|1, PEERS_HOME=/tmp/peers)
# Installs deps under $PEERS_HOME/ts-sdk-v1 (npm) and starts the server on 127.0.0.1:PORT.
set -euo pipefail
PORT="${1:-3004}"
HERE="$(cd "$(dirname "$0")" && pwd)"
HOME_DIR="${PEERS_HOME:-/tmp/peers}/ts-sdk-v1"
mkdir -p "$HOME_DIR"
cp "$HERE/package.json" "$HERE/package-lock.json" "$HERE/server.mjs" "$HOME_DIR/"
if [ ! -d "$HOME_DIR/node_modules/@modelcontextprotocol/sdk" ] || [ "$HERE/package.json" -nt "$HOME_DIR/node_modules/.stamp" ]; then
  (cd "$HOME_DIR" && npm install --no-audit --no-fund --loglevel=error && touch node_modules/.stamp) >&2
fi
cd "$HOME_DIR"
exec node server.mjs "$PORT"
