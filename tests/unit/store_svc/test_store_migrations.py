"""Migrations frozen as text: what they build equals what the code before the freeze built, a
released migration's text never changes, and a malformed migration folder is refused by name."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from store_svc import migrations, schema
from tests.unit.store_svc.schema_snapshot import (
    POSTGRES_FIXTURE,
    SQLITE_FIXTURE,
    postgres_snapshot,
    sqlite_snapshot,
)

pytestmark = pytest.mark.unit

# The snapshots in fixtures/ are of a database migrated to this version by the pre-freeze code.
SNAPSHOT_VERSION = 9

# sha256 of each released migration file. A migration that has run somewhere is never edited: a
# change of schema is a new migration. Add a line here when a migration is released.
RELEASED = {
    "sqlite/0001_core.sql": "4590f3bdb0ff29342d025992f3f1e36a45739e98748132690dcc0f1fb855723e",
    "sqlite/0002_full_text.sql": "c7cf0410056c40010691b0e8cdc60151578689bed64df263029be2599bfb922c",
    "sqlite/0003_tool_uses.sql": "9672f1947a7afa7c2bea99ddbafaef45b81d9d82b649061492fa90c24dfaf479",
    "sqlite/0004_state.sql": "b88c26f9ec8454fc7e1ef0b90afb404c3407614446b4f7ff10a7c4c50850f241",
    "sqlite/0005_marked_wrong.sql": "d2a6afb882642bcd0745f7cd6094f3344c9cf09f5f9a85ad95f1a7d2584c546f",
    "sqlite/0006_leases.sql": "d31029a448067236fb32d480c38230ea9517ac7efa34dc045f00742e68d170ec",
    "sqlite/0007_access.sql": "17ed0f696877228e2b4a7906e7028eae95134fcb75d65b69b1c2b27fa443f1ff",
    "sqlite/0008_context.sql": "430add785fa5654c4bad979de25293ccfd8761e2e7b36b556e6b5b38bda9bb15",
    "sqlite/0009_term_stats.sql": "0f701b2d63acd541f62ad12671dd866428947c75e17d06843473aa701897a8ac",
    "postgres/0001_core.sql": "c3265fe7cffafb6c70abeef80e628ad55f031acac942d1bb780ca37ccbe10c31",
    "postgres/0002_full_text.sql": "ebe3ed232fda6378df98e10f04ef38edd00f1a83f7bda40c2e6f693e67dc3aaa",
    "postgres/0003_tool_uses.sql": "1485df7c42ee2fb0cc9e138b32fe44f02ba9c376648285ef88e7e06b3fa2505a",
    "postgres/0004_state.sql": "19c01ebeb348658929f5b09ea9fe706a68858f5261b10a3e1afa8daf354b9152",
    "postgres/0005_marked_wrong.sql": "8024f89f5780ec6bbd429308453478537694163740be68c4804936ab35e46aff",
    "postgres/0006_leases.sql": "d31029a448067236fb32d480c38230ea9517ac7efa34dc045f00742e68d170ec",
    "postgres/0007_access.sql": "c9404d4d895c22d0003a20af3059adc6c1abb6f9dfe6b4acccc467ce26057466",
    "postgres/0008_context.sql": "c2f171ee0688534f5ea7708380690b7be0a6f5f80036d9289abfc0b586c2de8a",
    "postgres/0009_term_stats.sql": "8c4b664e13d88f0ef68f674d292c9dca8850c9ab3dae022e3a9d0284cfa23dfd",
    "sqlite/0010_ids.sql": "e33b01b91cd19f0b6f66da8c88a2961a7b3946660f8f6a9ffd4639da1343aa44",
    "postgres/0010_ids.sql": "161c97d912547014cfe82359ac1cba62fbe4da4c2189bbf51dd188f74b78a234",
    "sqlite/0011_external_ids.sql": "1199436fe25481e7d31ac8c45c923f82a8bfe2eb9aa55692909791ad649cfdb9",
    "postgres/0011_external_ids.sql": "1199436fe25481e7d31ac8c45c923f82a8bfe2eb9aa55692909791ad649cfdb9",
    "sqlite/0012_corpus_projects.sql": "4d9dd80f67af3a4a66391913d786421eb2bc780ce7e18d223b8a1ff8708a9866",
    "postgres/0012_corpus_projects.sql": "f3a4829167f7655fca4f3c42d8cab40302b01c4b6e19a33e11e32acc3c6fb107",
    "postgres/0013_sqlite_ids.sql": "193bf7e2781e315ef179d886386e9cd07fe2ee528bddf8e67eaddb6d665f68c7",
    "sqlite/0013_sqlite_ids.sql": "ef5d9bff28cd911a0a7169906acb4dba37a22b3deb5d38372677ea67fac41c17",
    "sqlite/0014_project_corpora_unprimed.sql": "100405cda89d15d9bfbd901f3456f1febac5f265b984d15e91db54891ed048b8",
    "postgres/0014_project_corpora_unprimed.sql": "100405cda89d15d9bfbd901f3456f1febac5f265b984d15e91db54891ed048b8",
    "sqlite/0015_session_projects.sql": "2f53883e2ca7df934200a59de6c5b85a90bf156bd05a3a9162f1360756391c2e",
    "postgres/0015_session_projects.sql": "ce4b2efc8802159acc7a4824c613704d0c5177378a27f4c0d1f59372edddc6fa",
}


def _digest(relative: str) -> str:
    return hashlib.sha256((migrations.FOLDER / relative).read_bytes()).hexdigest()


@pytest.mark.parametrize("relative", sorted(RELEASED))
def test_a_released_migration_is_never_edited(relative):
    assert _digest(relative) == RELEASED[relative], f"{relative} changed: write a new migration instead"


def test_both_backends_have_the_same_versions_and_names():
    sqlite, postgres = migrations.frozen("sqlite"), migrations.frozen("postgres")
    assert [m[:2] for m in sqlite] == [m[:2] for m in postgres]
    assert sqlite == schema.MIGRATIONS, "a migration is a file in store_svc/migrations/<backend>/, not code"


def test_the_frozen_sqlite_text_builds_the_schema_the_helpers_built(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:SNAPSHOT_VERSION])
    conn = schema.connect(tmp_path / "m.db")
    try:
        assert schema.migrate(conn) == SNAPSHOT_VERSION
        assert sqlite_snapshot(conn) == json.loads(SQLITE_FIXTURE.read_text())
    finally:
        conn.close()


def test_the_frozen_postgres_text_builds_the_schema_the_helpers_built(postgres_database, monkeypatch):
    import psycopg

    from store_svc.pg import schema as pg_schema

    monkeypatch.setattr(pg_schema, "MIGRATIONS", pg_schema.MIGRATIONS[:SNAPSHOT_VERSION])
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        assert pg_schema.migrate(conn) == SNAPSHOT_VERSION
        assert postgres_snapshot(conn) == json.loads(POSTGRES_FIXTURE.read_text())


def _folder(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "sqlite").mkdir()
    for name, text in files.items():
        (tmp_path / "sqlite" / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"0001_a.sql": "-- a\nSELECT 1;", "0003_c.sql": "-- c\nSELECT 1;"}, "without a gap, not [1, 3]"),
        ({"one_a.sql": "-- a\nSELECT 1;"}, "one_a.sql: a migration file is named NNNN_slug.sql"),
        ({"0001_a.sql": "SELECT 1;"}, "0001_a.sql: the first line must be '-- <name of the migration>'"),
    ],
)
def test_a_malformed_migration_folder_is_refused_naming_the_file_and_the_rule(tmp_path, files, message):
    with pytest.raises(ValueError) as raised:
        migrations.frozen("sqlite", _folder(tmp_path, files))
    assert message in str(raised.value)


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match="backend must be one of sqlite, postgres, not 'mysql'"):
        migrations.frozen("mysql")
