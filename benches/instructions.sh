#!/usr/bin/env bash
# Instructions per measured command, counted by callgrind: a figure that does not move
# with the machine's load, to compare builds where the timings' noise (this 2-core VM swings
# 10-30 % between runs) hides a change of a few percent. Only the commands the harness times
# are counted (benches/examples/timed_commands.rs), on every profile's workload of N
# commands (seed 1), for each venue named. Instructions are not time: a change that saves
# cache misses shows in the timings only, so quote both.
# Usage: benches/instructions.sh [N] [VENUES] [PROFILES]
#   defaults: N=200000, VENUES="matchbook matchbook-balances floor",
#   PROFILES="exchange-core deep-book cancel-heavy price-jumps many-markets"
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200000}"
venues="${2:-matchbook matchbook-balances floor}"
profiles="${3:-exchange-core deep-book cancel-heavy price-jumps many-markets}"
command -v valgrind >/dev/null || { echo "instructions.sh needs valgrind" >&2; exit 2; }
cargo build --quiet --release -p matchbook-bench --bin matchbook-bench --example timed_commands
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
printf '%-14s %-20s %12s\n' profile venue instr/command
for profile in $profiles; do
    workload="$out/$profile.txt"
    target/release/matchbook-bench generate --profile "$profile" --seed 1 --n "$n" \
        --out "$workload" 2>/dev/null
    for venue in $venues; do
        total=$(valgrind --tool=callgrind --callgrind-out-file="$out/cg" --collect-atstart=no \
            --toggle-collect='timed_commands::measured' \
            target/release/examples/timed_commands "$workload" "$venue" 1 2>&1 \
            | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
        awk -v p="$profile" -v v="$venue" -v t="$total" -v n="$n" \
            'BEGIN { printf "%-14s %-20s %12.0f\n", p, v, t / n }'
    done
done
