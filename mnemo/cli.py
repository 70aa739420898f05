"""The `mnemo` command. Subcommands import their modules lazily: hooks start a fresh
interpreter per event and must stay fast.

Every subcommand target has the signature `run(settings, args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mnemo.vocab import DEFAULT_PLATFORM, PRIVATE_UMASK

if TYPE_CHECKING:  # the CLI is on every hook's path: config is imported only when used
    from mnemo.config import Settings

    Command = Callable[[Settings, argparse.Namespace], int | None]

# subcommand -> "module:function"; the module is imported only when the subcommand runs.
COMMANDS = {
    "serve": "mnemo.serve:run",
    "mcp": "gateway.main:run",
    "up": "mnemo.stack:run_up",
    "down": "mnemo.stack:run_down",
    "status": "mnemo.stack:run_status",
    "supervise": "mnemo.supervisor:run",
    "reindex": "vector_svc.main:run_reindex",
    "hook": "capture.hooks:run",
    "install": "capture.install:run_install",
    "uninstall": "capture.install:run_uninstall",
    "import": "capture.transfer:run_import",
    "export": "capture.transfer:run_export",
    "ui": "viewer.main:run",
    "search": "viewer.terminal:run_search",
    "show": "viewer.terminal:run_show",
    "forget": "viewer.terminal:run_forget",
    "mark-wrong": "viewer.terminal:run_mark_wrong",
    "stats": "viewer.terminal:run_stats",
    "doctor": "viewer.terminal:run_doctor",
    "server": "mnemo.server_tokens:run",
}

# Terminal commands over the memory; their flags are declared beside them ("module:function",
# called as function(name, parser)) and loaded only when the full parser is built.
TERMINAL_COMMANDS = {
    "search": "search the memory (the engine mem_search uses)",
    "show": "show one record in full",
    "forget": "delete records, a session or a project everywhere",
    "mark-wrong": "mark records as wrong: they stop being returned (--undo takes it back)",
    "stats": "counts, sizes, vector lag, activity",
    "doctor": "check the install and say what to fix",
}
TERMINAL_FLAGS = "viewer.terminal:add_arguments"

# Flags that map 1:1 onto settings fields (flags > environment > config.toml > defaults).
_SETTING_FLAGS = {
    "--home": "home",
    "--store-addr": "store_addr",
    "--vector-addr": "vector_addr",
    "--search-addr": "search_addr",
    "--chroma-url": "chroma_url",
    "--embedder": "embedder",
    "--log-level": "log_level",
    "--log-file": "log_file",
    "--db-path": "db_path",
    "--backend": "store_backend",
    "--dsn": "store_dsn",
    "--profile": "mcp_profile",
    "--server": "server_url",
    "--token-file": "token_file",
    "--auth-token-file": "auth_token_file",
}


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    for flag, dest in _SETTING_FLAGS.items():
        parser.add_argument(flag, dest=f"setting_{dest}", default=None, help=f"setting `{dest}`")
    parser.add_argument(
        "-o", "--option", action="append", default=[], metavar="KEY=VALUE",
        help="any other setting, e.g. -o cursor_ttl_s=60",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemo", description="Persistent memory for coding agents.")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run one service in the foreground")
    serve.add_argument("service", choices=["store", "vector", "search"])
    serve.add_argument("--listen", default=None, help="unix:PATH or HOST:PORT (port 0 = any free port)")
    serve.add_argument("--user-tokens", action="store_true", default=None,
                       help="also accept per-user tokens (`mnemo server token add`); needs auth_token")
    serve.add_argument("--insecure-no-auth", action="store_true", default=None,
                       help="UNSAFE: serve loopback TCP without a token (any local user can read and write)")
    _add_setting_flags(serve)

    for name, text in (("mcp", "serve MCP over stdio (what an agent host starts)"),
                       ("down", "stop the local stack"), ("status", "show each service and its health"),
                       ("supervise", "start the local services and restart any that dies (what `up` starts)"),
                       ("reindex", "rebuild the vector index from the store")):
        _add_setting_flags(sub.add_parser(name, help=text))

    up = sub.add_parser("up", help="start the local stack (detached unless --foreground)")
    up.add_argument("--foreground", action="store_true", help="stay attached; Ctrl-C stops everything")
    _add_setting_flags(up)

    ui = sub.add_parser("ui", help="the web viewer on loopback (prints a one-time URL)")
    ui.add_argument("--port", type=int, default=0, help="loopback port (default: any free port)")
    ui.add_argument("--open", action="store_true", help="open the URL in the default browser")
    _add_setting_flags(ui)

    add_terminal_flags = _resolve(TERMINAL_FLAGS)
    for name, text in TERMINAL_COMMANDS.items():
        command = sub.add_parser(name, help=text)
        add_terminal_flags(name, command)
        _add_setting_flags(command)

    hook = sub.add_parser("hook", help="handle one agent-host hook event (JSON on stdin)")
    hook.add_argument("event", help=("SessionStart | UserPromptSubmit | PreToolUse | PostToolUse | "
                                     "PostToolUseFailure | SubagentStop | PreCompact | Stop | SessionEnd"))
    hook.add_argument("--platform", default=DEFAULT_PLATFORM, help="host family (claude, codex, cursor)")
    _add_setting_flags(hook)

    for name in ("install", "uninstall"):
        target = sub.add_parser(name, help=f"{name} mnemo's MCP server and hooks for a host")
        target.add_argument("host", choices=["claude-code", "codex", "cursor"])
        target.add_argument(
            "--settings-file", default=None, help="host settings file (default ~/.claude/settings.json)"
        )
        _add_setting_flags(target)

    imp = sub.add_parser("import", help="import a claude-mem database, a claude-mem export, or mnemo JSONL")
    imp.add_argument("path")
    _add_setting_flags(imp)

    server = sub.add_parser("server", help="administer a team server: `mnemo server token add|list|revoke`")
    _resolve("mnemo.server_tokens:add_arguments")(server, _add_setting_flags)

    exp = sub.add_parser("export", help="export memory as JSONL (stdout when no path)")
    exp.add_argument("path", nargs="?", default=None)
    exp.add_argument("--project", default=None)
    _add_setting_flags(exp)
    return parser


def settings_from_args(args: argparse.Namespace) -> Settings:
    from mnemo.config import load_settings

    flags = {dest: getattr(args, f"setting_{dest}", None) for dest in _SETTING_FLAGS.values()}
    for item in getattr(args, "option", []):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"mnemo: -o expects KEY=VALUE, got {item!r}")
        flags[key.strip()] = value
    for switch in ("user_tokens", "insecure_no_auth"):
        if getattr(args, switch, None):
            flags[switch] = True
    if getattr(args, "listen", None):
        flags[f"{args.service}_listen"] = args.listen
    return load_settings(flags)


def _hook_parser() -> argparse.ArgumentParser:
    # Built alone, not through build_parser(): hooks run once per event and every ms counts.
    parser = argparse.ArgumentParser(prog="mnemo hook")
    parser.add_argument("event")
    parser.add_argument("--platform", default=DEFAULT_PLATFORM)
    _add_setting_flags(parser)
    return parser


def _mcp_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemo mcp", description="serve MCP over stdio (what an agent host starts)")
    _add_setting_flags(parser)
    parser.set_defaults(command="mcp")
    return parser


def _resolve(target: str) -> Any:
    """The function a "module:function" string names, its module imported only now."""
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)


def _command(name: str) -> Command:
    """The function serving a command, imported only now: each process loads only its own code."""
    command: Command = _resolve(COMMANDS[name])
    return command


def run_hook(argv: Sequence[str]) -> int:
    """`mnemo hook EVENT`: never breaks the host. Whatever fails before the hook module
    takes over (bad flags, a broken config.toml), the host still gets `{}` and exit 0."""
    try:
        args = _hook_parser().parse_args(argv)
        args.command = "hook"
        settings = settings_from_args(args)
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the host must never see a hook fail
        print(f"mnemo hook: ignored: {err}", file=sys.stderr)
        sys.stdout.write("{}")
        return 0
    return int(_command("hook")(settings, args) or 0)


def _skip_pretty_printing() -> None:
    """structlog imports `rich` (about a third of its import time and 5 MiB per process) only
    for pretty console tracebacks, which mnemo never renders (it logs JSON). Marking rich as
    absent makes structlog skip it, in every mnemo process (services, hooks, the gateway)."""
    sys.modules.setdefault("rich", None)  # type: ignore[arg-type]


def main(argv: Sequence[str] | None = None) -> int:
    # First of all: whatever this process or its children create under $MNEMO_HOME (the
    # database, its -wal/-shm, Chroma's files, logs, the hooks' journal) is born private.
    os.umask(PRIVATE_UMASK)
    _skip_pretty_printing()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        return run_hook(argv[1:])
    # `mnemo mcp` alone: a host times its start, and the full parser imports every terminal command.
    args = _mcp_parser().parse_args(argv[1:]) if argv[:1] == ["mcp"] else build_parser().parse_args(argv)
    from mnemo.errors import MnemoError

    try:
        settings = settings_from_args(args)
        return int(_command(args.command)(settings, args) or 0)
    except MnemoError as err:
        print(f"mnemo {args.command}: {err.code}: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
