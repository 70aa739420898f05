"""The store's migrations, frozen as SQL text: one file per version and backend.

A migration that has run on someone's database never changes, so each one is the literal SQL it
ran, not SQL built from helpers that later code may change (a helper edited for migration 12
would silently rewrite what migration 2 means to a fresh database). `sqlite/` holds what
store_svc.schema applies, `postgres/` what store_svc.pg.schema applies; both are numbered alike,
so `schema_version` means the same on either backend.

A file is `NNNN_slug.sql`; its first line is `-- <name>`, the name recorded in schema_version.
A new migration is a new file with the next number in both folders (a file holding only its
name line where one backend has nothing to do).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).parent
BACKENDS = ("sqlite", "postgres")

# (version, name, SQL)
Migration = tuple[int, str, str]


def frozen(backend: str, folder: Path = FOLDER) -> tuple[Migration, ...]:
    """Every migration of `backend` (one of BACKENDS) in version order, from `folder`/`backend`."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    found = tuple(_read(path) for path in sorted((folder / backend).glob("*.sql")))
    versions = [version for version, _, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise ValueError(f"migrations/{backend}: versions must run 1, 2, 3... without a gap, not {versions}")
    return found


def _read(path: Path) -> Migration:
    number, _, _ = path.name.partition("_")
    if not number.isdigit():
        raise ValueError(f"{path.name}: a migration file is named NNNN_slug.sql")
    header, _, sql = path.read_text(encoding="utf-8").partition("\n")
    if not header.startswith("-- ") or not header[3:].strip():
        raise ValueError(f"{path.name}: the first line must be '-- <name of the migration>'")
    return int(number), header[3:].strip(), sql
