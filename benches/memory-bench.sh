#!/bin/sh
# Memory of a node holding ORDERS resting orders: starts the release exchange (journal
# without fsync) on loopback with a fresh data directory, reads the server's resident
# memory (VmRSS) once it listens, fills one book with matchbook-rest-book, reads VmRSS and
# its peak (VmHWM) again, then stops it with SIGTERM. No snapshot is written while it runs
# (--snapshot-every 0): a snapshot's copy of the state would be in the figures.
# Usage: benches/memory-bench.sh [ORDERS]
# Environment: BIN=DIR takes the server from DIR (another build, for before/after
# comparisons); the filler always comes from this checkout's release build.
set -eu
ORDERS=${1:-1000000}
PORT=${PORT:-18290}
DIR=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DIR"' EXIT
cargo build --quiet --release -p matchbook-rest -p matchbook-bench
BIN=${BIN:-./target/release}
KEY=bench-trader-key
cat > "$DIR/bench.toml" <<CONFIG
[server]
max_open_orders = $((ORDERS + 1000))
journal_sync = "never"
rate_limit_per_minute = 1000000000
[[holders]]
name = "bench"
[[holders.accounts]]
name = "main"
deposits = { EUR = "1000000000" }
[[keys]]
digest = "$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)"
holder = "bench"
account = "main"
scopes = ["TRADE", "READ_ONLY"]
CONFIG
"$BIN/matchbook-rest" --config "$DIR/bench.toml" --bind 127.0.0.1:$PORT \
    --admin-bind 127.0.0.1:$((PORT + 1)) --data-dir "$DIR/data" --snapshot-every 0 \
    >/dev/null 2>"$DIR/server.log" &
SERVER=$!
for _ in $(seq 100); do grep -q listening "$DIR/server.log" 2>/dev/null && break; sleep 0.1; done
kib() { awk -v k="$1" '$1 == k":" { print $2 }' /proc/$SERVER/status; }
BEFORE=$(kib VmRSS)
./target/release/matchbook-rest-book --url 127.0.0.1:$PORT --key "$KEY" --orders "$ORDERS"
AFTER=$(kib VmRSS)
PEAK=$(kib VmHWM)
echo "orders $ORDERS rss_start_kib $BEFORE rss_kib $AFTER hwm_kib $PEAK per_order_bytes $(( (AFTER - BEFORE) * 1024 / ORDERS ))"
kill -TERM $SERVER
wait $SERVER
