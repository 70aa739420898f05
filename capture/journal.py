"""A per-session journal on the host: which rows this session's hooks wrote since the
last Stop, and the little state the next hook needs (project, prompt number, privacy).

Why: hooks are separate short-lived processes, and the Stop hook must find "the prompt
and tool uses since the previous Stop" to merge read bursts and to summarize. The
journal holds only row ids (never text), so nothing private lands outside the store.

Concurrency: each hook appends one short line with a single O_APPEND write (atomic on
POSIX); Stop claims the journal by renaming it before reading, so a hook that runs
during Stop starts a fresh journal that the next Stop picks up. Leftover claimed files
(a Stop that crashed) are processed again by the next Stop: the writes they lead to
carry external ids, so a second pass creates nothing twice.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mnemo.pids import pid_alive

JOURNAL = "journal.jsonl"
STATE = "state.json"
CLAIMED_SUFFIX = ".claimed"
FAILURES = "failures"
CHANGES = "changes"
INFLIGHT = "inflight."


@dataclass
class SessionState:
    """What the next hook of a session needs. No session id: the journal's directory is
    named by its digest, and the id itself (host input) is kept nowhere on disk."""

    platform: str
    project: str
    memory_session_id: str = ""
    prompt_number: int = 0
    last_prompt_id: int = 0
    private: bool = False
    """True while the current prompt was entirely private: its tool uses are not recorded."""


class Journal:
    def __init__(self, root: Path, platform: str, content_session_id: str):
        self.key = session_key(platform, content_session_id)
        self.dir = root / self.key

    # -- state ---------------------------------------------------------------------------
    def load_state(self) -> SessionState | None:
        try:
            data = json.loads((self.dir / STATE).read_text(encoding="utf-8"))
            known = {name: value for name, value in data.items() if name in SessionState.__dataclass_fields__}
            return SessionState(**known)  # a state written by an older version kept more fields
        except (OSError, ValueError, TypeError):
            return None

    def save_state(self, state: SessionState) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.dir / f".{STATE}.{os.getpid()}"
        tmp.write_text(json.dumps(asdict(state)), encoding="utf-8")
        os.replace(tmp, self.dir / STATE)

    # -- entries -------------------------------------------------------------------------
    def append(self, entry: dict[str, Any]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        line = (json.dumps(entry, separators=(",", ":")) + "\n").encode()
        fd = os.open(self.dir / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def claim(self) -> list[Path]:
        """Take the current journal (and any earlier unfinished claim) for processing."""
        if not self.dir.is_dir():
            return []
        current = self.dir / JOURNAL
        if current.exists():
            target = self.dir / f"{JOURNAL}.{_now_ns():020d}.{os.getpid()}{CLAIMED_SUFFIX}"
            with contextlib.suppress(FileNotFoundError):
                os.replace(current, target)
        return sorted(self.dir.glob(f"{JOURNAL}.*{CLAIMED_SUFFIX}"))

    @staticmethod
    def read(paths: list[Path]) -> list[dict[str, Any]]:
        entries = []
        for path in paths:
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                continue
            for line in text.splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue  # a torn line from a crash; the rows it named stay stored
                if isinstance(entry, dict):
                    entries.append(entry)
        return entries

    def forget(self) -> None:
        """Drop the session's local state (at SessionEnd). A resumed session starts a new
        one: the store's session row is found again by its id."""
        if not self.dir.is_dir() or (self.dir / JOURNAL).exists() or any(self.dir.glob(f"*{CLAIMED_SUFFIX}")):
            return
        for leftover in self.dir.iterdir():
            if leftover.is_dir():
                for inner in leftover.iterdir():
                    inner.unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    leftover.rmdir()
                continue
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # a hook wrote meanwhile: keep it
            self.dir.rmdir()

    # -- detached workers (capture.detach) ----------------------------------------------
    # A marker per worker, named by when its hook arrived and its pid: workers of one
    # session then take turns in the order the host fired the events (a fix must find
    # the failure before it), and a flush waits for the tool uses fired before it.
    def mark_inflight(self, pid: int) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        (self.dir / f"{INFLIGHT}{_now_ns():020d}.{pid}").touch(mode=0o600)

    def unmark_inflight(self, pid: int) -> None:
        for marker in self.dir.glob(f"{INFLIGHT}*.{pid}"):
            marker.unlink(missing_ok=True)

    def wait_for_earlier(self, own_pid: int, timeout_s: float) -> bool:
        """Wait until every worker that arrived before `own_pid`'s marker is done (every
        worker, for a process with no marker). False when the timeout passed first; markers
        of processes that died do not count."""
        import time

        deadline = time.monotonic() + timeout_s
        while True:
            markers = self.markers()
            own = next((arrived for arrived, pid in markers if pid == own_pid), None)
            limit = own if own is not None else float("inf")
            busy = [pid for arrived, pid in markers if arrived < limit and pid != own_pid and pid_alive(pid)]
            if not busy:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)  # another process's marker: there is no event to wait on

    def markers(self) -> list[tuple[int, int]]:
        if not self.dir.is_dir():
            return []
        found = []
        for marker in self.dir.glob(f"{INFLIGHT}*"):
            arrived, _, pid = marker.name[len(INFLIGHT):].partition(".")
            if arrived.isdigit() and pid.isdigit():
                found.append((int(arrived), int(pid)))
        return found

    # -- failures waiting for their fix ---------------------------------------------------
    # One small file per key (a command, a test runner, a file), written atomically: async
    # hooks run concurrently, and a shared read-modify-write file would lose entries.
    def remember_failure(self, key: str, failure: dict[str, Any]) -> None:
        folder = self.dir / FAILURES
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        name = _digest(key)
        tmp = folder / f".{name}.{os.getpid()}"
        tmp.write_text(json.dumps(failure), encoding="utf-8")
        os.replace(tmp, folder / name)

    def take_failure(self, key: str) -> dict[str, Any] | None:
        """The failure remembered under `key`, forgotten as it is taken (None: none)."""
        path = self.dir / FAILURES / _digest(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            path.unlink()
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    # -- changes since the session began (edits, installs): a fix needs one after its failure.
    # One byte appended per change (a single O_APPEND write, atomic): the count is the size.
    def note_change(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.dir / CHANGES, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, b".")
        finally:
            os.close(fd)

    def change_count(self) -> int:
        try:
            return (self.dir / CHANGES).stat().st_size
        except OSError:
            return 0

    @staticmethod
    def release(paths: list[Path]) -> None:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def session_key(platform: str, content_session_id: str) -> str:
    """A file-name-safe key: the session id is host input, never used as a path."""
    return hashlib.sha256(f"{platform}\0{content_session_id}".encode()).hexdigest()[:24]


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24]


def entries_digest(entries: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:16]


def _now_ns() -> int:
    import time

    return time.time_ns()
