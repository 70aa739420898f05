"""`mnemo install claude-code|codex|cursor` / `mnemo uninstall ...`.

Claude Code reads hooks from ~/.claude/settings.json (`hooks.<Event>[] = {matcher?,
hooks: [{type: "command", command, timeout, async?}]}`) and user-scope MCP servers from
~/.claude.json (`mcpServers.<name> = {type: "stdio", command, args, env}`).

Install adds mnemo's hooks, the `mcp-search` server and `permissions.allow` entries
(`mcp__<server>__<tool>`) for exactly its read-only tools: Claude Code's plan mode and `claude
-p` refuse an MCP tool that no rule allows, readOnlyHint or not (measured with 2.1.197), and
the file-read hook sends the agent to smart_outline and get_observations there; write tools
still ask. Install also adds (`--profile legacy`: the older
seven-tool server under its old name `claude-mem-search`, `--profile all`: both tool sets
under `mcp-search`; the profile rides in the server's env as MNEMO_MCP_PROFILE); uninstall
removes exactly those. Both are idempotent, keep a timestamped backup of every file they change, and
leave every other key, hook and server as it was. A file that is not valid JSON is
refused untouched.

The hooks that only write (tool uses, failures, sub-agent reports, compaction) are
`"async": true`, and they hand their work to a detached worker (capture.detach): the agent
never waits for them, and a host exiting meanwhile cancels nothing that was handed off.
Stop is synchronous but hands off at once too (see DETACHED_EVENTS). SessionStart and
UserPromptSubmit stay synchronous (the first injects context, the second must record the
prompt before the tool uses that follow it), and so does the file-context PreToolUse on
Read, whose reply is context for that very read. A non-default home (MNEMO_HOME or --home) and addresses
set at install time are carried into the hook commands and the server's env, so the
hooks talk to the stack the user chose, not a second one in ~/.mnemo.

Codex (~/.codex/config.toml) and Cursor (~/.cursor/mcp.json) get the MCP server:
capture/install_hosts.py.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from capture.install_common import (
    DEFAULT_PROFILE,
    MCP_NAME,
    MCP_NAMES,
    _is_mnemo_launcher,
    _split_env,
    _update_json,
    add_mcp_server,
    is_mnemo_server,
    launcher,
    mcp_server_for,
    remove_mcp_server,
)
from mnemo.errors import FailedPrecondition, MnemoError

__all__ = ["ASYNC_EVENTS", "DETACHED_EVENTS", "HOOK_EVENTS", "MCP_NAME", "add_hooks", "add_mcp_server",
           "hook_command", "is_mnemo_hook", "is_mnemo_server", "remove_hooks", "run_install", "run_uninstall"]

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
               "SubagentStop", "PreCompact", "Stop", "SessionEnd")
# SessionStart may start the stack; PreToolUse never waits for it (capture.hooks.FAST_EVENTS).
HOOK_TIMEOUTS = {"SessionStart": 60, "UserPromptSubmit": 30, "PreToolUse": 5, "PostToolUse": 30,
                 "PostToolUseFailure": 30, "SubagentStop": 30, "PreCompact": 60, "Stop": 60, "SessionEnd": 30}
ASYNC_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure", "SubagentStop", "PreCompact"})
# Stop is synchronous but hands its work to a detached worker at once (~the interpreter's
# start-up): Claude Code cancels async hooks still running when it exits, and `claude -p`
# exits right after Stop, before an async Stop could summarise anything (seen with 2.1.197,
# which fires no SessionEnd in -p mode either).
DETACHED_EVENTS = ASYNC_EVENTS | {"Stop"}
MATCHERS = {"PreToolUse": "Read", "PostToolUse": "*", "PostToolUseFailure": "*"}
DETACH_FLAG = "MNEMO_HOOK_DETACH"  # capture.detach.ENV_FLAG, kept here so install imports no hook code


def run_install(settings: Any, args: Any) -> int:
    host = getattr(args, "host", "claude-code")
    if host != "claude-code":
        from capture.install_hosts import install_host

        return install_host(host, settings, args)
    if getattr(settings, "server_url", ""):
        try:
            settings = server_runtime_install(settings)
        except MnemoError as err:
            print(f"mnemo install: {err}", file=sys.stderr)
            return 2
    name, profile_env = mcp_server_for(settings)
    paths = _paths(args)
    base = launcher(settings)
    allowed = read_only_tools(settings)
    hooks_changed = _update_json(paths["settings"],
                                 lambda data: allow_read_only(add_hooks(data, base), name, allowed))
    mcp_changed, conflict = False, ""
    try:
        mcp_changed = _update_json(paths["mcp"], lambda data: _with_one_server(data, base, name, profile_env))
    except FailedPrecondition as err:
        conflict = str(err)
    _report("hooks", paths["settings"], hooks_changed, "installed", "already installed")
    print(f"permissions: {len(allowed)} read-only tools of {name!r} allowed (plan mode, claude -p); "
          "write tools still ask")
    if conflict:
        print(f"MCP server: not registered: {conflict}", file=sys.stderr)
        return 1
    _report(f"MCP server {name!r}", paths["mcp"], mcp_changed, "registered", "already registered")
    print(f"mnemo runs as: {' '.join(shlex.quote(p) for p in base)}")
    return 0


def server_runtime_install(settings: Any) -> Any:
    """`--server URL --token-file F`: both checked now (a token file others can read is
    refused, like ssh refuses such a key), the file's absolute path carried into the hooks
    and the MCP entry (never the token itself)."""
    import dataclasses

    from mnemo.remote import check_server_url, read_token

    check_server_url(settings.server_url)
    token_file = str(Path(settings.token_file).expanduser().resolve()) if settings.token_file else ""
    read_token(token_file)
    return dataclasses.replace(settings, token_file=token_file)


def _with_one_server(data: dict[str, Any], base: list[str], name: str, env: dict[str, str]) -> dict[str, Any]:
    """mnemo's server registered under `name` only: a switch of profile (and so of name)
    leaves no second mnemo server behind."""
    others = tuple(other for other in MCP_NAMES if other != name)
    return remove_mcp_server(add_mcp_server(data, base, name, env), others)


def run_uninstall(settings: Any, args: Any) -> int:
    host = getattr(args, "host", "claude-code")
    if host != "claude-code":
        from capture.install_hosts import uninstall_host

        return uninstall_host(host, settings, args)
    paths = _paths(args)
    hooks_changed = _update_json(paths["settings"], lambda data: disallow_mnemo(remove_hooks(data)), create=False)
    mcp_changed = _update_json(paths["mcp"], remove_mcp_server, create=False)
    _report("hooks", paths["settings"], hooks_changed, "removed", "not installed")
    _report("MCP server " + " / ".join(repr(name) for name in MCP_NAMES), paths["mcp"], mcp_changed, "removed",
            "not registered")
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
        wanted: dict[str, Any] = {"type": "command", "command": hook_command(base, event),
                                  "timeout": HOOK_TIMEOUTS[event]}
        if event in ASYNC_EVENTS:
            wanted["async"] = True
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise FailedPrecondition(f'"hooks.{event}" in the Claude Code settings is not a list')
        mine = [h for g in groups if isinstance(g, dict) for h in (g.get("hooks") or []) if is_mnemo_hook(h)]
        if mine == [wanted]:
            continue
        stripped = _without_mnemo(groups)
        hooks[event] = groups if stripped is None else stripped
        group: dict[str, Any] = {"matcher": MATCHERS[event]} if event in MATCHERS else {}
        group["hooks"] = [wanted]
        hooks[event].append(group)
    return data


def read_only_tools(settings: Any) -> list[str]:
    """The read-only tools the gateway lists for these settings (profile, runtime): read from
    the tool table, so the allow list follows it."""
    from gateway.observation_tools import runtime_tools
    from gateway.tools import profile_tools

    profile = getattr(settings, "mcp_profile", "") or DEFAULT_PROFILE
    return [tool.name for tool in runtime_tools(settings, profile_tools(profile)) if tool.read_only]


def permission_rule(server: str, tool: str) -> str:
    """Claude Code's permission rule for one MCP tool of a server registered under `server`."""
    return f"mcp__{server}__{tool}"


