"""mnemo never records its own tool calls.

A host names an MCP tool `mcp__<server>__<tool>`, the server being whatever name the user
registered mnemo under (`mcp-search` by `mnemo install`, `plugin_mnemo_mcp-search` from
the plugin, `memory` by a hand-written `claude mcp add memory -- mnemo mcp`). A call is
mnemo's own when its tool is one of mnemo's tools AND its server is mnemo's: the plugin
named mnemo, or a server the host's settings register with mnemo's command (capture's
installer tells mnemo's entry by that command, install_common.is_mnemo_server), or, when
no setting names that server at all, one of the names mnemo installs under. Recording
these calls would feed search results back into memory, where they pollute search.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mnemo.vocab import LEGACY_MCP_SERVER_NAME, MCP_SERVER_NAME, MNEMO_TOOL_NAMES

PLUGIN_PREFIX = "plugin_mnemo_"  # Claude Code names a plugin's server plugin_<plugin>_<server>
SETTINGS_MAX_BYTES = 16 * 1024 * 1024  # ~/.claude.json grows with history; past this it is not read


def is_own_tool(tool_name: str, cwd: str = "") -> bool:
    """True for a call of one of mnemo's own MCP tools, under whatever server name."""
    server, tool = split_mcp_name(tool_name)
    if not server or tool not in MNEMO_TOOL_NAMES:
        return False
    if server.startswith(PLUGIN_PREFIX):
        return True
    registered = registered_servers(cwd)
    if server in registered:
        from capture.install_common import is_mnemo_server

        return is_mnemo_server(registered[server])
    return server in (MCP_SERVER_NAME, LEGACY_MCP_SERVER_NAME)


def split_mcp_name(tool_name: str) -> tuple[str, str]:
    """("server", "tool") of `mcp__server__tool`; ("", "") for any other name."""
    if not tool_name.startswith("mcp__"):
        return "", ""
    server, sep, tool = tool_name[len("mcp__"):].rpartition("__")
    return (server, tool) if sep and server else ("", "")


def registered_servers(cwd: str) -> dict[str, Any]:
    """The MCP servers the host's settings register for `cwd`: user scope and the project's
    entry in ~/.claude.json, and the project's .mcp.json (nearest folder first wins)."""
    servers: dict[str, Any] = {}
    config_dir = os.environ.get("CLAUDE_CONFIG_DIR")
    user = _json(Path(config_dir) / ".claude.json" if config_dir else Path.home() / ".claude.json")
    servers.update(_servers(user))
    projects = user.get("projects") if isinstance(user.get("projects"), dict) else {}
    folders = [Path(cwd), *Path(cwd).parents] if cwd else []
    for folder in reversed(folders):  # the nearest folder's entries win
        servers.update(_servers(projects.get(str(folder)) if isinstance(projects, dict) else None))
        servers.update(_servers(_json(folder / ".mcp.json")))
    return servers


def _servers(scope: Any) -> dict[str, Any]:
    found = scope.get("mcpServers") if isinstance(scope, dict) else None
    return found if isinstance(found, dict) else {}


def _json(path: Path) -> dict[str, Any]:
    try:
        if path.stat().st_size > SETTINGS_MAX_BYTES:
            return {}
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
