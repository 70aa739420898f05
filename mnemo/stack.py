"""The local stack's lifecycle: start on demand under a spawn lock, `mnemo up|down|status`.

- `ensure_stack` makes store, vector and search answer health, starting the ones that are
  down as DETACHED processes (own session, logs under $MNEMO_HOME/logs/, pid files under
  $MNEMO_HOME/run/) in dependency order. Concurrent starters (gateways, hooks) race for
  $MNEMO_HOME/run/spawn.lock, created with O_CREAT|O_EXCL; losers wait for health instead
  of spawning. Only the owner releases the lock; it is broken when its owner is dead or
  it is older than settings.spawn_lock_stale_s, so a crashed starter blocks no one.
- `run_up --foreground` starts the three as children, prints how to register the gateway,
  and stops them on Ctrl-C/SIGTERM (`make run`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemo.config import SERVICES, Settings, ensure_private_dirs
from mnemo.logs import get_logger

log = get_logger(__name__)

POLL_S = 0.05
STOP_WAIT_S = 10.0
LOCK_NAME = "spawn.lock"
# Detached children are never waited for here; holding them keeps Popen from warning
# "still running" when the object is collected.
_DETACHED: list[subprocess.Popen] = []


# -- health --------------------------------------------------------------------------
def service_healthy(settings: Settings, service: str, timeout: float = 1.0) -> bool:
    from mnemo.grpc_client import check_health

    return check_health(settings.address(service), timeout=timeout, tls_ca=settings.tls_ca)


def all_healthy(settings: Settings) -> bool:
    return all(service_healthy(settings, svc) for svc in SERVICES)


def is_local(settings: Settings, service: str) -> bool:
    """We can start a service only when clients reach it where it would listen here."""
    return not getattr(settings, f"{service}_addr")


def wait_healthy(settings: Settings, services: tuple[str, ...], deadline: float,
                 alive: Callable[[], bool] = lambda: True) -> bool:
    pending = list(services)
    while pending:
        if service_healthy(settings, pending[0], timeout=min(1.0, max(0.05, deadline - time.monotonic()))):
            pending.pop(0)
            continue
        if time.monotonic() >= deadline or not alive():
            return False
        time.sleep(POLL_S)
    return True


# -- pid files -----------------------------------------------------------------------
def pid_path(settings: Settings, service: str) -> Path:
    return settings.run_dir / f"{service}.pid"


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child (not reaped yet) is dead for our purposes
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _is_our_service(pid: int, service: str) -> bool:
    """Guard against PID reuse: the process must be `... mnemo.cli serve <service>`."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return pid_alive(pid)  # no /proc (macOS): trust the pid file
    return b"serve" in argv and service.encode() in argv


@dataclass
class PidInfo:
    pid: int
    started_at: float


