"""mnemo never records its own tool calls, whatever name the user registered it under; and
the hints the hooks write name only tools the default profile lists."""

from __future__ import annotations

import json
import re

import pytest

from capture.commands import command_kind
from capture.hook_tools import file_context_text
from capture.self_tools import is_own_tool, split_mcp_name
from mnemo.vocab import MNEMO_TOOL_NAMES

pytestmark = pytest.mark.unit

MNEMO = {"type": "stdio", "command": "/home/dev/.local/bin/mnemo", "args": ["mcp"], "env": {}}
CLAUDE_MEM = {"type": "stdio", "command": "node", "args": ["/opt/claude-mem/mcp-server.cjs"]}


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A HOME whose ~/.claude.json the test writes; returns a writer."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)

    def settings(user: dict | None = None, project: dict | None = None, cwd: str = "/work/app") -> str:
        data: dict = {"mcpServers": user or {}}
        if project:
            data["projects"] = {cwd: {"mcpServers": project}}
        (tmp_path / ".claude.json").write_text(json.dumps(data))
        return cwd
    return settings


def test_the_tool_names_are_every_tool_the_gateway_answers():
    from gateway.tools import BY_NAME

    assert set(BY_NAME) == MNEMO_TOOL_NAMES


def test_the_gateway_defines_no_tool_outside_the_vocabulary():
    from gateway.spec import ToolSpec

    with pytest.raises(ValueError, match="tool 'mem_serach' is not in mnemo.vocab.MNEMO_TOOL_NAMES"):
        ToolSpec(name="mem_serach", description="", input_schema={}, handler=None, capability=None,  # type: ignore[arg-type]
                 read_only=True)


def test_mnemo_under_its_installed_and_plugin_names_is_skipped(host):
    cwd = host()
    assert is_own_tool("mcp__mcp-search__mem_search", cwd)
    assert is_own_tool("mcp__plugin_mnemo_mcp-search__get_observations", cwd)
    assert is_own_tool("mcp__claude-mem-search__search", cwd)


def test_mnemo_under_a_name_the_user_chose_is_skipped(host):
    cwd = host(user={"memory": MNEMO})
    assert is_own_tool("mcp__memory__mem_search", cwd)
    cwd = host(project={"notes": {**MNEMO, "command": "/usr/bin/python3", "args": ["-m", "mnemo.cli", "mcp"]}})
    assert is_own_tool("mcp__notes__timeline", cwd)


def test_other_servers_are_recorded_even_with_a_tool_of_the_same_name(host):
    cwd = host(user={"mcp-search": CLAUDE_MEM, "memory": CLAUDE_MEM})
    assert not is_own_tool("mcp__mcp-search__search", cwd)  # claude-mem's own server under that name
    assert not is_own_tool("mcp__memory__mem_search", cwd)
    assert not is_own_tool("mcp__github__search", host())
    assert not is_own_tool("mcp__plugin_mnemo_mcp-search__create_issue", cwd)
    assert not is_own_tool("mem_search", cwd) and split_mcp_name("Bash") == ("", "")


def test_hints_name_only_tools_the_default_profile_lists():
    from gateway.tools import DEFAULT_PROFILE, profile_tools

    listed = {tool.name for tool in profile_tools(DEFAULT_PROFILE)}
    hint = file_context_text("src/a.py", [("#12", "bugfix", "2026-12-04", "Tests failed")])
    named = set(re.findall(r"\b([a-z_]+)\(", hint))
    assert named and named <= listed


@pytest.mark.parametrize(("command", "kind"), [
    ("pip install pytest", "build"),
    ("python3 -m json.tool ../js-jest/package.json", "other"),
    ("node --test test/", "test"),
    ("npx jest", "test"),
    ("cd packages/api && python -m pytest -q", "test"),
    ("echo pytest is great", "inspect"),
    ("git commit -m 'run pytest in CI'", "vcs"),
    ("DEBUG=1 uv run pytest -x", "test"),
    ("javac Main.java && java Main", "build"),
])
def test_test_or_not_is_decided_by_the_program_not_a_word_anywhere(command, kind):
    assert command_kind(command) == kind
