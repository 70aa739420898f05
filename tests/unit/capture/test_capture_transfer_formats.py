"""Import sources read without a store: format detection, claude-mem rows, JSONL records."""

from __future__ import annotations

import json

import pytest

from capture.transfer import detect_format
from capture.transfer_claude_mem import ClaudeMemDatabase, read_claude_mem_json
from capture.transfer_formats import dict_to_message, item_to_record, read_jsonl, record_to_item
from mnemo.v1 import common_pb2, store_pb2
from tests.fixtures import claude_mem_db

pytestmark = pytest.mark.unit


def test_formats_are_recognised_by_content(tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db")
    export = tmp_path / "export.json"
    export.write_text(json.dumps(claude_mem_db.export_document(db), indent=2))
    minified = tmp_path / "min.txt"
    minified.write_text(json.dumps(claude_mem_db.export_document(db)))
    jsonl = tmp_path / "memory.data"
    jsonl.write_text('{"kind": "session", "content_session_id": "s", "project": "p"}\n')
    assert [detect_format(p) for p in (db, export, minified, jsonl)] == ["sqlite", "claude-mem-json",
                                                                         "claude-mem-json", "jsonl"]


def test_an_empty_file_is_jsonl_of_no_records(tmp_path):
    for name, content in (("empty.jsonl", ""), ("blank.jsonl", "\n  \n\n")):
        path = tmp_path / name
        path.write_text(content)
        assert detect_format(path) == "jsonl"
        total, items = read_jsonl(path)
        assert (total, list(items)) == (0, [])
    pretty = tmp_path / "pretty.json"
    pretty.write_text('\n{"sessions": []}\n')  # a document after a blank line is still claude-mem JSON
    assert detect_format(pretty) == "claude-mem-json"


def test_claude_mem_database_rows_map_to_messages_read_only(tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db", bad_row=True)
    before = db.read_bytes()
    total, items = ClaudeMemDatabase(db).open()
    items = list(items)
    assert total == len(items) == 3 + 4 + 4 + 2
    assert db.read_bytes() == before and not (tmp_path / "claude-mem.db-wal").exists()
    by_where = {i.where: i for i in items}
    assert [i.kind for i in items[:3]] == ["session"] * 3  # sessions first

    leaked = by_where["sdk_sessions row id=2"].message
    assert leaked.user_prompt == "" and leaked.external_id == "claude-mem:session:2"
    assert by_where["user_prompts row id=4"].private
    everything = " ".join(str(i.message) for i in items if i.message is not None)
    assert claude_mem_db.PRIVATE_MARKER not in everything

    obs = by_where["observations row id=2"].message
    assert list(obs.files_modified) == ["src/auth/views.py", "tests/test_login.py"]
    assert list(obs.concepts) == ["problem-solution", "gotcha"]
    assert (obs.created_at_epoch, obs.created_at) == (claude_mem_db.T0 + 900_000, "2026-01-15T14:15:00.000Z")
    assert obs.external_id == "claude-mem:obs:2" and obs.discovery_tokens == 2400
    assert by_where["observations row id=3"].message.text == "legacy text column"
    assert "facts: not a JSON array" in by_where["observations row id=99"].error

    prompt = by_where["user_prompts row id=3"].message
    assert (prompt.platform_source, prompt.project, prompt.prompt_number) == ("codex", "infra", 1)
    summary = by_where["session_summaries row id=2"].message
    assert list(summary.files_read) == [] and summary.next_steps == ""
    session = by_where["sdk_sessions row id=3"].message
    assert (session.custom_title, session.status, session.completed_at_epoch) == (
        "CI speed", "completed", claude_mem_db.T0 + 2 * 86_400_000 + 60_000)


def test_claude_mem_export_json_gives_the_same_messages(tmp_path):
    db = claude_mem_db.build(tmp_path / "claude-mem.db")
    export = tmp_path / "export.json"
    export.write_text(json.dumps(claude_mem_db.export_document(db)))
    _, from_db = ClaudeMemDatabase(db).open()
    _, from_json = read_claude_mem_json(export)
    assert [i.message for i in from_db] == [i.message for i in from_json]


def test_jsonl_records_are_checked_field_by_field(tmp_path):
    lines = [
        '{"kind": "observation", "memory_session_id": "m", "project": "p", "type": "discovery", "facts": ["a", "b"]}',
        '{"kind": "session", "content_session_id": "s", "project": "p"}',
        'not json',
        '{"kind": "memory", "x": 1}',
        '{"kind": "prompt", "prompt_text": 42}',
        '{"kind": "observation", "facts": "a"}',
        '{"kind": "summary", "colour": "blue"}',
        '',
        '{"kind": "tool_use", "input_truncated": "yes"}',
    ]
    path = tmp_path / "m.jsonl"
    path.write_text("\n".join(lines) + "\n")
    total, items = read_jsonl(path)
    items = list(items)
    assert total == 8
    assert items[0].where == "line 2" and items[0].kind == "session"  # sessions first
    errors = {i.where: i.error for i in items if i.error}
    assert errors["line 3"].startswith("not valid JSON")
    assert "unknown kind 'memory'" in errors["line 4"]
    assert errors["line 5"] == "prompt_text: expected a string, got int"
    assert errors["line 6"] == "facts: expected an array"
    assert errors["line 7"] == "unknown field 'colour' for a Summary"
    assert errors["line 9"] == "input_truncated: expected true or false"
    assert list(items[1].message.facts) == ["a", "b"]


def test_records_round_trip_every_field():
    obs = common_pb2.Observation(id=7, memory_session_id="m", project="p", type="bugfix", title="t", facts=["a"],
                                 created_at_epoch=1_768_485_600_000, tool_use_ids=[3, 4], discovery_tokens=2**40)
    record = item_to_record(store_pb2.ExportItem(observation=obs))
    assert record["kind"] == "observation" and record["facts"] == ["a"] and record["subtitle"] == ""
    assert record["discovery_tokens"] == 2**40 and isinstance(record["created_at_epoch"], int)
    again = record_to_item(json.dumps(record), "line 1")
    assert again.message == obs
    assert dict_to_message(common_pb2.ToolUse, {"input_truncated": True, "input_size": 5}).input_size == 5