def allow_read_only(data: dict[str, Any], server: str, tools: list[str]) -> dict[str, Any]:
    """Settings whose permissions.allow holds a rule for each of `tools` under `server` and no
    other rule install would add (another profile's, the other server name's); rules in place
    stay where they are, and every rule of the user's stays."""
    wanted = [permission_rule(server, tool) for tool in tools]
    data = disallow_mnemo(data, keep=frozenset(wanted))
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict) or not isinstance(permissions.setdefault("allow", []), list):
        raise FailedPrecondition('"permissions.allow" in the Claude Code settings is not a list; fix it by hand first')
    allow = permissions["allow"]
    allow += [rule for rule in wanted if rule not in allow]
    return data


def disallow_mnemo(data: dict[str, Any], keep: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Settings without the rules install adds but `keep` (a read-only tool of any profile, under
    either of mnemo's server names); rules the user wrote (a write tool's too) stay. Keys left
    empty by that are dropped."""
    from gateway.tools import BY_NAME

    data = json.loads(json.dumps(data))
    permissions = data.get("permissions")
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    if not isinstance(permissions, dict) or not isinstance(allow, list):
        return data
    ours = {permission_rule(server, tool.name) for server in MCP_NAMES
            for tool in BY_NAME.values() if tool.read_only} - keep
    kept = [rule for rule in allow if rule not in ours]
    if len(kept) == len(allow):
        return data
    permissions["allow"] = kept
    if not kept:
        del permissions["allow"]
        if not permissions:
            del data["permissions"]
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


def hook_command(base: list[str], event: str) -> str:
    """The shell command line Claude Code runs for `event`. Async events also detach
    their work (capture.detach): the host cancels async hooks still running at exit."""
    env, argv = _split_env(base)
    if event in DETACHED_EVENTS:
        env = {DETACH_FLAG: "1", **env}
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


# --------------------------------------------------------------------------------------
# files


def _paths(args: Any) -> dict[str, Path]:
    home = Path(os.environ.get("HOME") or Path.home())
    settings_file = getattr(args, "settings_file", None)
    return {
        "settings": Path(settings_file).expanduser() if settings_file else home / ".claude" / "settings.json",
        "mcp": home / ".claude.json",
    }


def _report(what: str, path: Path, changed: bool, done: str, unchanged: str) -> None:
    print(f"{what}: {done if changed else unchanged} ({path})")
