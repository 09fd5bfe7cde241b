#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance) against `braid serve`
# on the help-center index: scenarios server-initialize, ping, tools-list, dns-rebinding-protection.
# The suite sends no bearer token, so scripts/mcp_auth_proxy.py adds a static one in front.
# Usage: bash scripts/mcp-conformance.sh [path/to/braid]   (default: $CARGO_TARGET_DIR/debug/braid)
set -euo pipefail
cd "$(dirname "$0")/.."
BRAID="${1:-${CARGO_TARGET_DIR:-$PWD/target}/debug/braid}"
CONFORMANCE_VERSION=0.1.16
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
tool="${BRAID_CONFORMANCE_DIR:-$HOME/.cache/braid-mcp-conformance-$CONFORMANCE_VERSION}"
if [ ! -f "$tool/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
  mkdir -p "$tool"
  (cd "$tool" && npm init -y >/dev/null && npm install --silent "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" glob)
fi
entry="$tool/node_modules/@modelcontextprotocol/conformance/dist/index.js"
# Node 20 has no fs.globSync: take it from npm `glob` instead (idempotent).
sed -i 's/import{existsSync as a,globSync as o,mkdtempSync as s,promises as c,readFileSync as l}from"fs";/import{existsSync as a,mkdtempSync as s,promises as c,readFileSync as l}from"fs";import{globSync as o}from"glob";/' "$entry"

"$BRAID" index datasets/helpcenter --index "$work/hc" >/dev/null
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
proxy_port="$(free_port)"
"$BRAID" token new --name conformance 2>"$work/token" >"$work/entry"
TOKEN="$(sed -n 's/^token: //p' "$work/token")"
# The default configuration: no allowed_origins, so a server on loopback accepts the proxy's
# localhost origin by default (crates/braid-server/src/origin.rs).
cp "$work/entry" "$work/braid.toml"
"$BRAID" serve --index "$work/hc" --config "$work/braid.toml" --bind 127.0.0.1:0 2>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening on" "$work/serve.log" && break; sleep 0.2; done
server_port="$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/serve.log")"
[ -n "$server_port" ] || { cat "$work/serve.log"; exit 1; }
TOKEN="$TOKEN" python3 scripts/mcp_auth_proxy.py "$proxy_port" "$server_port" &
pids+=($!)
for _ in $(seq 100); do
  python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $proxy_port), 1)" 2>/dev/null && break
  sleep 0.2
done
status=0
for scenario in server-initialize ping tools-list dns-rebinding-protection; do
  echo "-- conformance: $scenario"
  node "$entry" server --url "http://127.0.0.1:$proxy_port/mcp" --scenario "$scenario" 2>&1 | tee "$work/$scenario.out" | tail -n 8
  if ! grep -qE "Passed: [0-9]+/[0-9]+, 0 failed" "$work/$scenario.out"; then status=1; fi
done
exit $status
