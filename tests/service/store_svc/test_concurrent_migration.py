"""Two stores starting at once on one fresh database (the replicas of docs/server.md) migrate
it one at a time: both start, and the schema is applied exactly once. Real processes on a real
SQLite file and a real PostgreSQL database (tests/pg.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from store_svc.schema import LATEST_VERSION
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.service, pytest.mark.slow]

ROUNDS = 4
OPEN_SQLITE = "import sys; from store_svc.core import Store; Store(sys.argv[1]).close(); print('ok')"
OPEN_PG = ("import sys; from store_svc.core import Store; from store_svc.pg.backend import PgBackend; "
           "Store(backend=PgBackend(sys.argv[1])).close(); print('ok')")


def _start_together(code: str, target: str, count: int = 2) -> list[subprocess.CompletedProcess[str]]:
    """`count` interpreters that import first, then wait on one shared line of stdin to open the
    store at the same moment (imports take longer than a migration)."""
    gate = f"import sys; sys.stdin.readline(); {code.removeprefix('import sys; ')}"
    procs = [subprocess.Popen([sys.executable, "-c", gate, target], cwd=REPO_ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(count)]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def test_two_stores_migrate_one_fresh_sqlite_file_together(tmp_path):
    import sqlite3

    for round_ in range(ROUNDS):
        path = tmp_path / f"team-{round_}.db"
        for done in _start_together(OPEN_SQLITE, str(path)):
            assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
        with sqlite3.connect(path) as conn:
            versions = [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]
        assert versions == list(range(1, LATEST_VERSION + 1))


def test_two_stores_migrate_one_fresh_postgres_database_together(postgres_dsn):
    import psycopg

    from tests.pg import create_database, drop_database

    for _ in range(ROUNDS):
        dsn = create_database(postgres_dsn)
        try:
            for done in _start_together(OPEN_PG, dsn):
                assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
            with psycopg.connect(dsn) as conn:
                versions = [row[0] for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]
            assert versions == list(range(1, LATEST_VERSION + 1))
        finally:
            drop_database(postgres_dsn, dsn)