def read_pid(settings: Settings, service: str) -> PidInfo | None:
    try:
        data = json.loads(pid_path(settings, service).read_text())
        info = PidInfo(int(data["pid"]), float(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if pid_alive(info.pid) and _is_our_service(info.pid, service) else None


def write_pid(settings: Settings, service: str, pid: int) -> None:
    path = pid_path(settings, service)
    tmp = path.with_suffix(".pid.tmp")
    tmp.write_text(json.dumps({"pid": pid, "started_at": time.time(), "address": settings.address(service)}))
    tmp.replace(path)


# -- spawn lock ----------------------------------------------------------------------
def lock_path(settings: Settings) -> Path:
    return settings.run_dir / LOCK_NAME


def try_acquire_lock(settings: Settings) -> bool:
    """Create the lock exclusively; break it once if it is stale. False = someone else holds it."""
    path = lock_path(settings)
    for attempt in (1, 2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            if attempt == 1 and _break_if_stale(settings, path):
                continue
            return False
        with os.fdopen(fd, "w") as fh:
            json.dump({"pid": os.getpid(), "started_at": time.time()}, fh)
        return True
    return False


def _read_lock(path: Path) -> tuple[int, float] | None:
    try:
        data = json.loads(path.read_text())
        return int(data["pid"]), float(data["started_at"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        # Being written right now, or garbage: judge it by its age alone.
        try:
            return 0, path.stat().st_mtime
        except FileNotFoundError:
            return None


def _break_if_stale(settings: Settings, path: Path) -> bool:
    """Remove the lock when its owner is dead or it is too old. True when it is gone."""
    owner = _read_lock(path)
    if owner is None:
        return True
    pid, started = owner
    too_old = time.time() - started > settings.spawn_lock_stale_s
    dead = pid > 0 and not pid_alive(pid)
    half_written = pid == 0 and time.time() - started > 2.0
    if not (too_old or dead or half_written):
        return False
    if _read_lock(path) != owner:  # someone else broke and retook it meanwhile
        return False
    log.warning("spawn_lock_broken", owner_pid=pid, age_s=round(time.time() - started, 1), dead=dead)
    path.unlink(missing_ok=True)
    return True


def release_lock(settings: Settings) -> None:
    """Only the owner removes the lock."""
    path = lock_path(settings)
    owner = _read_lock(path)
    if owner is not None and owner[0] == os.getpid():
        path.unlink(missing_ok=True)


# -- spawning ------------------------------------------------------------------------
# The directory holding the mnemo package: spawned services import from it even when the
# package is not installed into the interpreter (a source checkout).
CODE_ROOT = Path(__file__).resolve().parents[1]


def _settings_env(settings: Settings) -> dict[str, str]:
    """Environment that gives a spawned service exactly these settings (non-defaults as MNEMO_*)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env["MNEMO_HOME"] = str(settings.home)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    if str(CODE_ROOT) not in paths:
        env["PYTHONPATH"] = os.pathsep.join([str(CODE_ROOT), *paths])
    defaults = Settings()
    for f in dataclasses.fields(Settings):
        if f.name in ("home", "extra", "log_file"):  # services log to logs/<service>.log
            continue
        value = getattr(settings, f.name)
        if value == getattr(defaults, f.name):
            continue
        env[f"MNEMO_{f.name.upper()}"] = ",".join(value) if isinstance(value, tuple) else str(value)
    return env


def service_argv(service: str) -> list[str]:
    return [sys.executable, "-m", "mnemo.cli", "serve", service]


def spawn_service(settings: Settings, service: str, *, detached: bool = True) -> subprocess.Popen:
    """Start one service; its output goes to $MNEMO_HOME/logs/<service>.log."""
    log_file = open(settings.logs_dir / f"{service}.log", "ab")  # noqa: SIM115 - handed to the child
    try:
        proc = subprocess.Popen(
            service_argv(service),
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
            env=_settings_env(settings),
            cwd=str(settings.home),
            start_new_session=detached,
            close_fds=True,
        )
    finally:
        log_file.close()
    write_pid(settings, service, proc.pid)
    if detached:
        _DETACHED.append(proc)
    log.info("service_spawned", service=service, pid=proc.pid, detached=detached)
    return proc


def _running(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def _start_missing(
    settings: Settings, deadline: float, *, detached: bool = True
) -> tuple[bool, list[subprocess.Popen]]:
    """Owner of the lock: start what is down, in dependency order, waiting for each."""
    started: list[subprocess.Popen] = []
    for service in SERVICES:
        if service_healthy(settings, service):
            continue
        if not is_local(settings, service):
            log.warning("remote_service_down", service=service, address=settings.address(service))
            return False, started
        existing = read_pid(settings, service)
        if existing is not None:
            # Started by someone else and still warming up (or stuck): wait, never start a second one.
            alive: Callable[[], bool] = functools.partial(pid_alive, existing.pid)
        else:
            proc = spawn_service(settings, service, detached=detached)
            started.append(proc)
            alive = functools.partial(_running, proc)
        if not wait_healthy(settings, (service,), deadline, alive):
            log.error("service_not_healthy", service=service, log=str(settings.logs_dir / f"{service}.log"))
            return False, started
    return True, started


def ensure_stack(settings: Settings, timeout: float | None = None) -> bool:
    """True once store, vector and search all answer health; starts the missing ones once."""
    timeout = settings.start_timeout_s if timeout is None else timeout
    deadline = time.monotonic() + timeout
    if all_healthy(settings):
        return True
    ensure_private_dirs(settings)
    while True:
        if try_acquire_lock(settings):
            try:
                return _start_missing(settings, deadline)[0]
            finally:
                release_lock(settings)
        # Another starter holds the lock: wait for its stack, or for the lock to go away.
        if all_healthy(settings):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S * 2)


# -- mnemo status ----------------------------------------------------------------------
def _fmt_uptime(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def status_rows(settings: Settings) -> list[dict[str, Any]]:
    rows = []
    for service in SERVICES:
        info = read_pid(settings, service)
        rows.append(
            {
                "service": service,
                "address": settings.address(service),
                "pid": info.pid if info else None,
                "uptime": _fmt_uptime(time.time() - info.started_at) if info else "-",
                "healthy": service_healthy(settings, service),
            }
        )
    return rows


def run_status(settings: Settings, args: Any) -> int:
    rows = status_rows(settings)
    print(f"{'SERVICE':<8} {'HEALTH':<9} {'PID':>8} {'UPTIME':>10}  ADDRESS")
    for row in rows:
        health = "healthy" if row["healthy"] else "down"
        print(f"{row['service']:<8} {health:<9} {row['pid'] or '-':>8} {row['uptime']:>10}  {row['address']}")
    return 0 if all(row["healthy"] for row in rows) else 1


# -- mnemo down ----------------------------------------------------------------------
def run_down(settings: Settings, args: Any) -> int:
    """SIGTERM each service from its pid file (search, vector, store), wait, clean pid files."""
    stopped = 0
    for service in reversed(SERVICES):
        info = read_pid(settings, service)
        if info is None:
            pid_path(settings, service).unlink(missing_ok=True)
            continue
        if _terminate(info.pid):
            stopped += 1
        pid_path(settings, service).unlink(missing_ok=True)
        print(f"stopped {service} (pid {info.pid})")
    if not stopped:
        print("nothing to stop: no service started by mnemo is running")
    return 0


def _terminate(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + STOP_WAIT_S
    while pid_alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(POLL_S)
    if pid_alive(pid):
        log.warning("service_killed", pid=pid)
        os.kill(pid, signal.SIGKILL)
    _reap(pid)
    return True


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


# -- mnemo up --------------------------------------------------------------------------
def registration_text(settings: Settings) -> str:
    """The exact command that registers the gateway with Claude Code, and a .mcp.json snippet."""
    exe = Path(sys.executable).with_name("mnemo")
    default_home = Path("~/.mnemo").expanduser().resolve()
    env = {} if settings.home == default_home else {"MNEMO_HOME": str(settings.home)}
    if exe.exists():
        argv = [str(exe), "mcp"]
    else:  # not installed (a bare source checkout): run the module from the checkout
        argv = [sys.executable, "-m", "mnemo.cli", "mcp"]
        env["PYTHONPATH"] = str(CODE_ROOT)
    command, args = argv[0], argv[1:]
    env_flags = "".join(f" -e {k}={v}" for k, v in env.items())
    snippet = {"mcpServers": {"mcp-search": {"command": command, "args": args, **({"env": env} if env else {})}}}
    return (
        "Register the gateway with Claude Code:\n"
        f"  claude mcp add mcp-search{env_flags} -- {' '.join(argv)}\n"
        "or add this to .mcp.json:\n" + "\n".join("  " + line for line in json.dumps(snippet, indent=2).splitlines())
    )


def run_up(settings: Settings, args: Any) -> int:
    from mnemo.logs import configure_logging

    ensure_private_dirs(settings)
    configure_logging(settings.log_level, settings.log_file or None, service="mnemo-up")
    if getattr(args, "foreground", False):
        return _run_foreground(settings)
    if not ensure_stack(settings, settings.start_timeout_s):
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


def _run_foreground(settings: Settings) -> int:
    if any(service_healthy(settings, svc) for svc in SERVICES):
        print("mnemo up: a stack is already running here; `mnemo down` stops it.", file=sys.stderr)
        run_status(settings, None)
        return 1
    stop = {"requested": False}

    def request_stop(signum, _frame):
        stop["requested"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    deadline = time.monotonic() + settings.start_timeout_s
    children: list[subprocess.Popen] = []
    try:
        if not try_acquire_lock(settings):
            print("mnemo up: another process is starting the stack; try `mnemo status`.", file=sys.stderr)
            return 1
        try:
            ok, children = _start_missing(settings, deadline, detached=False)
        finally:
            release_lock(settings)
        if not ok:
            print(f"mnemo up: the stack did not become healthy; see {settings.logs_dir}/", file=sys.stderr)
            return 1
        run_status(settings, None)
        print()
        print(registration_text(settings))
        print("\nServing. Press Ctrl-C to stop.", flush=True)
        while not stop["requested"]:
            dead = [c for c in children if c.poll() is not None]
            if dead:
                print(
                    f"mnemo up: a service exited (pid {dead[0].pid}, code {dead[0].returncode}); stopping",
                    file=sys.stderr,
                )
                return 1
            time.sleep(0.2)
        return 0
    finally:
        _stop_children(settings, children)


def _stop_children(settings: Settings, children: list[subprocess.Popen]) -> None:
    for proc in reversed(children):
        if proc.poll() is None:
            proc.terminate()
    for proc in reversed(children):
        try:
            proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for service in SERVICES:
        info = read_pid(settings, service)
        if info is None:
            pid_path(settings, service).unlink(missing_ok=True)
    if children:
        print("stopped", flush=True)
