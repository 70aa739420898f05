"""`mnemo install claude-code` allows exactly the read-only tools (issue 33): Claude Code's plan
mode and `claude -p` refuse an MCP tool no permission rule allows, readOnlyHint or not."""

from __future__ import annotations

import pytest

from capture.install import allow_read_only, disallow_mnemo, read_only_tools
from gateway.tools import BY_NAME
from mnemo.config import load_settings, with_overrides

pytestmark = pytest.mark.unit

USER = {"permissions": {"allow": ["Bash(npm test)", "mcp__mcp-search__save_memory"], "deny": ["Read(.env)"]}}


@pytest.fixture
def settings(tmp_path):
    return load_settings({"home": str(tmp_path / "home")}, environ={})


def test_the_default_profile_allows_its_twelve_read_only_tools_and_no_write(settings):
    tools = read_only_tools(settings)
    assert len(tools) == 12 and {"mem_search", "get_observations", "smart_outline", "smart_unfold"} <= set(tools)
    assert all(BY_NAME[name].read_only for name in tools)
    allow = allow_read_only(USER, "mcp-search", tools)["permissions"]["allow"]
    assert allow[:2] == USER["permissions"]["allow"]  # the user's rules stay, first
    assert allow[2:] == [f"mcp__mcp-search__{name}" for name in tools]
    assert not {"mcp__mcp-search__work_state_write", "mcp__mcp-search__query_corpus"} & set(allow)


def test_allowing_twice_equals_once_and_uninstall_leaves_the_users_rules(settings):
    once = allow_read_only(USER, "mcp-search", read_only_tools(settings))
    assert allow_read_only(once, "mcp-search", read_only_tools(settings)) == once
    assert disallow_mnemo(once) == USER  # a write rule the user wrote stays
    assert disallow_mnemo({"permissions": {"allow": ["mcp__mcp-search__mem_search"]}}) == {}


def test_a_change_of_profile_moves_the_rules_to_the_new_server_name(settings):
    legacy = with_overrides(settings, mcp_profile="legacy")
    before = allow_read_only(USER, "mcp-search", read_only_tools(settings))
    after = allow_read_only(before, "claude-mem-search", read_only_tools(legacy))["permissions"]["allow"]
    assert not [rule for rule in after if rule.startswith("mcp__mcp-search__") and "save_memory" not in rule]
    assert "mcp__claude-mem-search__search_observations" in after


def test_the_server_runtime_allows_its_read_only_observation_tools(settings, tmp_path):
    remote = with_overrides(settings, server_url="mnemo.example:7443", token_file=str(tmp_path / "token"))
    assert {"observation_search", "observation_context"} <= set(read_only_tools(remote))
    assert "observation_add" not in read_only_tools(remote)
