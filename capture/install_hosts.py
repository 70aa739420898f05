"""`mnemo install codex|cursor`: the MCP server in each host's documented config file.

- Codex reads MCP servers from ~/.codex/config.toml, one table per server:
  `[mcp_servers.<name>]` with `command` (string), `args` (array of strings) and `env`
  (a table of strings).
- Cursor reads them from ~/.cursor/mcp.json: `{"mcpServers": {"<name>": {"command",
  "args", "env"}}}` (the same shape as Claude Code's, without `type`).

Hooks are not installed for these hosts: their hook events and payloads differ from
Claude Code's, and `mnemo hook` reads Claude Code's fields (docs/capture.md). Like the
Claude Code installer: idempotent, a backup before any change, other entries untouched,
an unreadable file refused as it is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

from capture.install_common import (
    MCP_NAME,
    _backup_path,
    _split_env,
    _update_json,
    add_mcp_server,
    is_mnemo_server,
    launcher,
)
from mnemo.errors import FailedPrecondition


def install_host(host: str, settings: Any, args: Any) -> int:
    base = launcher(settings)
    path = host_config(host)
    if host == "codex":
        changed = _update_toml(path, codex_with_server(path, base))
    else:
        changed = _update_json(path, lambda data: cursor_with_server(data, base))
    print(f"MCP server {MCP_NAME!r}: {'registered' if changed else 'already registered'} ({path})")
    print(f"{host}: hooks are not installed (mnemo hook reads Claude Code's events); see docs/capture.md")
    return 0


def uninstall_host(host: str, settings: Any, args: Any) -> int:
    path = host_config(host)
    if host == "codex":
        changed = path.exists() and _update_toml(path, codex_without_server(path.read_text(encoding="utf-8")))
    else:
        changed = _update_json(path, cursor_without_server, create=False)
    print(f"MCP server {MCP_NAME!r}: {'removed' if changed else 'not registered'} ({path})")
    return 0


def host_config(host: str) -> Path:
    home = Path(os.environ.get("HOME") or Path.home())
    if host == "codex":
        return Path(os.environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    raise FailedPrecondition(f"unknown host {host!r}: claude-code, codex or cursor")


# --------------------------------------------------------------------------------------
# Cursor (JSON)


def cursor_with_server(data: dict[str, Any], base: list[str]) -> dict[str, Any]:
    data = add_mcp_server(data, base)
    entry = dict(data["mcpServers"][MCP_NAME])
    entry.pop("type", None)  # Cursor infers stdio from `command`
    data["mcpServers"][MCP_NAME] = entry
    return data


def cursor_without_server(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and is_mnemo_server(servers.get(MCP_NAME)):
        return {**data, "mcpServers": {k: v for k, v in servers.items() if k != MCP_NAME}}
    return data


# --------------------------------------------------------------------------------------
# Codex (TOML, edited as text: the standard library reads TOML but does not write it)

_TABLE = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def codex_with_server(path: Path, base: list[str]) -> str:
    text = _read_toml_text(path)
    current = tomllib.loads(text).get("mcp_servers", {}).get(MCP_NAME)
    if current is not None and not is_mnemo_server(current):
        raise FailedPrecondition(f"{MCP_NAME!r} is already registered in {path} to another command; "
                                 "remove it first or keep it")
    env, argv = _split_env(base)
    block = [f"[mcp_servers.{MCP_NAME}]", f"command = {_toml_string(argv[0])}",
             "args = [" + ", ".join(_toml_string(a) for a in [*argv[1:], "mcp"]) + "]"]
    if env:
        block.append("env = { " + ", ".join(f"{name} = {_toml_string(v)}" for name, v in env.items()) + " }")
    kept = codex_without_server(text).rstrip("\n")
    return (kept + "\n\n" if kept else "") + "\n".join(block) + "\n"


def codex_without_server(text: str) -> str:
    """The TOML text without the `[mcp_servers.mcp-search]` table (and its sub-tables)."""
    own = (f"mcp_servers.{MCP_NAME}", f'mcp_servers."{MCP_NAME}"')
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _TABLE.match(line)
        if header:
            name = header.group(1).replace(" ", "")
            skipping = any(name == o or name.startswith(o + ".") for o in own)
        if not skipping:
            out.append(line)
    return "".join(out)


def _read_toml_text(path: Path) -> str:
    if not path.exists():
        return ""
    text = path.read_text(encoding="utf-8")
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise FailedPrecondition(f"{path} is not valid TOML ({err}); fix or move it, nothing was changed") from None
    return text


def _update_toml(path: Path, after: str) -> bool:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    if after == before:
        return False
    tomllib.loads(after)  # never write what the host could not read
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        shutil.copy2(path, _backup_path(path))
    tmp = path.with_name(f".{path.name}.mnemo-tmp-{os.getpid()}")
    tmp.write_text(after, encoding="utf-8")
    os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o600)
    os.replace(tmp, path)
    return True


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
