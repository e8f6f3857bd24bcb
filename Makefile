# matchbook: every command a developer or CI needs.
#   make run    - the main job: the REST exchange on 127.0.0.1:8080 with the embedded demo (data in ./data)
#   make test   - everything CI runs: formatting, lints, every test
#   make bench  - criterion benches and the latency harness (figures for BENCHMARKS.md)
#   make rest-bench - REST order entry and cancel over loopback (figures for BENCHMARKS.md)
#   make ffi-bench  - C ABI call overhead and thread-safe handle throughput (BENCHMARKS.md)
#   make python-bench - Python order entry per call and in batches (BENCHMARKS.md)

CARGO ?= cargo
BENCH_N ?= 2000000

.PHONY: all run test fmt-check lint unit ccxt python python-bench soak bench latency rest-bench ffi-bench clean

all: test

run:
	$(CARGO) run --release -p matchbook-rest

test: fmt-check lint unit ccxt python

fmt-check:
	$(CARGO) fmt --all --check

lint:
	$(CARGO) clippy --workspace --all-targets -- -D warnings

unit:
	$(CARGO) test --workspace

# One Python venv made here for the ccxt client tests and the Python package.
VENV ?= .venv
$(VENV)/ready: rest/tests/ccxt/requirements.txt python/requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check \
		-r rest/tests/ccxt/requirements.txt -r python/requirements-dev.txt
	touch $@

ccxt: $(VENV)/ready
	$(CARGO) build --profile test -p matchbook-rest
	MATCHBOOK_REST_BIN=target/debug/matchbook-rest $(VENV)/bin/python -m pytest -q -p no:cacheprovider rest/tests/ccxt

# The Python package: built by maturin into the venv (profile `python`: optimised, a
# library), then its tests, the stub check, the docstring examples and the backtest example.
python: $(VENV)/ready
	cd python && VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		maturin develop --quiet --profile python
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider python/tests

# Python order entry per call and in batches (BENCHMARKS.md), on a release build.
python-bench: $(VENV)/ready
	cd python && VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		maturin develop --quiet --release
	$(VENV)/bin/python python/bench/throughput.py 200000

bench: latency
	$(CARGO) bench -p matchbook-bench --bench engine

latency:
	$(CARGO) build --release -p matchbook-bench
	for profile in exchange-core deep-book; do for balances in off on; do \
		./target/release/matchbook-bench latency --profile $$profile --balances $$balances --n $(BENCH_N) --runs 5 || exit 1; \
	done; done

# Crash recovery with many more SIGKILL moments than `make test` runs.
soak:
	MATCHBOOK_CRASH_SEEDS=$$(seq -s, 1 40) $(CARGO) test --release -p matchbook-rest --test crash -- --nocapture

# REST order entry over loopback (BENCHMARKS.md): place + cancel, 5 s x 3 runs per load.
rest-bench:
	benches/rest-bench.sh 5 3 8 16 32 64

# C ABI: the same workload through the C ABI and in Rust; producers on the runtime handle.
ffi-bench:
	benches/ffi-bench.sh 1000000

clean:
	$(CARGO) clean
