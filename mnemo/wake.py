"""A service that rests and wakes on demand: the files by which it, its users and the supervisor agree.

vector_svc exits after a while without use (`vector_idle_exit_s`). Just before, it writes
run/<service>.idle, so the supervisor takes the exit for a rest, not a crash, and lists the
service as resting in its state file. A user that finds it down (search_svc answering a
search lexically, a gateway or a hook starting the stack, a session start warming it)
touches run/<service>.wake; the supervisor, which polls every fraction of a second, starts
the service again and lists it as waking until it answers health. Users read those lists
to say "warming up" rather than "down".

A wake request written while the service runs (or starts) would make its next rest end at
once: the service removes any such request as it decides to rest, since it served them all.

Standard library only: hooks (a fresh interpreter per event) call it.
"""

from __future__ import annotations

import json
from pathlib import Path

from mnemo import spawnlock

SUPERVISOR_LOCK = "supervisor.lock"
SUPERVISOR_STATE = "supervisor.json"
RESTING = "resting"  # the state file's list of services that idled out and wait for a wake request
WAKING = "waking"  # ... and of those woken that do not answer health yet


def idle_marker(run_dir: Path, service: str) -> Path:
    return run_dir / f"{service}.idle"


def wake_request(run_dir: Path, service: str) -> Path:
    return run_dir / f"{service}.wake"


def supervisor_running(run_dir: Path) -> bool:
    return spawnlock.is_held(run_dir / SUPERVISOR_LOCK)


def _listed(run_dir: Path, key: str) -> set[str]:
    try:
        data = json.loads((run_dir / SUPERVISOR_STATE).read_text())
        return {str(service) for service in data.get(key, [])}
    except (OSError, ValueError, AttributeError, TypeError):
        return set()


def resting(run_dir: Path) -> set[str]:
    """The services that idled out and wait to be woken (none when no supervisor runs)."""
    return _listed(run_dir, RESTING) if supervisor_running(run_dir) else set()


def warming(run_dir: Path, service: str) -> bool:
    """True while `service` rests or is being woken: it is down on purpose, not broken."""
    if not supervisor_running(run_dir):
        return False
    return service in _listed(run_dir, RESTING) | _listed(run_dir, WAKING)


def request(run_dir: Path, service: str) -> bool:
    """Ask the supervisor to start `service` if it rests. True when it rests or is waking (the
    caller may say it warms up); False when no supervisor runs here or the service is down
    for another reason (it is then the supervisor's to restart, or nobody's)."""
    if not supervisor_running(run_dir):
        return False
    wake_request(run_dir, service).touch(mode=0o600)
    return warming(run_dir, service)


def mark_idle(run_dir: Path, service: str) -> None:
    """Called by the service as it decides to rest: it served every request so far."""
    wake_request(run_dir, service).unlink(missing_ok=True)
    idle_marker(run_dir, service).touch(mode=0o600)
