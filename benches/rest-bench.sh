#!/bin/sh
# REST order-entry benchmark: starts the release exchange on loopback with a fresh data
# directory, drives it with matchbook-rest-load (place + cancel over keep-alive
# connections) at each connection count, RUNS times, then stops it with SIGTERM.
# Usage: benches/rest-bench.sh [SECONDS] [RUNS] [CONNECTIONS...]
set -eu
SECONDS_PER_RUN=${1:-5}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
CONNECTIONS=${*:-"8 16 32 64"}
PORT=${PORT:-18190}
DIR=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$DIR"' EXIT
cargo build --quiet --release -p matchbook-rest -p matchbook-bench
./target/release/matchbook-rest --bind 127.0.0.1:$PORT --admin-bind 127.0.0.1:$((PORT + 1)) \
    --data-dir "$DIR" --keys-out "$DIR/keys.json" >/dev/null 2>"$DIR/server.log" &
SERVER=$!
for _ in $(seq 50); do [ -s "$DIR/keys.json" ] && break; sleep 0.1; done
KEY=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['key'])" "$DIR/keys.json")
for c in $CONNECTIONS; do
    for r in $(seq "$RUNS"); do
        ./target/release/matchbook-rest-load --url 127.0.0.1:$PORT --key "$KEY" \
            --connections "$c" --seconds "$SECONDS_PER_RUN" --warmup 1
    done
done
kill -TERM $SERVER
wait $SERVER
