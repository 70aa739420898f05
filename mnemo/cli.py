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
    "wait": "mnemo.stack:run_wait",
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
    "doctor": "viewer.doctor:run_doctor",
    "server": "mnemo.server_tokens:run",
}

# What `mnemo --help` lists, in this order: what a person types first, then what hosts,
# the supervisor and deployments run (kept apart so the first list fits a screen).
USER_COMMANDS = {
    "up": "start the local stack (detached unless --foreground)",
    "down": "stop the local stack",
    "status": "show each service and its health",
    "ui": "the web viewer on loopback (prints a one-time URL)",
    "search": "search the memory (the engine mem_search uses)",
    "show": "show one record in full",
    "forget": "delete records, a session or a project everywhere",
    "mark-wrong": "mark records as wrong: they stop being returned (--undo takes it back)",
    "stats": "counts, sizes, vector lag, activity",
    "doctor": "check the install and say what to fix",
    "install": "register mnemo's MCP server and hooks with a host",
    "uninstall": "remove mnemo's MCP server and hooks from a host",
    "import": "import a claude-mem database, a claude-mem export, or mnemo JSONL",
    "export": "export memory as JSONL (stdout when no path)",
    "reindex": "rebuild the vector index from the store",
}
INTERNAL_COMMANDS = {
    "mcp": "serve MCP over stdio (what an agent host starts)",
    "hook": "handle one agent-host hook event (JSON on stdin)",
    "serve": "run one service in the foreground",
    "supervise": "start the local services and restart any that dies (what `up` starts)",
    "wait": "wait until services answer health checks (scripts, the docs' examples)",
    "server": "administer a team server: `mnemo server token add|list|revoke`",
}
# Terminal commands over the memory; their flags are declared beside them
# (viewer.terminal.add_arguments) and loaded only when the full parser is built.
TERMINAL_COMMANDS = ("search", "show", "forget", "mark-wrong", "stats", "doctor")
TERMINAL_FLAGS = "viewer.terminal:add_arguments"
# Commands a person runs in a terminal: their logs go to $MNEMO_HOME/logs/cli.log, not
# between the lines they read (the others log to stderr, which hosts and services collect).
HUMAN_COMMANDS = frozenset(USER_COMMANDS) | {"wait", "server"}
LOG_FILE_NAME = "cli.log"
# Progress for long work: a spinner while a command that reports nothing runs, and what to
# watch after a command (the vector index catching up after an import).
SPINNERS = {"reindex": "rebuilding the vector index from the store"}
AFTERWARDS = {"import": "mnemo.catchup:follow_vectors"}
HELP_ALL = "--help-all"

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
# Whether the setting flags are listed in each command's help (only under --help-all:
# they are the same ~15 flags everywhere and would bury each command's own options).
_show_setting_flags = False


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    shown = _show_setting_flags
    group = parser.add_argument_group("settings and connection options (every command takes them)"
                                      if shown else None)
    for flag, dest in _SETTING_FLAGS.items():
        group.add_argument(flag, dest=f"setting_{dest}", default=None, metavar=dest.upper(),
                           help=f"setting `{dest}`" if shown else argparse.SUPPRESS)
    group.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                       help="any other setting, e.g. -o cursor_ttl_s=60" if shown else argparse.SUPPRESS)
    if not shown:
        parser.epilog = (f"Settings and connection flags (--home, --store-addr, -o KEY=VALUE, ...): "
                         f"{parser.prog} {HELP_ALL}")
    # The parser whose usage an unknown flag prints: the innermost one (set last, wins).
    parser.set_defaults(usage_parser=parser)


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("mnemo")
    except metadata.PackageNotFoundError:  # a bare checkout run with `python -m mnemo.cli`
        from mnemo import __version__

        return __version__


def _overview() -> str:
    def listing(commands: dict[str, str]) -> str:
        return "\n".join(f"  {name:<12}{text}" for name, text in commands.items())

    return (f"Persistent memory for coding agents.\n\ncommands:\n{listing(USER_COMMANDS)}\n\n"
            f"run by hosts, the supervisor and deployments:\n{listing(INTERNAL_COMMANDS)}")


