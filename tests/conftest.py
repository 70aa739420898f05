"""Fixtures shared by every test scope.

Services run for real: in-process gRPC servers on Unix sockets in a private temp home
(or port 0 on loopback), real SQLite files, real Chroma. Each service package exposes
`start(settings, listen) -> (ServerHandle, on_stop)`, which these fixtures use.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.harness import start_service, subprocess_env  # noqa: F401 - the benches' and the tests' one copy
from mnemo.config import Settings, ensure_private_dirs, load_settings, with_overrides
from mnemo.grpc_client import open_channel
from tests.pg import postgres_database, postgres_dsn  # noqa: F401 - fixtures for every test

REPO_ROOT = Path(__file__).resolve().parents[1]
LOCOMO_DIR = REPO_ROOT.parent / "shared" / "data" / "locomo"


@pytest.fixture
def home() -> Iterator[Path]:
    """A private MNEMO_HOME. Short path under /tmp: Unix socket paths are limited to 107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="mnemo-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# Run a store test module on both backends: `pytestmark = [BOTH_BACKENDS]` (settings follows).
BOTH_BACKENDS = pytest.mark.parametrize("store_backend", ["sqlite", "postgres"])


@pytest.fixture
def store_backend() -> str:
    """The store backend `settings` selects; store suites parametrize it (BOTH_BACKENDS).
    TEST_STORE_BACKEND=postgres runs every other test on PostgreSQL too."""
    return os.environ.get("TEST_STORE_BACKEND", "sqlite")


def make_settings(home: Path, **overrides: Any) -> Settings:
    """Settings for tests: the fast deterministic embedder, short intervals, no config.toml leakage."""
    base = load_settings({"home": str(home)}, environ={})
    ensure_private_dirs(base)
    return with_overrides(base, embedder="hash", vector_poll_ms=50, log_level="warning", **overrides)


@pytest.fixture
def settings(home: Path, store_backend: str, request: pytest.FixtureRequest) -> Settings:
    """make_settings in the test's home, on the store backend `store_backend` selects."""
    base = make_settings(home)
    if store_backend == "postgres":  # a fresh database of the session's PostgreSQL (tests/pg.py)
        base = with_overrides(base, store_backend="postgres", store_dsn=request.getfixturevalue("postgres_database"))
    return base


def _serving(name: str, settings: Settings):
    handle, on_stop = start_service(name, settings)
    yield handle
    # A short grace lets in-flight handlers finish before the core closes its resources.
    handle.stop(0.5)
    on_stop()


def _stub(handle, module: str, stub_class: str):
    stubs = importlib.import_module(f"mnemo.v1.{module}_pb2_grpc")
    channel = open_channel(handle.address)
    yield getattr(stubs, stub_class)(channel)
    channel.close()


@pytest.fixture
def store_server(settings: Settings):
    yield from _serving("store", settings)


@pytest.fixture
def vector_server(settings: Settings, store_server):
    yield from _serving("vector", settings)


@pytest.fixture
def search_server(settings: Settings, store_server, vector_server):
    yield from _serving("search", settings)


@pytest.fixture
def store_stub(store_server):
    yield from _stub(store_server, "store", "StoreServiceStub")


@pytest.fixture
def vector_stub(vector_server):
    yield from _stub(vector_server, "vector", "VectorServiceStub")


@pytest.fixture
def search_stub(search_server):
    yield from _stub(search_server, "search", "SearchServiceStub")


@pytest.fixture
def stack(store_server, vector_server, search_server, settings):
    """All three services on their default sockets in `settings.home`: a gateway or hook
    started with MNEMO_HOME=settings.home finds them healthy and starts nothing."""
    return settings


def processes_of(home: Path) -> Iterator[tuple[int, list[bytes]]]:
    """(pid, argv) of every process whose environment has MNEMO_HOME=home: what a test
    started there, found through Linux's /proc whether or not it wrote a pid file."""
    marker = f"MNEMO_HOME={home}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if marker in environ:
            yield int(entry.name), argv


def pytest_configure(config):
    # Registered beside the hook that sets it (--strict-markers refuses an unregistered marker).
    config.addinivalue_line("markers", "postgres: uses the embedded PostgreSQL server (set by tests/conftest.py)")


def pytest_collection_modifyitems(config, items):
    """Every test carries the marker of its scope folder (unit, service, e2e), so `-m unit` works,
    and `postgres` when it runs on the embedded PostgreSQL, so `make test-fast` can leave those out
    (hypothesis's own plugin marks its property tests `hypothesis` the same way)."""
    for item in items:
        parts = Path(str(item.fspath)).relative_to(REPO_ROOT / "tests").parts
        if parts and parts[0] in ("unit", "service", "e2e"):
            item.add_marker(getattr(pytest.mark, parts[0]))
        if _on_postgres(item):
            item.add_marker(pytest.mark.postgres)


def _on_postgres(item) -> bool:
    """A test that starts or uses the session's PostgreSQL: a postgres fixture of its own, or the
    `postgres` case of a backend parametrization (store_backend, whose `settings` asks for the
    database, or a module's own store fixture parametrized over the backends)."""
    callspec = getattr(item, "callspec", None)
    on_backend = callspec is not None and "postgres" in callspec.params.values()
    return on_backend or not {"postgres_dsn", "postgres_database"}.isdisjoint(item.fixturenames)


def add_observation(store_stub, project: str = "alpha", session: str = "s1", **fields) -> int:
    """Store one observation through the real StoreService; returns its id."""
    from mnemo.v1 import common_pb2, store_pb2

    fields.setdefault("type", "discovery")
    obs = common_pb2.Observation(memory_session_id=session, project=project, **fields)
    return store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[obs])).ids[0]


def sync_vectors(vector_stub, timeout_s: float = 30.0) -> None:
    """Apply the store's pending changes to the vector index until it has no lag (bounded)."""
    import time

    from mnemo.v1 import vector_pb2

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        vector_stub.Sync(vector_pb2.VectorSyncRequest())
        if vector_stub.Status(vector_pb2.VectorStatusRequest()).lag <= 0:
            return
    raise AssertionError("vector index did not catch up")


def wait_for(predicate, timeout: float, what: str):
    """Poll `predicate` until it returns something truthy (bounded); return that value."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def read_rows(db: Path, sql: str) -> list[sqlite3.Row]:
    """Rows of a store's SQLite file, opened read-only (beside the running store, which owns writes)."""
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()
