"""The local stack's processes: health checks, pid files, spawning and stopping a service.

A spawned service runs `python -m mnemo.cli serve <service>` with the starter's settings
(non-defaults passed as MNEMO_* variables). Its structured log is the rotated
$MNEMO_HOME/logs/<service>.log; whatever it prints outside the log (a crash before
logging is set up) goes to logs/<service>.out, rotated once past the log size cap at
each spawn. Its pid file, run/<service>.pid, says which process serves it; a pid is
trusted only while /proc shows that process is `... serve <service>` (pids are reused).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mnemo.config import Settings, local_services
from mnemo.health import unix_healthy
from mnemo.logfile import open_private_append
from mnemo.logs import get_logger
from mnemo.pids import pid_alive as pid_alive  # re-exported: defined where hooks can afford it

log = get_logger(__name__)

POLL_S = 0.05
# glibc gives each thread that allocates an arena of its own (up to 8 per core), and memory freed
# in one is reused only there: gRPC's pools, Chroma's and onnxruntime's threads each kept their
# peak. Two arenas: measured 19 MiB less RSS in vector_svc after searches, search latency alike
# (docs/performance.md). A value the user set is kept.
MALLOC_ARENAS = "2"
STOP_WAIT_S = 10.0
# Detached children are never waited for here; holding them keeps Popen from warning
# "still running" when the object is collected.
_DETACHED: list[subprocess.Popen] = []


# -- health --------------------------------------------------------------------------
def service_healthy(settings: Settings, service: str, timeout: float = 1.0) -> bool:
    address = settings.address(service)
    if address.startswith("unix:") and not settings.tls_ca:
        # Standard library only: the supervisor, which checks health and nothing else, never
        # imports grpc (mnemo.health says what that saves).
        return unix_healthy(address.removeprefix("unix:").removeprefix("//"), timeout)
    from mnemo.grpc_client import check_health

    return check_health(address, timeout=timeout, tls_ca=settings.tls_ca)


def all_healthy(settings: Settings) -> bool:
    return all(service_healthy(settings, svc) for svc in local_services(settings))


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


# -- spawning ------------------------------------------------------------------------
# The directory holding the mnemo package: spawned services import from it even when the
# package is not installed into the interpreter (a source checkout).
CODE_ROOT = Path(__file__).resolve().parents[1]


def settings_env(settings: Settings) -> dict[str, str]:
    """Environment that gives a spawned service exactly these settings (non-defaults as MNEMO_*)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env["MNEMO_HOME"] = str(settings.home)
    env.setdefault("MALLOC_ARENA_MAX", MALLOC_ARENAS)
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
    """Start one service and write its pid file."""
    proc = spawn(settings, service, service_argv(service), detached=detached)
    write_pid(settings, service, proc.pid)
    return proc


def spawn(settings: Settings, name: str, argv: list[str], *, detached: bool = True) -> subprocess.Popen:
    """Start a mnemo process: its log is logs/<name>.log, anything else it prints logs/<name>.out.
    Detached = in a session of its own, so it outlives its starter."""
    env = settings_env(settings)
    env["MNEMO_LOG_FILE"] = str(settings.logs_dir / f"{name}.log")
    out = _open_output(settings, name)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            cwd=str(settings.home),
            start_new_session=detached,
            close_fds=True,
        )
    finally:
        os.close(out)
    if detached:
        _DETACHED.append(proc)
    log.info("process_spawned", name=name, pid=proc.pid, detached=detached)
    return proc


def _open_output(settings: Settings, name: str) -> int:
    """logs/<name>.out, private whatever the umask; rotated once past the log size cap."""
    path = settings.logs_dir / f"{name}.out"
    with contextlib.suppress(FileNotFoundError):
        if path.stat().st_size > settings.log_max_bytes:
            os.replace(path, path.with_name(path.name + ".1"))
    return open_private_append(path)  # a link planted there is replaced, never followed


def wait_or_kill(proc: subprocess.Popen) -> None:
    """Wait STOP_WAIT_S for a child already asked to stop, then kill it."""
    try:
        proc.wait(STOP_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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


