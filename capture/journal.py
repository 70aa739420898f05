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

JOURNAL = "journal.jsonl"
STATE = "state.json"
CLAIMED_SUFFIX = ".claimed"


@dataclass
class SessionState:
    content_session_id: str
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
            return SessionState(**data)
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
            leftover.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # a hook wrote meanwhile: keep it
            self.dir.rmdir()

    @staticmethod
    def release(paths: list[Path]) -> None:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def session_key(platform: str, content_session_id: str) -> str:
    """A file-name-safe key: the session id is host input, never used as a path."""
    return hashlib.sha256(f"{platform}\0{content_session_id}".encode()).hexdigest()[:24]


def entries_digest(entries: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()[:16]


def _now_ns() -> int:
    import time

    return time.time_ns()
