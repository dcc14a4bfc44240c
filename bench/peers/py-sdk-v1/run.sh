#!/usr/bin/env bash
# Usage: run.sh [PORT]   (env: PEERS_HOME=/tmp/peers)
# Creates a venv under $PEERS_HOME/py-sdk-v1/.venv, installs requirements, starts uvicorn (1 worker)
# on 127.0.0.1:PORT.
set -euo pipefail
PORT="${1:-3005}"
HERE="$(cd "$(dirname "$0")" && pwd)"
HOME_DIR="${PEERS_HOME:-/tmp/peers}/py-sdk-v1"
mkdir -p "$HOME_DIR"
cp "$HERE/../../../interop/py/server.py" "$HERE/requirements.txt" "$HOME_DIR/"  # one Python peer server
if [ ! -x "$HOME_DIR/.venv/bin/uvicorn" ] || [ "$HERE/requirements.txt" -nt "$HOME_DIR/.venv/.stamp" ]; then
  python3.11 -m venv "$HOME_DIR/.venv" >&2
  "$HOME_DIR/.venv/bin/pip" install -q -r "$HOME_DIR/requirements.txt" >&2
  touch "$HOME_DIR/.venv/.stamp"
fi
cd "$HOME_DIR"
exec "$HOME_DIR/.venv/bin/uvicorn" server:app --host 127.0.0.1 --port "$PORT" --workers 1 --no-access-log --log-level warning
