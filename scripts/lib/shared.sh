# Locates the shared directory (official schemas, conformance notes, peers): $STERNA_SHARED_DIR,
# else ../shared next to the repository, else /work/shared. Fails when none has the schema.
find_shared() {
  local c
  for c in "${STERNA_SHARED_DIR:-}" "$(cd .. && pwd)/shared" /work/shared; do
    if [ -n "$c" ] && [ -f "$c/mcp-schema/2026-07-28/schema.json" ]; then
      (cd "$c" && pwd)
      return 0
    fi
  done
  echo "the shared directory (mcp-schema/2026-07-28/schema.json) was not found: set STERNA_SHARED_DIR" >&2
  return 1
}
