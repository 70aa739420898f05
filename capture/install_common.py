"""What every host installer shares: how to run this mnemo (absolute argv, the settings
carried into the host's environment), the MCP server entry, and safe JSON file updates
(a backup before any change, atomic writes, unreadable files refused untouched).

capture.install (Claude Code) and capture.install_hosts (Codex, Cursor) build on it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemo.errors import FailedPrecondition, InvalidArgument
from mnemo.vocab import LEGACY_MCP_SERVER_NAME, MCP_PROFILE_DEFAULT, MCP_PROFILES, MCP_SERVER_NAME

MCP_NAME = MCP_SERVER_NAME
LEGACY_MCP_NAME = LEGACY_MCP_SERVER_NAME
MCP_NAMES = (MCP_NAME, LEGACY_MCP_NAME)
DEFAULT_PROFILE = MCP_PROFILE_DEFAULT
# Settings worth carrying into the host's environment: where the stack lives. Secrets
# (tokens, API keys) are never written into a host's config file.
# The server runtime's two settings ride along too: the token file's path, never the token.
CARRIED_SETTINGS = ("store_addr", "vector_addr", "search_addr", "server_url", "token_file")


def add_mcp_server(data: dict[str, Any], base: list[str], name: str = MCP_NAME,
                   extra_env: dict[str, str] | None = None) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise FailedPrecondition('"mcpServers" in ~/.claude.json is not an object')
    current = servers.get(name)
    if current is not None and not is_mnemo_server(current):
        raise FailedPrecondition(f"{name!r} is already registered to another command "
                                 f"({current.get('command') if isinstance(current, dict) else current!r}); "
                                 "remove it first or keep it")
    env, argv = _split_env(base)
    servers[name] = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"],
                     "env": {**env, **(extra_env or {})}}
    return data


def remove_mcp_server(data: dict[str, Any], names: tuple[str, ...] = MCP_NAMES) -> dict[str, Any]:
    """Without mnemo's server under any of `names`; an entry of another program stays."""
    servers = data.get("mcpServers")
    mine = {name for name in names if isinstance(servers, dict) and is_mnemo_server(servers.get(name))}
    if mine and isinstance(servers, dict):
        data = {**data, "mcpServers": {k: v for k, v in servers.items() if k not in mine}}
    return data


def mcp_server_for(settings: Any) -> tuple[str, dict[str, str]]:
    """The name to register mnemo's MCP server under for the chosen profile (setting
    mcp_profile, `--profile`), and what the server's env adds so that it serves it."""
    profile = getattr(settings, "mcp_profile", "") or DEFAULT_PROFILE
    if profile not in MCP_PROFILES:
        raise InvalidArgument("mcp_profile", f"{profile!r} is not a profile; use one of {', '.join(MCP_PROFILES)}")
    if profile == DEFAULT_PROFILE:
        return MCP_NAME, {}
    # The older server's users call its tools by their old server name; "all" is for
    # migrating, under mnemo's own name.
    return (LEGACY_MCP_NAME if profile == "legacy" else MCP_NAME), {"MNEMO_MCP_PROFILE": profile}


def is_mnemo_server(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    args = entry.get("args")
    if not isinstance(args, list):
        args = []
    return bool(args) and args[-1] == "mcp" and _is_mnemo_launcher([entry["command"], *args[:-1]])


def _is_mnemo_launcher(tokens: list[str]) -> bool:
    if not tokens:
        return False
    if Path(tokens[0]).name in ("mnemo", "mnemo.exe") and len(tokens) == 1:
        return True
    return tokens[1:] == ["-m", "mnemo.cli"] or tokens[1:] == ["-m", "mnemo"]


def launcher(settings: Any) -> list[str]:
    """mnemo's argv, preceded by NAME=VALUE words for the settings the hooks and server
    must share with this install (a non-default home, explicit addresses)."""
    return [f"{name}={value}" for name, value in carried_env(settings).items()] + mnemo_command()


def carried_env(settings: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    home = getattr(settings, "home", None)
    if home is not None and Path(home).resolve() != Path("~/.mnemo").expanduser().resolve():
        env["MNEMO_HOME"] = str(home)
    for name in CARRIED_SETTINGS:
        value = getattr(settings, name, "")
        if value:
            env[f"MNEMO_{name.upper()}"] = str(value)
    return env


def mnemo_command() -> list[str]:
    """How to run this installation's `mnemo`, as absolute argv (no PATH lookup later).

    Without an installed `mnemo` script (a source checkout run with `python -m`), the
    interpreter runs the module with PYTHONPATH pointing at the checkout, given as a
    leading `PYTHONPATH=...` word (hooks run through a shell; the MCP entry gets an env).
    """
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "mnemo" and argv0.exists():
        return [str(argv0.resolve())]
    beside = Path(sys.executable).parent / "mnemo"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("mnemo")
    if found:
        return [str(Path(found).resolve())]
    checkout = Path(__file__).resolve().parents[1]
    return [f"PYTHONPATH={checkout}", sys.executable, "-m", "mnemo.cli"]


def _split_env(base: list[str]) -> tuple[dict[str, str], list[str]]:
    """Leading NAME=VALUE words as an environment, and the argv after them."""
    env: dict[str, str] = {}
    rest = list(base)
    while rest and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", rest[0]):
        name, _, value = rest.pop(0).partition("=")
        env[name] = value
    return env, rest


def _update_json(path: Path, change: Callable[[dict[str, Any]], dict[str, Any]], create: bool = True) -> bool:
    """Apply `change` to the JSON object in `path`; write (after a backup) only if it differs."""
    if not path.exists():
        if not create:
            return False
        before: dict[str, Any] = {}
    else:
        try:
            before = json.loads(path.read_text(encoding="utf-8") or "{}")
        except ValueError as err:
            raise FailedPrecondition(f"{path} is not valid JSON ({err}); fix or move it, nothing was changed") from None
        if not isinstance(before, dict):
            raise FailedPrecondition(f"{path} does not hold a JSON object; nothing was changed")
    after = change(before)
    if after == before:
        return False
    if path.exists():
        shutil.copy2(path, _backup_path(path))
    _write_atomic(path, after)
    return True


def _backup_path(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.mnemo-backup-{stamp}")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.mnemo-backup-{stamp}-{n}")
        n += 1
    return candidate


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    tmp = path.with_name(f".{path.name}.mnemo-tmp-{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, path)
