"""`mnemo install codex|cursor`: the MCP server in each host's documented config format
(Codex: `[mcp_servers.<name>]` in ~/.codex/config.toml; Cursor: `mcpServers` in
~/.cursor/mcp.json), idempotent, other entries untouched."""

from __future__ import annotations

import json
import tomllib
import types

import pytest

from capture.install_hosts import install_host, uninstall_host
from mnemo.config import load_settings
from mnemo.errors import FailedPrecondition

pytestmark = pytest.mark.unit

CODEX_CONFIG = '''model = "o4-mini"

[mcp_servers.github]
command = "gh-mcp"
args = []

[profiles.fast]
model = "o4-mini"
'''


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path


def settings_for(home):
    return load_settings({"home": str(home / "mnemo-home")}, environ={})


def test_codex_gets_a_toml_server_table_once_and_keeps_the_rest(user_home, capsys):
    config = user_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX_CONFIG)
    settings = settings_for(user_home)
    assert install_host("codex", settings, types.SimpleNamespace()) == 0
    first = config.read_text()
    assert install_host("codex", settings, types.SimpleNamespace()) == 0
    assert config.read_text() == first
    parsed = tomllib.loads(first)
    server = parsed["mcp_servers"]["mcp-search"]
    assert server["args"][-1] == "mcp" and server["command"].startswith("/")
    assert server["env"] == {"MNEMO_HOME": str(settings.home)}
    assert parsed["mcp_servers"]["github"] == {"command": "gh-mcp", "args": []}
    assert parsed["model"] == "o4-mini" and parsed["profiles"]["fast"] == {"model": "o4-mini"}
    assert "registered" in capsys.readouterr().out
    assert uninstall_host("codex", settings, types.SimpleNamespace()) == 0
    assert tomllib.loads(config.read_text()) == tomllib.loads(CODEX_CONFIG)


def test_codex_refuses_invalid_toml_and_a_foreign_server(user_home):
    config = user_home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text("model = ")
    with pytest.raises(FailedPrecondition, match="not valid TOML"):
        install_host("codex", settings_for(user_home), types.SimpleNamespace())
    assert config.read_text() == "model = "
    config.write_text('[mcp_servers.mcp-search]\ncommand = "bun"\nargs = ["x"]\n')
    with pytest.raises(FailedPrecondition, match="another command"):
        install_host("codex", settings_for(user_home), types.SimpleNamespace())


def test_cursor_gets_an_mcp_json_entry_in_its_format(user_home):
    mcp = user_home / ".cursor" / "mcp.json"
    mcp.parent.mkdir()
    mcp.write_text(json.dumps({"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}))
    settings = settings_for(user_home)
    assert install_host("cursor", settings, types.SimpleNamespace()) == 0
    data = json.loads(mcp.read_text())
    entry = data["mcpServers"]["mcp-search"]
    assert set(entry) == {"command", "args", "env"} and entry["args"][-1] == "mcp"
    assert entry["env"]["MNEMO_HOME"] == str(settings.home)
    assert data["mcpServers"]["linear"] == {"url": "https://mcp.linear.app/sse"}
    assert uninstall_host("cursor", settings, types.SimpleNamespace()) == 0
    assert json.loads(mcp.read_text()) == {"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}