def build_parser(show_all: bool = False) -> argparse.ArgumentParser:
    global _show_setting_flags
    _show_setting_flags = show_all
    parser = argparse.ArgumentParser(
        prog="mnemo", usage="mnemo <command> [options]", description=_overview(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="`mnemo <command> --help` shows a command's options.")
    parser.add_argument("--version", action="version", version=f"mnemo {_version()}")
    parser.add_argument(HELP_ALL, action="store_true", help="help with the settings flags every command takes")
    sub = parser.add_subparsers(dest="command", required=True, metavar="<command>", help=argparse.SUPPRESS)

    def command(name: str) -> argparse.ArgumentParser:
        text = USER_COMMANDS.get(name) or INTERNAL_COMMANDS[name]
        return sub.add_parser(name, prog=f"mnemo {name}", description=text[:1].upper() + text[1:] + ".")

    _add_serve_arguments(command("serve"))

    for name in ("mcp", "down", "status", "supervise", "reindex"):
        _add_setting_flags(command(name))

    up = command("up")
    up.add_argument("--foreground", action="store_true", help="stay attached; Ctrl-C stops everything")
    _add_setting_flags(up)

    wait = command("wait")
    wait.add_argument("addresses", nargs="*", metavar="ADDRESS",
                      help="HOST:PORT or unix:PATH of a service (default: the local stack's services)")
    wait.add_argument("--timeout", type=float, default=30.0, help="seconds to wait at most (default 30)")
    _add_setting_flags(wait)

    ui = command("ui")
    ui.add_argument("--port", type=port_number, default=None,
                    help="start a viewer on this loopback port (default: a new link into the viewer "
                         "running for this home, else a new viewer on any free port)")
    ui.add_argument("--open", action="store_true", help="open the URL in the default browser")
    ui.add_argument("--new", action="store_true",
                    help="start another viewer even when one already runs for this home")
    _add_setting_flags(ui)

    add_terminal_flags = _resolve(TERMINAL_FLAGS)
    for name in TERMINAL_COMMANDS:
        terminal = command(name)
        add_terminal_flags(name, terminal)
        _add_setting_flags(terminal)

    hook = command("hook")
    hook.add_argument("event", help=("SessionStart | UserPromptSubmit | PreToolUse | PostToolUse | "
                                     "PostToolUseFailure | SubagentStop | PreCompact | Stop | SessionEnd"))
    hook.add_argument("--platform", default=DEFAULT_PLATFORM, help="host family (claude, codex, cursor)")
    _add_setting_flags(hook)

    for name in ("install", "uninstall"):
        target = command(name)
        target.add_argument("host", choices=["claude-code", "codex", "cursor"])
        target.add_argument(
            "--settings-file", default=None, help="host settings file (default ~/.claude/settings.json)"
        )
        _add_setting_flags(target)

    imp = command("import")
    imp.add_argument("path")
    _add_setting_flags(imp)

    _resolve("mnemo.server_tokens:add_arguments")(command("server"), _add_setting_flags)

    exp = command("export")
    exp.add_argument("path", nargs="?", default=None)
    exp.add_argument("--project", default=None)
    _add_setting_flags(exp)
    return parser


def _add_serve_arguments(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("service", choices=["store", "vector", "search"])
    serve.add_argument("--listen", default=None, help="unix:PATH or HOST:PORT (port 0 = any free port)")
    serve.add_argument("--user-tokens", action="store_true", default=None,
                       help="also accept per-user tokens (`mnemo server token add`); needs auth_token")
    serve.add_argument("--insecure-no-auth", action="store_true", default=None,
                       help="UNSAFE: serve loopback TCP without a token (any local user can read and write)")
    _add_setting_flags(serve)


def port_number(text: str) -> int:
    """A TCP port for `--port` (0 = any free one), refused when out of range."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: use 1-65535, or 0 for any free port")
    return port


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


def _lean_parser(name: str) -> argparse.ArgumentParser:
    """One command's parser alone, for the commands that must not import every terminal command:
    `mcp` (a host times its start), `supervise` and `serve` (they stay up, idle included; the full
    parser imports the viewer's gRPC client, about 20 MiB the supervisor never uses, and
    importlib.metadata for --version: 1-2 MiB more in each service)."""
    text = INTERNAL_COMMANDS[name]
    if name == "serve":  # as build_parser's subparser describes it, so help and errors read the same
        parser = argparse.ArgumentParser(prog=f"mnemo {name}", description=text[:1].upper() + text[1:] + ".")
        _add_serve_arguments(parser)
    else:
        parser = argparse.ArgumentParser(prog=f"mnemo {name}", description=text)
        _add_setting_flags(parser)
    parser.set_defaults(command=name)
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


# The processes that stay up beside the stack and never speak TLS through Python's ssl module (gRPC
# has its own TLS; SQLite, hashlib's sha256 and hmac need no OpenSSL): `mnemo mcp` and the store and
# search services. vector_svc is left out: chromadb's HTTP client (chroma_url) uses ssl.
_NO_OPENSSL = (["mcp"], ["serve", "store"], ["serve", "search"])


def _skip_openssl(argv: list[str]) -> None:
    """asyncio (which grpc imports) loads `ssl`, and hashlib and hmac `_hashlib`: both map OpenSSL's
    libcrypto, 4.6 MiB RSS in each process that none of these uses. Import asyncio, hashlib and hmac
    while both read as absent, so they take their documented fallbacks (asyncio without TLS
    transports, hashlib's built-in sha256, hmac's pure-Python HMAC and _operator's compare_digest);
    then lift the block, so a later `import ssl` still works as usual (it loads libcrypto then)."""
    if not any(argv[: len(prefix)] == prefix for prefix in _NO_OPENSSL):
        return
    blocked = [name for name in ("ssl", "_ssl", "_hashlib") if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import asyncio  # noqa: F401
        import hashlib  # noqa: F401
        import hmac  # noqa: F401
    finally:
        for name in blocked:
            if name in sys.modules and sys.modules[name] is None:
                del sys.modules[name]


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line as argparse reads it, with the conventions people expect: bare
    `mnemo` shows the help, `--help-all` shows the settings flags too, and an unknown flag
    is reported with the usage of the command it was given to (not the top level's)."""
    show_all = HELP_ALL in argv
    if argv[:1] in (["mcp"], ["supervise"]) or (argv[:1] == ["serve"] and not show_all):
        return _lean_parser(argv[0]).parse_args(argv[1:])  # the full parser imports every terminal command
    parser = build_parser(show_all)
    if not argv:
        parser.print_help()
        raise SystemExit(0)
    if show_all:
        argv = ["--help" if arg == HELP_ALL else arg for arg in argv]
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        getattr(args, "usage_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    # First of all: whatever this process or its children create under $MNEMO_HOME (the
    # database, its -wal/-shm, Chroma's files, logs, the hooks' journal) is born private.
    os.umask(PRIVATE_UMASK)
    _skip_pretty_printing()
    argv = list(sys.argv[1:] if argv is None else argv)
    _skip_openssl(argv)
    if argv[:1] == ["hook"]:
        return run_hook(argv[1:])
    args = parse(argv)
    from mnemo.cli_errors import one_line

    settings = None
    try:
        settings = settings_from_args(args)
        if args.command in HUMAN_COMMANDS:
            route_logs(settings)
        return _run_shown(args, settings)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 - the CLI's boundary: a person reads one line, never a traceback
        if settings is not None and settings.log_level == "debug":
            raise
        print(f"mnemo {args.command}: {one_line(err, settings)}", file=sys.stderr)
        return 2


def _run_shown(args: argparse.Namespace, settings: Settings) -> int:
    """The command, with the progress a person at a terminal sees (mnemo/progress.py): a
    spinner during work that reports none of its own, and what follows it in the background."""
    from contextlib import nullcontext

    from mnemo.progress import spinning

    text = SPINNERS.get(args.command)
    with spinning(text) if text else nullcontext():
        code = int(_command(args.command)(settings, args) or 0)
    if code == 0 and args.command in AFTERWARDS:
        _resolve(AFTERWARDS[args.command])(settings)
    return code


def route_logs(settings: Settings) -> None:
    """A person's terminal shows what the command prints, not JSON log lines: they go to
    the log file (`--log-file`, else $MNEMO_HOME/logs/cli.log); `--log-level debug` without
    a file keeps them on stderr, for whoever asked. A home not created yet is not created
    for a log (`mnemo doctor` must see it as it is): until then only errors are shown."""
    from mnemo.logs import configure_logging

    if not settings.log_file and settings.log_level == "debug":
        configure_logging("debug", None, service="mnemo-cli")
        return
    if not settings.log_file and not settings.home.is_dir():
        configure_logging("error", None, service="mnemo-cli")
        return
    path = settings.log_file or str(settings.logs_dir / LOG_FILE_NAME)
    try:
        configure_logging(settings.log_level, path, service="mnemo-cli",
                          max_bytes=settings.log_max_bytes, backups=settings.log_backups)
    except OSError:  # no writable home: the command itself says so in one line; only errors are logged
        configure_logging("error", None, service="mnemo-cli")


if __name__ == "__main__":
    sys.exit(main())
