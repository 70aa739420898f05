"""The stack's supervisor: starts the local services and restarts any that dies, with backoff.

One supervisor per home, guaranteed by an flock on run/supervisor.lock that dies with it.
`ensure_stack` starts it detached (`mnemo supervise`); `mnemo up --foreground` runs it in
the foreground. It starts the services that are down, in dependency order (store, vector,
search), each as its child, and polls them: a child that exited is started again after a
backoff (BACKOFF_FIRST_S, doubling up to BACKOFF_MAX_S; back to the first step once a
service stayed up STABLE_S). A child that idled out (it left run/<service>.idle, see
mnemo/wake.py) is not restarted: it rests until someone asks for it (run/<service>.wake).
Restart counts and the resting services are kept in run/supervisor.json, which `mnemo status`
shows. SIGTERM/SIGINT stops the children (search first), then itself.
A service it did not start (healthy when it came up, or remote) is not its business.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo import spawnlock, wake
from mnemo.config import SERVICES, Settings, local_services
from mnemo.logs import get_logger
from mnemo.processes import (
    is_local,
    pid_path,
    read_pid,
    service_healthy,
    spawn,
    spawn_service,
    wait_healthy,
    wait_or_kill,
)

log = get_logger(__name__)

LOCK_NAME = wake.SUPERVISOR_LOCK
STATE_NAME = wake.SUPERVISOR_STATE
BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
STABLE_S = 30.0
CHECK_EVERY_S = 0.2
ALREADY_RUNNING = 3  # supervise()'s exit code when another supervisor holds the home


def _running(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def lock_path(settings: Settings) -> Path:
    return settings.run_dir / LOCK_NAME


def state_path(settings: Settings) -> Path:
    return settings.run_dir / STATE_NAME


def is_running(settings: Settings) -> bool:
    return spawnlock.is_held(lock_path(settings))


def restarts(settings: Settings) -> dict[str, int]:
    """Restarts per service by the running supervisor ({} when none runs)."""
    if not is_running(settings):
        return {}
    try:
        data = json.loads(state_path(settings).read_text())
        return {str(k): int(v) for k, v in data.get("restarts", {}).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def start_detached(settings: Settings) -> subprocess.Popen:
    return spawn(settings, "supervisor", [sys.executable, "-m", "mnemo.cli", "supervise"], detached=True)


@dataclass
class Child:
    """One supervised service."""

    service: str
    proc: subprocess.Popen
    started: float = field(default_factory=time.monotonic)
    failures: int = 0  # consecutive short lives, for the backoff
    restart_at: float | None = None  # set while it is dead and waiting for its backoff
    resting: bool = False  # it idled out: started again on a wake request, not after a backoff
    waking: bool = False  # started by a wake request and not answering health yet


class Supervisor:
    def __init__(self, settings: Settings, *, detached_children: bool = False):
        self.settings = settings
        self.detached_children = detached_children
        self.children: dict[str, Child] = {}
        self.restarts = {service: 0 for service in SERVICES}

    # -- start -------------------------------------------------------------------------
    def start_missing(self, deadline: float) -> bool:
        """Start what is down, in dependency order, waiting for each. True when all are healthy."""
        for service in local_services(self.settings):
            if service_healthy(self.settings, service):
                continue
            if not is_local(self.settings, service):
                log.warning("remote_service_down", service=service, address=self.settings.address(service))
                return False
            existing = read_pid(self.settings, service)
            if existing is not None:  # alive but not healthy yet (or hung): never start a second one
                log.warning("service_not_ours", service=service, pid=existing.pid)
                continue
            proc = self._spawn(service).proc
            if not wait_healthy(self.settings, (service,), deadline, functools.partial(_running, proc)):
                log.error("service_not_healthy", service=service,
                          log=str(self.settings.logs_dir / f"{service}.log"))
                return False
        return True

    def _spawn(self, service: str) -> Child:
        wake.idle_marker(self.settings.run_dir, service).unlink(missing_ok=True)  # a stale one would fake a rest
        proc = spawn_service(self.settings, service, detached=self.detached_children)
        previous = self.children.get(service)
        child = Child(service, proc, failures=previous.failures if previous else 0)
        self.children[service] = child
        return child

    # -- watch ---------------------------------------------------------------------------
    def check(self) -> None:
        """One round: notice exits, restart those whose backoff is over, start what nobody serves."""
        now = time.monotonic()
        self._start_unserved()
        for child in list(self.children.values()):
            if child.resting:
                self._wake_if_asked(child)
            elif child.restart_at is None and child.proc.poll() is not None:
                self._on_exit(child, now)
            elif child.restart_at is not None and now >= child.restart_at:
                self._restart(child)
            elif child.waking and service_healthy(self.settings, child.service):
                child.waking = False
                self.save_state()

    def _on_exit(self, child: Child, now: float) -> None:
        marker = wake.idle_marker(self.settings.run_dir, child.service)
        if not marker.exists():
            self._schedule_restart(child, now)
            return
        # Trigger: the service left its idle marker as it exited (vector_idle_exit_s without use).
        # Why: it exited on purpose, to give its memory back; restarting it would undo that.
        # Outcome: it rests until a user asks for it through a wake request (mnemo/wake.py).
        marker.unlink(missing_ok=True)
        child.resting, child.waking = True, False
        pid_path(self.settings, child.service).unlink(missing_ok=True)
        self.save_state()
        log.info("service_resting", service=child.service, pid=child.proc.pid,
                 lived_s=round(now - child.started, 1))

    def _wake_if_asked(self, child: Child) -> None:
        asked = wake.wake_request(self.settings.run_dir, child.service)
        if not asked.exists():
            return
        asked.unlink(missing_ok=True)
        if service_healthy(self.settings, child.service):  # someone else serves it now
            del self.children[child.service]
        else:
            self._spawn(child.service).waking = True
        self.save_state()
        log.info("service_woken", service=child.service)

    def _start_unserved(self) -> None:
        """A local service that is down, with no child of ours and no live pid file, is started
        (a start that failed earlier, or a service someone else started and that died)."""
        for service in local_services(self.settings):
            if service in self.children or not is_local(self.settings, service):
                continue
            if read_pid(self.settings, service) is None and not service_healthy(self.settings, service):
                log.warning("service_unserved", service=service)
                self._spawn(service)
                self.restarts[service] += 1
                self.save_state()

    def _schedule_restart(self, child: Child, now: float) -> None:
        lived = now - child.started
        child.failures = 0 if lived >= STABLE_S else child.failures + 1
        delay = min(BACKOFF_MAX_S, BACKOFF_FIRST_S * 2 ** max(0, child.failures - 1))
        child.restart_at = now + delay
        log.warning("service_exited", service=child.service, pid=child.proc.pid, code=child.proc.returncode,
                    lived_s=round(lived, 1), restart_in_s=delay)

    def _restart(self, child: Child) -> None:
        if service_healthy(self.settings, child.service):  # someone else serves it now
            log.info("service_served_elsewhere", service=child.service)
            del self.children[child.service]
            return
        self._spawn(child.service)
        self.restarts[child.service] += 1
        self.save_state()
        log.info("service_restarted", service=child.service, restarts=self.restarts[child.service])

    def save_state(self) -> None:
        path = state_path(self.settings)
        tmp = path.with_suffix(".tmp")
        children = self.children.values()
        tmp.write_text(json.dumps({
            "pid": os.getpid(), "restarts": self.restarts,
            wake.RESTING: sorted(c.service for c in children if c.resting),
            wake.WAKING: sorted(c.service for c in children if c.waking),
        }))
        tmp.replace(path)

    # -- stop ----------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the children (search first) and forget their pid files."""
        for service in reversed(SERVICES):
            child = self.children.get(service)
            if child is not None and child.proc.poll() is None:
                child.proc.terminate()
        for service in reversed(SERVICES):
            child = self.children.pop(service, None)
            if child is None:
                continue
            wait_or_kill(child.proc)
            pid_path(self.settings, service).unlink(missing_ok=True)


