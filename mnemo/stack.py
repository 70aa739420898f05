"""The local stack's lifecycle: start on demand under a spawn lock, `mnemo up|down|status`.

- `ensure_stack` makes store, vector and search answer health. When some are down it
  starts the supervisor (mnemo/supervisor.py), detached, which starts them in dependency
  order and restarts any that dies. Concurrent starters (gateways, hooks) race for the
  spawn lock, run/spawn.lock: an flock that dies with its owner (mnemo/spawnlock.py), so
  a starter killed mid-start blocks no one and a pid in the file, reused or not, decides
  nothing. The winner starts the supervisor unless one already runs; the supervisor
  finishes the start even when its starter exits, and is itself one per home.
- `run_up --foreground` runs the supervisor in the foreground, prints how to register
  the gateway, and stops everything on Ctrl-C/SIGTERM (`make run`).
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from mnemo import spawnlock, supervisor, wake
from mnemo.config import SERVICES, Settings, ensure_private_dirs, local_services
from mnemo.logs import get_logger
from mnemo.processes import (  # noqa: F401 - re-exported: the stack's API for callers and tests
    CODE_ROOT,
    POLL_S,
    STOP_WAIT_S,
    _reap,
    _terminate,
    all_healthy,
    is_local,
    pid_alive,
    pid_path,
    read_pid,
    service_healthy,
    settings_env,
    wait_or_kill,
)
from mnemo.vocab import MCP_SERVER_NAME

log = get_logger(__name__)

LOCK_NAME = "spawn.lock"


# -- spawn lock ----------------------------------------------------------------------
def lock_path(settings: Settings) -> Path:
    return settings.run_dir / LOCK_NAME


def try_acquire_lock(settings: Settings) -> bool:
    """Take the spawn lock without waiting; False while another live process holds it."""
    return spawnlock.acquire(lock_path(settings))


def release_lock(settings: Settings) -> None:
    """Only the owner releases (and removes) the lock."""
    spawnlock.release(lock_path(settings))


def _local_services_down(settings: Settings) -> list[str]:
    """The local services that do not answer health, less those resting by design (vector_svc
    after vector_idle_exit_s): those are asked to wake (mnemo/wake.py) and not waited for, since
    searches answer lexically while vector_svc warms up."""
    down = [svc for svc in local_services(settings) if not service_healthy(settings, svc)]
    return [svc for svc in down if not wake.request(settings.run_dir, svc)]


# Told, while ensure_stack waits, which local services do not answer yet (progress).
WaitingFor = Callable[[list[str]], None]


def ensure_stack(settings: Settings, timeout: float | None = None, waiting: WaitingFor | None = None) -> bool:
    """True once store, vector and search all answer health (store and search with `vector = "off"`);
    starts the supervisor once. `waiting` hears which services are still down, once per poll."""
    timeout = settings.start_timeout_s if timeout is None else timeout
    deadline = time.monotonic() + timeout
    down = _local_services_down(settings)
    if not down:
        return True
    if any(not is_local(settings, svc) for svc in down):
        log.warning("remote_service_down", services=down)
        return False
    ensure_private_dirs(settings)
    while True:
        if try_acquire_lock(settings):
            try:
                if not supervisor.is_running(settings):
                    supervisor.start_detached(settings)
            finally:
                release_lock(settings)
            break
        if not _local_services_down(settings) or time.monotonic() >= deadline:
            return not _local_services_down(settings)
        if waiting:
            waiting(_local_services_down(settings))
        time.sleep(POLL_S * 2)
    # The supervisor starts them; it keeps running (and finishes) even if this process dies.
    return _wait_for_stack(settings, deadline, waiting)


def _wait_for_stack(settings: Settings, deadline: float, waiting: WaitingFor | None = None) -> bool:
    while down := _local_services_down(settings):
        if time.monotonic() >= deadline:
            log.error("stack_not_healthy", logs=str(settings.logs_dir))
            return False
        if waiting:
            waiting(down)
        time.sleep(POLL_S * 2)
    return True


def ensure_stack_shown(settings: Settings, timeout: float | None = None) -> bool:
    """ensure_stack for a person at a terminal: while services start, one progress line on
    stderr says which ones it still waits for (nothing when the stack is already up)."""
    from mnemo.cli import route_logs
    from mnemo.progress import Progress

    ensure_private_dirs(settings)
    route_logs(settings)  # the home exists now: its logs go to logs/cli.log, not to the terminal
    progress = Progress()
    shown: list[bool] = []

    def waiting(down: list[str]) -> None:
        shown.append(True)
        progress.update(f"starting the local stack: waiting for {', '.join(down)}")

    ok = ensure_stack(settings, timeout, waiting)
    if shown:
        (progress.done if ok else progress.fail)(
            "local stack started" if ok else f"the local stack did not start; see {settings.logs_dir}/")
    return ok


# -- mnemo status ----------------------------------------------------------------------
def _fmt_uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def status_rows(settings: Settings) -> list[dict[str, Any]]:
    rows = []
    restarts = supervisor.restarts(settings)
    resting = wake.resting(settings.run_dir)
    for service in local_services(settings):
        info = read_pid(settings, service)
        rows.append(
            {
                "service": service,
                "address": settings.address(service),
                "pid": info.pid if info else None,
                "uptime": _fmt_uptime(time.time() - info.started_at) if info else "-",
                "healthy": service_healthy(settings, service),
                "resting": service in resting,  # idled out; the next search wakes it (mnemo/wake.py)
                "restarts": restarts.get(service, 0),
            }
        )
    return rows


def run_status(settings: Settings, args: Any) -> int:
    rows = status_rows(settings)
    print(f"{'SERVICE':<8} {'HEALTH':<9} {'PID':>8} {'UPTIME':>10} {'RESTARTS':>8}  ADDRESS")
    for row in rows:
        health = "healthy" if row["healthy"] else "idle" if row["resting"] else "down"
        print(f"{row['service']:<8} {health:<9} {row['pid'] or '-':>8} {row['uptime']:>10} "
              f"{row['restarts']:>8}  {row['address']}")
    print("supervisor: " + ("running (restarts dead services)" if supervisor.is_running(settings)
                            else "not running (nothing restarts a dead service)"))
    if settings.vector == "off":
        print('vector: off (vector = "off": full-text search only)')
    return 0 if all(row["healthy"] or row["resting"] for row in rows) else 1


# -- mnemo down ----------------------------------------------------------------------
def run_down(settings: Settings, args: Any) -> int:
    """Stop the supervisor first (it would restart what follows; it stops its children),
    then SIGTERM what is left from the pid files (search, vector, store) and clean them."""
    running = {service: read_pid(settings, service) for service in SERVICES}
    _stop_supervisor(settings)
    stopped = 0
    for service in reversed(SERVICES):
        info = running[service]
        if info is not None and pid_alive(info.pid):
            _terminate(info.pid)
        pid_path(settings, service).unlink(missing_ok=True)
        if info is not None:
            stopped += 1
            print(f"stopped {service} (pid {info.pid})")
    if not stopped:
        print("nothing to stop: no service started by mnemo is running")
    return 0


def _stop_supervisor(settings: Settings) -> None:
    try:
        pid = int(json.loads(supervisor.state_path(settings).read_text())["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return
    if supervisor.is_running(settings) and pid_alive(pid):
        _terminate(pid)


# -- mnemo up --------------------------------------------------------------------------
def registration_text(settings: Settings) -> str:
    """The exact command that registers the gateway with Claude Code for every folder (user
    scope: Claude Code's default scope, "local", registers it for the current folder only),
    and a .mcp.json snippet."""
    exe = Path(sys.executable).with_name("mnemo")
    default_home = Path("~/.mnemo").expanduser().resolve()
    env = {} if settings.home == default_home else {"MNEMO_HOME": str(settings.home)}
    if exe.exists():
        argv = [str(exe), "mcp"]
    else:  # not installed (a bare source checkout): run the module from the checkout
        argv = [sys.executable, "-m", "mnemo.cli", "mcp"]
        env["PYTHONPATH"] = str(CODE_ROOT)
    command, args = argv[0], argv[1:]
    env_flags = "".join(f" -e {shlex.quote(f'{k}={v}')}" for k, v in env.items())
    snippet = {"mcpServers": {MCP_SERVER_NAME: {"command": command, "args": args, **({"env": env} if env else {})}}}
    return (
        "Register the gateway with Claude Code, for every folder:\n"
        f"  claude mcp add -s user {MCP_SERVER_NAME}{env_flags} -- {shlex.join(argv)}\n"
        f"or, with the hooks that record sessions too: {shlex.join([*argv[:-1], 'install', 'claude-code'])}\n"
        "Other hosts: add this to their MCP configuration (.mcp.json, .cursor/mcp.json):\n"
        + "\n".join("  " + line for line in json.dumps(snippet, indent=2).splitlines())
    )


# -- mnemo wait ------------------------------------------------------------------------
def run_wait(settings: Settings, args: Any) -> int:
    """`mnemo wait [ADDRESS...]`: return once each address answers health (default: the
    local stack's services); for scripts that start a service in the background."""
    from mnemo.grpc_client import check_health

    addresses = list(getattr(args, "addresses", None) or [settings.address(s) for s in local_services(settings)])
    deadline = time.monotonic() + float(getattr(args, "timeout", 30.0))
    waiting = list(addresses)
    while waiting:
        waiting = [a for a in waiting if not check_health(a, tls_ca=settings.tls_ca, timeout=POLL_S * 4)]
        if not waiting:
            break
        if time.monotonic() >= deadline:
            print(f"mnemo wait: no health answer from {', '.join(waiting)} within {args.timeout:g} s; "
                  "is the service started, and is the address right?", file=sys.stderr)
            return 1
        time.sleep(POLL_S)
    return 0


def run_up(settings: Settings, args: Any) -> int:
    from mnemo.cli import route_logs

    ensure_private_dirs(settings)
    route_logs(settings)  # to $MNEMO_HOME/logs/cli.log (the home exists now), not between these lines
    if getattr(args, "foreground", False):
        return _run_foreground(settings)
    if not ensure_stack_shown(settings, settings.start_timeout_s):
        print(
            f"mnemo up: the stack did not become healthy within {settings.start_timeout_s:g} s; "
            f"see {settings.logs_dir}/",
            file=sys.stderr,
        )
        run_status(settings, args)
        return 1
    run_status(settings, args)
    print()
    print(registration_text(settings))
    return 0


def _start_viewer(settings: Settings) -> subprocess.Popen[bytes]:
    """The web viewer beside a foreground stack (`make run`); it prints its one-time URL here."""
    return subprocess.Popen([sys.executable, "-m", "mnemo.cli", "ui"], env=settings_env(settings),
                            stdin=subprocess.DEVNULL)


def _stop_child(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    wait_or_kill(proc)


def _run_foreground(settings: Settings) -> int:
    if any(service_healthy(settings, svc) for svc in SERVICES):
        print("mnemo up: a stack is already running here; `mnemo down` stops it.", file=sys.stderr)
        run_status(settings, None)
        return 1
    received: list[int] = []

    def request_stop(signum, _frame):
        received.append(signum)

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    outcome: dict[str, bool] = {}
    viewer: list[subprocess.Popen[bytes]] = []

    from mnemo.progress import spinning

    def started(ok: bool) -> None:
        outcome["ok"] = ok
        starting.close()
        if not ok:
            print(f"mnemo up: the stack did not become healthy; see {settings.logs_dir}/", file=sys.stderr)
            return
        run_status(settings, None)
        print()
        print(registration_text(settings))
        viewer.append(_start_viewer(settings))
        print("\nServing. A service that dies is restarted. Press Ctrl-C to stop.", flush=True)

    # A spinner until the services answer (started() ends it), on a terminal only.
    starting = ExitStack()
    starting.enter_context(spinning(f"starting {', '.join(local_services(settings))}"))
    try:
        code = supervisor.supervise(settings, lambda: bool(received) or outcome.get("ok") is False, started)
    finally:
        starting.close()
        for proc in viewer:
            _stop_child(proc)
    if code == supervisor.ALREADY_RUNNING:
        print("mnemo up: a supervisor already runs here; try `mnemo status`.", file=sys.stderr)
        return 1
    print("stopped", flush=True)
    return 0 if outcome.get("ok") else 1
