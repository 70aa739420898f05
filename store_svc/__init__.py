"""store_svc: the system of record (SQLite in WAL mode, FTS5 indexes, a change feed)."""
