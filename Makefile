# nicsim developer entry points. `make run` and `make test` work on a fresh
# clone with Rust (cargo) and Python 3.9+ installed: what else they need
# (python3-venv for the virtual environment; tshark, tcpdump, iproute2 and
# ethtool for the tests) scripts/system-deps installs with apt-get when this
# user may (root or passwordless sudo), or it says what to install and the
# target fails.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SCENARIO ?= scenarios/gbe-mtu1500-bulk.toml
NETPIPE ?= scenarios/gbe-netpipe.toml

.PHONY: run test bench lint fuzz soak docs reproduce

$(BIN)/python:
	PYTHON=$(PYTHON) scripts/system-deps venv
	$(PYTHON) -m venv $(VENV)

## run: build and install nicsim into .venv, run the default bulk scenario,
## then a NetPIPE curve (1 B to 8 MiB over GbE) with its figures
run: $(BIN)/python
	$(BIN)/pip install --quiet .
	$(BIN)/nicsim run $(SCENARIO) --out results/default --pcap results/default/pcap
	$(BIN)/nicsim run $(NETPIPE) --out results/netpipe
	@echo "NetPIPE curve: results/netpipe/netpipe-throughput.png (signature and saturation graphs next to it)"

## test: install the system tools the tests need (scripts/system-deps), then
## the Rust tests, then the Python tests against the built native module
test: $(BIN)/python
	scripts/system-deps test
	$(BIN)/pip install --quiet -e '.[test]'
	cargo test --workspace
	$(BIN)/pytest -q tests

## reproduce: every study (nicsim reproduce all; cached runs are reused):
## results/reproductions/<study>/report/ and results/reproductions/all/
reproduce: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	$(BIN)/nicsim reproduce all

## docs: regenerate docs/validation.md and its figure from what
## `make reproduce` computed, so the page never drifts from the code
docs: reproduce
	$(BIN)/python -m nicsim.studies.summary results/reproductions/all/comparison.csv docs

## bench: the core's criterion benchmarks, then the end-to-end benchmarks
## (nicsim bench: slowdown, frames and events per second, peak memory;
## results/bench/). BENCH_ARGS=--quick for a fast check of the command.
BENCH_ARGS ?=
bench: $(BIN)/python
	$(BIN)/pip install --quiet .
	cargo bench -p nicsim-core
	$(BIN)/nicsim bench $(BENCH_ARGS) --out results/bench

## lint: formatting and clippy, warnings are errors; no import cycle among
## the core's modules (scripts/module_cycles.py; also a test)
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	python3 scripts/module_cycles.py

## fuzz: run each cargo-fuzz target for FUZZ_SECONDS (default 60) from the
## checked-in corpus, with debug assertions; needs nightly Rust and cargo-fuzz
## (`cargo install cargo-fuzz`) and is skipped without them. New inputs go to
## fuzz/work/, crashes to fuzz/artifacts/.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := scenario units tso wire_monitor link_channel pcap coalesce
fuzz:
	@if cargo +nightly fuzz --version >/dev/null 2>&1; then \
		for t in $(FUZZ_TARGETS); do \
			mkdir -p fuzz/work/$$t; \
			echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
			cargo +nightly fuzz run -a $$t fuzz/work/$$t fuzz/corpus/$$t -- \
				-max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -print_final_stats=1 || exit 1; \
		done; \
	else \
		echo "make fuzz: skipped (needs 'cargo +nightly' and cargo-fuzz)"; \
	fi

## soak: 10^8 events in one run with memory sampled (minutes; not in CI)
soak:
	cargo run --release -p nicsim-core --example soak
