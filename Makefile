# nicsim developer entry points. `make run` and `make test` work on a fresh
# clone with Rust (cargo) and Python 3.9+ installed.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SCENARIO ?= scenarios/gbe-mtu1500-bulk.toml
NETPIPE ?= scenarios/gbe-netpipe.toml

.PHONY: run test bench lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

## run: build and install nicsim into .venv, run the default bulk scenario,
## then a NetPIPE curve (1 B to 8 MiB over GbE) with its figures
run: $(BIN)/python
	$(BIN)/pip install --quiet .
	$(BIN)/nicsim run $(SCENARIO) --out results/default --pcap results/default/pcap
	$(BIN)/nicsim run $(NETPIPE) --out results/netpipe
	@echo "NetPIPE curve: results/netpipe/netpipe-throughput.png (signature and saturation graphs next to it)"

## test: Rust tests, then the Python tests against the built native module
test: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	cargo test --workspace
	$(BIN)/pytest -q tests

## bench: the core's criterion benchmarks
bench:
	cargo bench -p nicsim-core

## lint: formatting and clippy, warnings are errors
lint:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