def supervise(settings: Settings, should_stop: Callable[[], bool],
              on_started: Callable[[bool], None] | None = None, *, detached_children: bool = False) -> int:
    """Run a supervisor until `should_stop()`; 0 when done, ALREADY_RUNNING when another one runs."""
    if not spawnlock.acquire(lock_path(settings), patience_s=1.0):
        log.info("supervisor_already_running")
        return ALREADY_RUNNING
    supervisor = Supervisor(settings, detached_children=detached_children)
    try:
        supervisor.save_state()
        ok = supervisor.start_missing(time.monotonic() + settings.start_timeout_s)
        if on_started is not None:
            on_started(ok)
        while not should_stop():
            supervisor.check()
            time.sleep(CHECK_EVERY_S)
        return 0
    finally:
        supervisor.stop()
        state_path(settings).unlink(missing_ok=True)
        spawnlock.release(lock_path(settings))


def run(settings: Settings, args: Any) -> int:
    """`mnemo supervise`: the detached supervisor ensure_stack starts."""
    from mnemo.config import ensure_private_dirs
    from mnemo.home import tighten
    from mnemo.logs import configure_logging

    ensure_private_dirs(settings)
    configure_logging(settings.log_level, settings.log_file or settings.logs_dir / "supervisor.log",
                      service="supervisor", max_bytes=settings.log_max_bytes, backups=settings.log_backups,
                      lean=True)  # it stays up idle: no structlog (mnemo.logs._LeanLogger)
    tighten(settings)  # an existing home made private before any service opens its files
    received: list[int] = []

    def request_stop(signum: int, _frame: object) -> None:
        received.append(signum)  # only append: see mnemo.grpc_server.serve_forever

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    code = supervise(settings, lambda: bool(received))
    log.info("supervisor_stopped", code=code)
    return code

