#!/bin/sh
# REST order-entry benchmark: starts the release exchange on loopback with a fresh data
# directory, drives it with matchbook-rest-load (place + cancel over keep-alive
# connections) at each connection count, RUNS times, then stops it with SIGTERM.
# Usage: benches/rest-bench.sh [SECONDS] [RUNS] [CONNECTIONS...]
# Environment: JOURNAL_SYNC=never runs without fsync (a configuration file with one funded
# holder and its key instead of the demo); BIN=DIR takes the server and load generator from
# DIR (another build, for before/after comparisons) instead of building them here.
set -eu
SECONDS_PER_RUN=${1:-5}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
CONNECTIONS=${*:-"8 16 32 64"}
PORT=${PORT:-18190}
DIR=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DIR"' EXIT
if [ -z "${BIN:-}" ]; then
    cargo build --quiet --release -p matchbook-rest -p matchbook-bench
    BIN=./target/release
fi
# The keys file may not live in the data directory (the server refuses to overwrite it).
if [ "${JOURNAL_SYNC:-every-batch}" = "never" ]; then
    KEY=bench-trader-key
    cat > "$DIR/bench.toml" <<EOF
[server]
journal_sync = "never"
rate_limit_per_minute = 1000000000
[[holders]]
name = "bench"
[[holders.accounts]]
name = "main"
deposits = { BTC = "1000", EUR = "1000000000" }
[[keys]]
digest = "$(printf %s "$KEY" | sha256sum | cut -d' ' -f1)"
holder = "bench"
account = "main"
scopes = ["TRADE", "READ_ONLY"]
EOF
    "$BIN/matchbook-rest" --config "$DIR/bench.toml" --bind 127.0.0.1:$PORT \
        --admin-bind 127.0.0.1:$((PORT + 1)) --data-dir "$DIR/data" >/dev/null 2>"$DIR/server.log" &
    SERVER=$!
    for _ in $(seq 50); do grep -q listening "$DIR/server.log" 2>/dev/null && break; sleep 0.1; done
else
    "$BIN/matchbook-rest" --bind 127.0.0.1:$PORT --admin-bind 127.0.0.1:$((PORT + 1)) \
        --data-dir "$DIR/data" --keys-out "$DIR/keys.json" >/dev/null 2>"$DIR/server.log" &
    SERVER=$!
    for _ in $(seq 50); do [ -s "$DIR/keys.json" ] && break; sleep 0.1; done
    KEY=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['key'])" "$DIR/keys.json")
fi
for c in $CONNECTIONS; do
    for r in $(seq "$RUNS"); do
        "$BIN/matchbook-rest-load" --url 127.0.0.1:$PORT --key "$KEY" \
            --connections "$c" --seconds "$SECONDS_PER_RUN" --warmup 1
    done
done
kill -TERM $SERVER
wait $SERVER
