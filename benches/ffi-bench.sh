#!/usr/bin/env bash
# The C ABI benchmark: call overhead (the same place+cancel workload through the C ABI
# from a C program and directly in Rust, one after the other in one sitting) and the
# thread-safe handle's throughput with 1, 2 and 4 producer threads.
# Usage: benches/ffi-bench.sh [PAIRS]   (default 1,000,000 place+cancel pairs)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-1000000}"
cargo build --quiet --release -p matchbook-ffi
cargo build --quiet --release -p matchbook-bench --bin matchbook-ffi-direct
bench="$(mktemp -d)/ffi_bench"
gcc -std=c11 -O2 -Wall -Wextra -Werror -I ffi/include ffi/bench/ffi_bench.c \
    target/release/libmatchbook_ffi.a -lpthread -ldl -lm -o "$bench"
for events in read drop; do
    for _ in 1 2; do
        target/release/matchbook-ffi-direct "$pairs" "$events"
        "$bench" engine "$pairs" "$events"
    done
done
for threads in 1 2 4; do
    "$bench" runtime "$threads" $((pairs / 5))
done
