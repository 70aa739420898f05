"""`mnemo install claude-code --profile legacy|all`: the older server under its old name,
the profile carried in the server's env, one mnemo server at a time, uninstall of both."""

from __future__ import annotations

import json
import shlex

import pytest

from capture.install import _split_env, is_mnemo_hook
from mnemo.config import load_settings
from tests.unit.capture.test_capture_install import USER_CLAUDE_JSON, cli, seed

pytestmark = pytest.mark.unit

CLAUDE_MEM = {"type": "stdio", "command": "node", "args": ["/opt/claude-mem/mcp-server.js"], "env": {}}


def servers(claude_json) -> dict:
    return json.loads(claude_json.read_text())["mcpServers"]


def hook_envs(settings_file) -> list[dict[str, str]]:
    groups = json.loads(settings_file.read_text())["hooks"].values()
    return [_split_env(shlex.split(h["command"]))[0] for g in groups for e in g for h in e["hooks"]
            if is_mnemo_hook(h)]


def test_legacy_registers_the_old_name_with_the_profile_in_its_env(tmp_path):
    settings_file, claude_json = seed(tmp_path)
    home = tmp_path / "elsewhere-home"
    done = cli(tmp_path, "install", "claude-code", "--profile", "legacy", "--home", str(home))
    assert done.returncode == 0, done.stderr
    assert "'claude-mem-search': registered" in done.stdout
    registered = servers(claude_json)
    assert "mcp-search" not in registered and registered["github"] == USER_CLAUDE_JSON["mcpServers"]["github"]
    entry = registered["claude-mem-search"]
    assert entry["env"] == {"MNEMO_HOME": str(home.resolve()), "MNEMO_MCP_PROFILE": "legacy"}
    assert entry["args"][-1] == "mcp"
    # The server started from this entry reads the profile as its setting.
    assert load_settings({}, environ=entry["env"]).mcp_profile == "legacy"
    # The hooks carry the home, not the server's profile.
    envs = hook_envs(settings_file)
    assert envs and all(env.get("MNEMO_HOME") == str(home.resolve()) for env in envs)
    assert not any("MNEMO_MCP_PROFILE" in env for env in envs)


def test_all_keeps_the_normal_name_and_carries_the_profile(tmp_path):
    _, claude_json = seed(tmp_path)
    assert cli(tmp_path, "install", "claude-code", "--profile", "all").returncode == 0
    registered = servers(claude_json)
    assert "claude-mem-search" not in registered
    assert registered["mcp-search"]["env"]["MNEMO_MCP_PROFILE"] == "all"
    assert load_settings({}, environ=registered["mcp-search"]["env"]).mcp_profile == "all"


def test_a_change_of_profile_leaves_one_mnemo_server_and_uninstall_removes_it(tmp_path):
    _, claude_json = seed(tmp_path)
    assert cli(tmp_path, "install", "claude-code").returncode == 0
    assert "MNEMO_MCP_PROFILE" not in servers(claude_json)["mcp-search"]["env"]
    assert cli(tmp_path, "install", "claude-code", "--profile", "legacy").returncode == 0
    assert set(servers(claude_json)) == {"github", "claude-mem-search"}
    again = cli(tmp_path, "install", "claude-code", "--profile", "legacy")
    assert again.returncode == 0 and "already registered" in again.stdout
    removed = cli(tmp_path, "uninstall", "claude-code")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(claude_json.read_text()) == USER_CLAUDE_JSON


def test_the_real_claude_mem_server_under_the_old_name_is_never_touched(tmp_path):
    _, claude_json = seed(tmp_path)
    claude_json.write_text(json.dumps({**USER_CLAUDE_JSON, "mcpServers": {"claude-mem-search": CLAUDE_MEM}}))
    refused = cli(tmp_path, "install", "claude-code", "--profile", "legacy")
    assert refused.returncode == 1 and "'claude-mem-search' is already registered" in refused.stderr
    assert servers(claude_json) == {"claude-mem-search": CLAUDE_MEM}
    assert cli(tmp_path, "install", "claude-code").returncode == 0  # mnemo's own name is free
    assert cli(tmp_path, "uninstall", "claude-code").returncode == 0
    assert servers(claude_json) == {"claude-mem-search": CLAUDE_MEM}


def test_an_unknown_profile_is_refused_naming_the_setting_and_nothing_is_written(tmp_path):
    settings_file, claude_json = seed(tmp_path)
    before = settings_file.read_text(), claude_json.read_text()
    done = cli(tmp_path, "install", "claude-code", "--profile", "legacyy")
    assert done.returncode != 0 and "mcp_profile" in done.stderr and "legacy" in done.stderr
    assert (settings_file.read_text(), claude_json.read_text()) == before
