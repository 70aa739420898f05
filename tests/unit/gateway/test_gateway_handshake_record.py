"""The fast start's record and rules (gateway/fast.py, gateway/handshake.py): the record is the
SDK's own answers, the list it serves is the one `advertised` picks, and a record of other
code is never used."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil

import pytest

from gateway import fast
from gateway.fast import Answers, acceptable_initialize, cache_path, load_answers, write_answers
from gateway.handshake import record_answers
from gateway.tools import PROFILES, advertised

CAPABILITIES = ["search", "vector", "mem_search", "tool_uses", "write", "work_state", "context", "corpus"]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    from mnemo.config import load_settings

    settings = load_settings({"home": str(tmp_path_factory.mktemp("home"))}, environ={})
    return asyncio.run(record_answers(settings))


def test_the_listed_tools_are_those_advertised_picks_for_every_profile_and_capability_set(recorded):
    answers = Answers(**recorded)
    for profile in PROFILES:
        for size in (0, 1, 2, len(CAPABILITIES) - 1, len(CAPABILITIES)):
            for chosen in itertools.islice(itertools.combinations(CAPABILITIES, size), 12):
                capabilities = frozenset(chosen)
                result, names = answers.tool_list("2025-11-25", profile, capabilities)
                expected = [spec.name for spec in advertised(capabilities, profile)]
                assert names == expected == [tool["name"] for tool in result["tools"]], (profile, chosen)


def test_the_record_holds_each_negotiated_version_and_the_tools_as_the_host_receives_them(recorded):
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    from gateway.server import host_view
    from gateway.tools import TOOLS

    assert recorded["versions"] == list(HANDSHAKE_PROTOCOL_VERSIONS) and recorded["latest"] == LATEST_HANDSHAKE_VERSION
    latest = recorded["tools"][LATEST_HANDSHAKE_VERSION]
    assert [latest[spec.name] for spec in TOOLS] == host_view(TOOLS)
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        initialize = recorded["initialize"][version]
        assert initialize["protocolVersion"] == version and initialize["serverInfo"]["name"] == "mnemo"
        assert initialize["capabilities"]["tools"] == {"listChanged": True}
    answers = Answers(**recorded)
    assert answers.negotiate("1999-01-01") == LATEST_HANDSHAKE_VERSION == answers.negotiate("2026-07-28")


def test_a_record_is_used_only_by_the_code_and_sdk_it_describes(recorded, tmp_path, monkeypatch):
    from mnemo.config import load_settings

    settings = load_settings({"home": str(tmp_path / "home")}, environ={})
    assert load_answers(settings) is None
    write_answers(settings, recorded)
    assert load_answers(settings) == Answers(**recorded)
    record = json.loads(cache_path(settings).read_text())
    cache_path(settings).write_text(json.dumps({**record, "key": "0" * 64}))
    assert load_answers(settings) is None, "a record of other sources was used"
    cache_path(settings).write_text(json.dumps({**record, "format": fast.CACHE_FORMAT + 1}))
    assert load_answers(settings) is None
    cache_path(settings).write_text("{not json")
    assert load_answers(settings) is None


def test_a_record_is_not_replayed_to_a_gateway_that_sends_structure_differently(recorded, tmp_path):
    """Issue 33: outputSchema is declared only with structuredContent on, so a record made with
    the setting off must not answer tools/list for a gateway with it on (nor the reverse)."""
    from mnemo.config import load_settings, with_overrides

    plain = load_settings({"home": str(tmp_path / "home")}, environ={})
    structured = with_overrides(plain, mcp_structured_content=True)
    latest = recorded["tools"][recorded["latest"]]
    assert not any("outputSchema" in tool for tool in latest.values())
    write_answers(plain, recorded)
    assert load_answers(plain) is not None and load_answers(structured) is None
    with_schemas = asyncio.run(record_answers(structured))
    assert "outputSchema" in with_schemas["tools"][with_schemas["latest"]]["mem_search"]
    write_answers(structured, with_schemas)
    assert load_answers(structured) is not None and load_answers(plain) is None


def test_the_key_changes_when_any_source_changes(tmp_path, monkeypatch):
    for package in fast._PACKAGES:
        shutil.copytree(fast._REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fast, "_REPO", tmp_path)

    def key() -> str:
        monkeypatch.setattr(fast, "_KEY", None)
        return fast.cache_key()

    before = key()
    assert key() == before
    (tmp_path / "mnemo" / "vocab.py").write_text((tmp_path / "mnemo" / "vocab.py").read_text() + "\n# changed\n")
    changed = key()
    assert changed != before
    (tmp_path / "gateway" / "tools_more.py").write_text("X = 1\n")
    assert key() != changed


SDK_CLIENT = {"protocolVersion": "2025-11-25", "capabilities": {},
              "clientInfo": {"name": "mcp", "version": "0.1.0"}}


@pytest.mark.parametrize("params", [
    SDK_CLIENT,
    {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "claude-code",
                                                                                      "version": "2.0.0"}},
    {**SDK_CLIENT, "capabilities": {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}},
                                    "experimental": {"x": {}}}},
    {**SDK_CLIENT, "clientInfo": {"name": "inspector", "version": "1", "title": "MCP Inspector"}},
])
def test_plain_initialize_params_are_served_fast(params):
    assert acceptable_initialize(params)


@pytest.mark.parametrize("params", [
    None, [], {}, {**SDK_CLIENT, "_meta": {}}, {**SDK_CLIENT, "protocolVersion": 20251125},
    {**SDK_CLIENT, "clientInfo": {"name": "x"}},
    {**SDK_CLIENT, "clientInfo": {"name": "x", "version": "1", "icons": [{"src": "data:,"}]}},
    {**SDK_CLIENT, "clientInfo": {"name": "x", "version": 1}},
    {**SDK_CLIENT, "capabilities": "none"},
    {**SDK_CLIENT, "capabilities": {"roots": {"listChanged": "yes"}}},
    {**SDK_CLIENT, "capabilities": {"tasks": {}}},
    {**SDK_CLIENT, "capabilities": {"sampling": {"context": True}}},
    {**SDK_CLIENT, "capabilities": {"experimental": {"x": 1}}},
])
def test_other_initialize_params_are_left_to_the_sdk(params):
    assert not acceptable_initialize(params)


def test_plain_message_passes_only_what_the_guard_would_pass_unchanged():
    from gateway.frames import judge, plain_message

    plain = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    assert plain_message(plain) == json.loads(plain) and judge(plain).message is not None
    for line in ('{"jsonrpc":"2.0","id":1,"method":"tools/list"', '[{"jsonrpc":"2.0","id":1,"method":"x"}]',
                 '{"jsonrpc":"1.0","id":1,"method":"x"}', '{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}',
                 '{"jsonrpc":"2.0","id":1,"method":"x"}{"jsonrpc":"2.0","id":2,"method":"x"}', "12", "NaN",
                 '{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"\\ud800"}}'):
        assert plain_message(line) is None, line
        assert judge(line).message is None, line  # the guard answers or drops each of them


def test_the_session_reads_on_after_the_bytes_the_fast_phase_read_ahead(tmp_path):
    from gateway.lines import Prefixed, read_line

    wire_file = tmp_path / "wire"
    wire_file.write_bytes(b'rest of line 2"}\nline 3\n')
    with wire_file.open("rb") as wire:
        reader = Prefixed(b'line 1\n{"partial": "', wire)
        assert read_line(reader) == b"line 1"
        assert read_line(reader) == b'{"partial": "rest of line 2"}'
        assert read_line(reader) == b"line 3"
        assert read_line(reader) is None
    with wire_file.open("rb") as wire:
        reader = Prefixed(b"0123456789", wire)
        assert reader.readline(4) == b"0123"
        assert reader.readline(20) == b"456789rest of line 2"  # 20 bytes at most, as asked
