#!/usr/bin/env bash
# API conformance: schemathesis against both listeners of a fresh demo exchange, each held
# to its own /openapi.json with a key of the right kind (a trading key on the public
# listener, the admin key on the admin one). Seeded and bounded. Every check runs but
# `positive_data_acceptance`: the server rightly refuses some schema-valid requests on
# rules a schema cannot state (a 30-day window, funds, an unknown instrument code).
# No 5xx, responses and statuses as documented, schema-violating input refused with 4xx,
# authentication not ignored. Cross-account isolation is proven by rest/tests/it/orders/.
set -euo pipefail
BIN=${MATCHBOOK_REST_BIN:?the matchbook-rest binary}
ST=${SCHEMATHESIS:?the schemathesis command}
EXAMPLES=${CONFORMANCE_EXAMPLES:-15}
WORK=$(mktemp -d)
"$BIN" --bind 127.0.0.1:0 --admin-bind 127.0.0.1:0 --data-dir "$WORK/data" \
	--keys-out "$WORK/keys.json" > "$WORK/server.out" 2> "$WORK/server.err" &
PID=$!
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$WORK"' EXIT
for _ in $(seq 1 200); do
	grep -q "exchange on" "$WORK/server.out" 2>/dev/null && break
	kill -0 $PID 2>/dev/null || { cat "$WORK/server.err"; exit 1; }
	sleep 0.05
done
line=$(grep "exchange on" "$WORK/server.out")
public=$(sed -n 's/.*exchange on \(http:[^ ]*\) .*/\1/p' <<< "$line")
admin=$(sed -n 's/.*(admin \(http:[^)]*\)).*/\1/p' <<< "$line")
key() { python3 -c "import json,sys; print(next(k['key'] for k in json.load(open(sys.argv[1])) if sys.argv[2] in k['scopes']))" "$WORK/keys.json" "$1"; }
run() {
	"$ST" run "$1/openapi.json" -H "Authorization: Bearer $2" --checks all \
		--exclude-checks positive_data_acceptance --max-examples "$EXAMPLES" --seed 1 \
		--workers 1 --no-color
}
run "$public" "$(key TRADE)"
run "$admin" "$(key ADMIN)"
# The metrics after that traffic, read by Prometheus's own parser (the venv's Python).
"$(dirname "$ST")/python" "$(dirname "$0")/metrics_check.py" "$admin" "$(key ADMIN)"
