#!/usr/bin/env bash
# A bounded load test of `braid serve` on loopback: builds the release binary and the load
# client, indexes the bundled help center (741 sections), starts the server with a fresh token,
# runs THREADS client threads for REQUESTS requests per surface (REST /v1/search, then MCP
# tools/call search), prints q/s and p50/p99, and stops the server.
#
#   bash scripts/serve-load.sh                   # lexical + fuzzy legs (no model needed)
#   INDEX=/tmp/hc-minilm bash scripts/serve-load.sh   # an index built with --model default: all three legs
#   THREADS=8 REQUESTS=4000 MODE=hybrid bash scripts/serve-load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
THREADS="${THREADS:-4}"
REQUESTS="${REQUESTS:-2000}"
MODE="${MODE:-hybrid}"
cargo build --release --locked -p braid-cli --bin braid --example load
B="$CARGO_TARGET_DIR/release/braid"
work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
INDEX="${INDEX:-}"
if [ -z "$INDEX" ]; then
  INDEX="$work/index"
  "$B" index datasets/helpcenter --index "$INDEX"
fi
# A token whose rate limit the load cannot reach: this measures serving, not throttling.
"$B" token new --name load > "$work/token.toml" 2> "$work/token.txt"
sed -n 's/^token: //p' "$work/token.txt" > "$work/token"
{
  printf '[limits]\nrate_per_second = 1000000.0\nburst = 1000000\n\n'
  cat "$work/token.toml"
} > "$work/braid.toml"
"$B" serve --index "$INDEX" --config "$work/braid.toml" --bind 127.0.0.1:0 2> "$work/server.log" &
server=$!
url=""
for _ in $(seq 1 300); do
  url="$(sed -n 's/.*listening on \(http[^ ]*\).*/\1/p' "$work/server.log" | head -n 1)"
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log"; exit 1; }
  sleep 0.2
done
[ -n "$url" ] || { echo "the server did not start"; cat "$work/server.log"; exit 1; }
echo "server: $url  index: $INDEX  cores: $(nproc)  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$CARGO_TARGET_DIR/release/examples/load" --url "$url" --token-file "$work/token" \
  --queries datasets/helpcenter/queries.jsonl --threads "$THREADS" --requests "$REQUESTS" --mode "$MODE"
