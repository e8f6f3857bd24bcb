#!/bin/sh
# Stream fan-out benchmark: starts the release exchange on loopback (journal without fsync,
# two funded holders, connection limits raised for 1,000 sockets), then runs
# matchbook-stream-load at each subscriber count, RUNS times: order entry on BTC_EUR
# (a resting order taken by an immediate-or-cancel one, over one pair of HTTP connections)
# while the subscribers follow ORDER_BOOK and PRICE_TICKS.
# Usage: [DEPTH=N] benches/stream-bench.sh [SECONDS] [RUNS] [SUBSCRIBERS...]
# (DEPTH: the ORDER_BOOK subscriptions' depth; 0, the default, the whole book)
set -eu
SECONDS_PER_RUN=${1:-5}
RUNS=${2:-3}
shift 2 2>/dev/null || shift $#
SUBSCRIBERS=${*:-"0 1 100 1000"}
PORT=${PORT:-18290}
DIR=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; cat "$DIR/server.log" >&2 2>/dev/null; rm -rf "$DIR"' EXIT
if [ -z "${BIN:-}" ]; then
    cargo build --quiet --release -p matchbook-rest -p matchbook-bench
    BIN=./target/release
fi
digest() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
cat > "$DIR/bench.toml" <<CONF
[server]
journal_sync = "never"
rate_limit_per_minute = 1000000000
public_rate_limit_per_minute = 1000000000
max_connections = 4096
max_connections_per_address = 4096
stream_heartbeat_seconds = 1
[[holders]]
name = "maker"
[[holders.accounts]]
name = "main"
deposits = { BTC = "10000", EUR = "1000000000" }
[[holders]]
name = "taker"
[[holders.accounts]]
name = "main"
deposits = { BTC = "10000", EUR = "1000000000" }
[[keys]]
digest = "$(digest maker-key)"
holder = "maker"
account = "main"
scopes = ["TRADE"]
[[keys]]
digest = "$(digest taker-key)"
holder = "taker"
account = "main"
scopes = ["TRADE"]
CONF
"$BIN/matchbook-rest" --config "$DIR/bench.toml" --bind 127.0.0.1:$PORT \
    --admin-bind 127.0.0.1:$((PORT + 1)) --data-dir "$DIR/data" >/dev/null 2>"$DIR/server.log" &
SERVER=$!
for _ in $(seq 50); do grep -q listening "$DIR/server.log" 2>/dev/null && break; sleep 0.1; done
for s in $SUBSCRIBERS; do
    for r in $(seq "$RUNS"); do
        "$BIN/matchbook-stream-load" --url 127.0.0.1:$PORT --maker-key maker-key \
            --taker-key taker-key --subscribers "$s" --seconds "$SECONDS_PER_RUN" --warmup 1 \
            --depth "${DEPTH:-0}"
    done
done
kill -TERM $SERVER
wait $SERVER
