"""store_svc filters every text it keeps, identifiers and corpus fields included: whatever a
client sends, a <private> region reaches no row (checked in the database file itself)."""

from __future__ import annotations

import sqlite3

import pytest

from mnemo.config import Settings
from mnemo.v1 import common_pb2, store_pb2
from tests.conftest import BOTH_BACKENDS

pytestmark = [pytest.mark.service, BOTH_BACKENDS]

SECRET = "zqhiddenvalue"
PRIVATE = f"<private>{SECRET}</private>"


def database_text(settings: Settings) -> str:
    """Every value of every table, as text (SQLite file or PostgreSQL database)."""
    if settings.store_backend == "postgres":
        import psycopg

        with psycopg.connect(settings.store_dsn) as pg:
            tables = [r[0] for r in pg.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]
            return "\n".join(str(value) for table in tables for row in pg.execute(f'SELECT * FROM "{table}"'.encode())
                             for value in row if value is not None)
    path = settings.database
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return "\n".join(str(value) for table in tables for row in conn.execute(f'SELECT * FROM "{table}"')
                         for value in row if value is not None)
    finally:
        conn.close()


def test_identifiers_corpus_fields_and_work_state_keys_are_filtered(store_stub, settings):
    store_stub.UpsertSession(store_pb2.UpsertSessionRequest(
        content_session_id=f"sess-{PRIVATE}", project=f"proj{PRIVATE}", custom_title=f"title {PRIVATE}"))
    store_stub.RecordPrompt(store_pb2.RecordPromptRequest(
        content_session_id=f"sess-{PRIVATE}", project=f"proj{PRIVATE}", prompt_text="a public prompt"))
    store_stub.RecordToolUse(store_pb2.RecordToolUseRequest(tool_use=common_pb2.ToolUse(
        content_session_id=f"sess-{PRIVATE}", project=f"proj{PRIVATE}", tool_use_id=f"tu-{PRIVATE}",
        tool_name=f"Bash{PRIVATE}", cwd=f"/tmp/{PRIVATE}", tool_input="{}", tool_response="ok")))
    store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id=f"sess-{PRIVATE}", project=f"proj{PRIVATE}", type="discovery", title="public")]))
    store_stub.WriteWorkState(store_pb2.WriteWorkStateRequest(project=f"proj{PRIVATE}", key=f"k{PRIVATE}",
                                                              content="state"))
    store_stub.PutCorpus(store_pb2.Corpus(
        name="c1", description=f"about {PRIVATE}",
        filter=store_pb2.CorpusFilter(project=f"proj{PRIVATE}", concepts=[f"c{PRIVATE}"], query=f"q {PRIVATE}"),
        history=[store_pb2.CorpusTurn(question=f"why {PRIVATE}", answer=f"because {PRIVATE}")]))
    store_stub.UpdateCorpus(store_pb2.UpdateCorpusRequest(
        name="c1", append_turn=store_pb2.CorpusTurn(question=f"how {PRIVATE}", answer="so")))

    assert SECRET not in database_text(settings)
    # The filtered keys are the same on reads: the work state is found under its filtered key.
    read = store_stub.ReadWorkState(store_pb2.ReadWorkStateRequest(project=f"proj{PRIVATE}", key=f"k{PRIVATE}"))
    assert read.current.content == "state"
    sessions = store_stub.GetToolUses(store_pb2.GetToolUsesRequest(content_session_id=f"sess-{PRIVATE}"))
    assert len(sessions.tool_uses) == 1 and sessions.tool_uses[0].content_session_id == "sess-"
