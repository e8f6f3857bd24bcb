#!/bin/sh
# REST order entry on a replicated group: starts `matchbook-cluster` (three NATS servers
# with fsync always, three nodes) on loopback, drives the leader (n1) with
# matchbook-rest-load (place + cancel over keep-alive connections) at each connection
# count, RUNS times, sampling the two followers' lag meanwhile, then stops the cluster.
# Compare with benches/rest-bench.sh (the local journal) in the same sitting.
# Usage: benches/cluster-bench.sh [SECONDS] [RUNS] [CONNECTIONS...]
set -eu
SECONDS_PER_RUN=${1:-5}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
CONNECTIONS=${*:-"8 16 32 64"}
PORT=${PORT:-18290}
DIR=$(mktemp -d)
BIN=${BIN:-./target/release}
trap '"$BIN/matchbook-cluster" stop "$DIR/cluster" >/dev/null 2>&1 || true; rm -rf "$DIR"' EXIT
if [ "$BIN" = ./target/release ]; then
    cargo build --quiet --release -p matchbook-rest -p matchbook-bench
fi
"$BIN/matchbook-cluster" start "$DIR/cluster" "$BIN/matchbook-rest" "$PORT" >"$DIR/start.log"
KEY=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['key'])" "$DIR/cluster/keys.json")
FOLLOWERS="http://127.0.0.1:$((PORT + 2)) http://127.0.0.1:$((PORT + 4))"
for c in $CONNECTIONS; do
    for r in $(seq "$RUNS"); do
        python3 benches/follower_lag.py "$SECONDS_PER_RUN" $FOLLOWERS >"$DIR/lag.txt" &
        SAMPLER=$!
        "$BIN/matchbook-rest-load" --url 127.0.0.1:$PORT --key "$KEY" \
            --connections "$c" --seconds "$SECONDS_PER_RUN" --warmup 1
        wait $SAMPLER
        cat "$DIR/lag.txt"
    done
done
