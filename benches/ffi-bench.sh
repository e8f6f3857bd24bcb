#!/usr/bin/env bash
# The C ABI benchmark: call overhead (the same place+cancel workload through the C ABI
# from a C program and directly in Rust, one after the other in one sitting), what the
# one-thread-at-a-time check costs a call, and the thread-safe handle's throughput with 1,
# 2 and 4 producer threads.
# With ZIG set to a zig command (`make ffi-bench` installs one), a third build links the C
# program and the library with link-time optimisation across the languages: the library
# as LLVM bitcode (`-Clinker-plugin-lto`), compiled and linked by zig's clang, whose LLVM
# must be the one rustc uses (`rustc -vV`). Debian's newest clang (19) cannot read it.
# Usage: [ZIG=zig] benches/ffi-bench.sh [PAIRS]   (default 1,000,000 place+cancel pairs)
set -euo pipefail
cd "$(dirname "$0")/.."
pairs="${1:-1000000}"
cargo build --quiet --release -p matchbook-ffi
cargo build --quiet --release -p matchbook-bench --bin matchbook-ffi-direct
out="$(mktemp -d)"
bench="$out/ffi_bench"
gcc -std=c11 -O2 -Wall -Wextra -Werror -I ffi/include ffi/bench/ffi_bench.c \
    target/release/libmatchbook_ffi.a -lpthread -ldl -lm -o "$bench"
lto=""
if [ -n "${ZIG:-}" ]; then
    RUSTFLAGS="-Clinker-plugin-lto" CARGO_TARGET_DIR=target/lto \
        cargo build --quiet --release -p matchbook-ffi
    lto="$out/ffi_bench_lto"
    $ZIG cc -std=c11 -O2 -flto -Wall -Wextra -Werror -I ffi/include ffi/bench/ffi_bench.c \
        target/lto/release/libmatchbook_ffi.a -lunwind -lpthread -ldl -lm -o "$lto"
fi
for events in read drop; do
    for _ in 1 2; do
        target/release/matchbook-ffi-direct "$pairs" "$events"
        "$bench" engine "$pairs" "$events"
        if [ -n "$lto" ]; then
            echo "(cross-language LTO)"
            "$lto" engine "$pairs" "$events"
        fi
    done
done
# The thread check's cost, the two engines interleaved block by block (a noisy host's
# spells fall on both alike).
"$bench" checks "$pairs"
if [ -n "$lto" ]; then
    echo "(cross-language LTO)"
    "$lto" checks "$pairs"
fi
for threads in 1 2 4; do
    "$bench" runtime "$threads" $((pairs / 5))
done
