"""`mnemo install claude-code` / `mnemo uninstall claude-code`.

Claude Code reads hooks from ~/.claude/settings.json (`hooks.<Event>[] = {matcher?,
hooks: [{type: "command", command, timeout}]}`) and user-scope MCP servers from
~/.claude.json (`mcpServers.<name> = {type: "stdio", command, args, env}`).

Install adds mnemo's five hooks and the `mcp-search` server; uninstall removes exactly
those. Both are idempotent, keep a timestamped backup of every file they change, and
leave every other key, hook and server as it was. A file that is not valid JSON is
refused untouched.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemo.errors import FailedPrecondition

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")
# SessionStart may start the stack; the others only write.
HOOK_TIMEOUTS = {"SessionStart": 60, "UserPromptSubmit": 30, "PostToolUse": 30, "Stop": 60, "SessionEnd": 30}
MCP_NAME = "mcp-search"


def run_install(settings: Any, args: Any) -> int:
    paths = _paths(args)
    base = mnemo_command()
    hooks_changed = _update_json(paths["settings"], lambda data: add_hooks(data, base))
    mcp_changed, conflict = False, ""
    try:
        mcp_changed = _update_json(paths["mcp"], lambda data: add_mcp_server(data, base))
    except FailedPrecondition as err:
        conflict = str(err)
    _report("hooks", paths["settings"], hooks_changed, "installed", "already installed")
    if conflict:
        print(f"MCP server: not registered: {conflict}", file=sys.stderr)
        return 1
    _report(f"MCP server {MCP_NAME!r}", paths["mcp"], mcp_changed, "registered", "already registered")
    print(f"mnemo runs as: {' '.join(shlex.quote(p) for p in base)}")
    return 0


def run_uninstall(settings: Any, args: Any) -> int:
    paths = _paths(args)
    hooks_changed = _update_json(paths["settings"], remove_hooks, create=False)
    mcp_changed = _update_json(paths["mcp"], remove_mcp_server, create=False)
    _report("hooks", paths["settings"], hooks_changed, "removed", "not installed")
    _report(f"MCP server {MCP_NAME!r}", paths["mcp"], mcp_changed, "removed", "not registered")
    return 0


# --------------------------------------------------------------------------------------
# pure transformations (unit-tested)


def add_hooks(data: dict[str, Any], base: list[str]) -> dict[str, Any]:
    """Settings with mnemo's hooks present exactly once. An entry already in place stays
    where it is; a stale mnemo entry (another path) is replaced."""
    data = json.loads(json.dumps(data))  # a deep copy: the caller's value is compared later
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise FailedPrecondition('"hooks" in the Claude Code settings is not an object; fix it by hand first')
    for event in HOOK_EVENTS:
        wanted = {"type": "command", "command": hook_command(base, event), "timeout": HOOK_TIMEOUTS[event]}
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise FailedPrecondition(f'"hooks.{event}" in the Claude Code settings is not a list')
        mine = [h for g in groups if isinstance(g, dict) for h in (g.get("hooks") or []) if is_mnemo_hook(h)]
        if mine == [wanted]:
            continue
        stripped = _without_mnemo(groups)
        hooks[event] = groups if stripped is None else stripped
        group: dict[str, Any] = {"matcher": "*"} if event == "PostToolUse" else {}
        group["hooks"] = [wanted]
        hooks[event].append(group)
    return data


def remove_hooks(data: dict[str, Any]) -> dict[str, Any]:
    """Settings without mnemo's hooks; groups, events and "hooks" left empty BY THAT are
    dropped (empty ones the user had stay)."""
    data = json.loads(json.dumps(data))
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data
    emptied = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = _without_mnemo(groups)
        if kept is None:
            continue
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
            emptied = True
    if emptied and not hooks:
        del data["hooks"]
    return data


def _without_mnemo(groups: list[Any]) -> list[Any] | None:
    """The groups with mnemo's entries removed (None when there were none)."""
    found = False
    kept_groups = []
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list):
            kept_groups.append(group)
            continue
        kept = [h for h in entries if not is_mnemo_hook(h)]
        if len(kept) != len(entries):
            found = True
            if kept:
                kept_groups.append({**group, "hooks": kept})
        else:
            kept_groups.append(group)
    return kept_groups if found else None


def add_mcp_server(data: dict[str, Any], base: list[str]) -> dict[str, Any]:
    data = json.loads(json.dumps(data))
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise FailedPrecondition('"mcpServers" in ~/.claude.json is not an object')
    current = servers.get(MCP_NAME)
    if current is not None and not is_mnemo_server(current):
        raise FailedPrecondition(f"{MCP_NAME!r} is already registered to another command "
                                 f"({current.get('command') if isinstance(current, dict) else current!r}); "
                                 "remove it first or keep it")
    env, argv = _split_env(base)
    servers[MCP_NAME] = {"type": "stdio", "command": argv[0], "args": [*argv[1:], "mcp"], "env": env}
    return data


def remove_mcp_server(data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and is_mnemo_server(servers.get(MCP_NAME)):
        data = {**data, "mcpServers": {k: v for k, v in servers.items() if k != MCP_NAME}}
    return data


def hook_command(base: list[str], event: str) -> str:
    """The shell command line Claude Code runs for `event`."""
    env, argv = _split_env(base)
    words = [f"{name}={shlex.quote(value)}" for name, value in env.items()]
    return " ".join(words + [shlex.quote(part) for part in [*argv, "hook", event]])


def is_mnemo_hook(entry: Any) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    try:
        tokens = shlex.split(entry["command"])
    except ValueError:
        return False
    if "hook" not in tokens:
        return False
    _, head = _split_env(tokens[: tokens.index("hook")])
    return _is_mnemo_launcher(head) and tokens[tokens.index("hook") + 1 : tokens.index("hook") + 2] != []


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


# --------------------------------------------------------------------------------------
# files


def _paths(args: Any) -> dict[str, Path]:
    home = Path(os.environ.get("HOME") or Path.home())
    settings_file = getattr(args, "settings_file", None)
    return {
        "settings": Path(settings_file).expanduser() if settings_file else home / ".claude" / "settings.json",
        "mcp": home / ".claude.json",
    }


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


def _report(what: str, path: Path, changed: bool, done: str, unchanged: str) -> None:
    print(f"{what}: {done if changed else unchanged} ({path})")
