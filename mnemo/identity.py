"""Who is calling: the identity of the RPC being served, shared by the server interceptor
(which binds it) and the service cores (which read it), without importing grpc.

Three cases:
- no identity bound (None): an in-process caller or a server without tokens, i.e. the
  local single-user stack: full access, writes carry an empty writer;
- the service (admin) token: full access, administration RPCs included;
- a per-user token: the projects it may read and write (`projects`; None = every project)
  and the user name every record it writes carries.

`caller_token` holds the caller's bearer secret while search_svc serves a request, so its
store client can present the caller's token instead of the service token (the store is
the one place scope is enforced).
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mnemo.errors import PermissionDenied

ADMIN_USER = "admin"


@dataclass(frozen=True)
class Identity:
    """A resolved bearer token."""

    user: str
    projects: frozenset[str] | None  # None = every project
    admin: bool = False
    token_id: int = 0  # the access_tokens row (0 for the service token)

    @property
    def restricted(self) -> bool:
        return self.projects is not None and not self.admin

    def may_access(self, project: str) -> bool:
        return self.projects is None or self.admin or project in self.projects


SERVICE = Identity(ADMIN_USER, None, admin=True)

# Resolves a per-user token's secret to its Identity; raises Unauthenticated when unknown.
TokenResolver = Callable[[str], Identity]

current: contextvars.ContextVar[Identity | None] = contextvars.ContextVar("mnemo_identity", default=None)
caller_token: contextvars.ContextVar[str] = contextvars.ContextVar("mnemo_caller_token", default="")
# While an import item is written: the writer recorded in the item (kept by an admin import).
_writer_override: contextvars.ContextVar[str | None] = contextvars.ContextVar("mnemo_writer", default=None)


class TokenCache:
    """Resolved tokens by the SHA-256 of their secret, each trusted for `ttl_s` seconds
    (so a revocation takes effect within that time everywhere)."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic):
        self.ttl_s = ttl_s
        self._clock = clock
        self._entries: dict[str, tuple[float, Identity]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> Identity | None:
        with self._lock:
            entry = self._entries.get(digest)
            if entry is None or entry[0] <= self._clock():
                self._entries.pop(digest, None)
                return None
            return entry[1]

    def put(self, digest: str, who: Identity) -> None:
        with self._lock:
            if len(self._entries) > 10_000:  # many distinct tokens: start over rather than grow
                self._entries.clear()
            self._entries[digest] = (self._clock() + self.ttl_s, who)


def get() -> Identity | None:
    return current.get()


def writer() -> str:
    """The writer name stored on the records written now."""
    override = _writer_override.get()
    if override is not None:
        return override
    who = current.get()
    return who.user if who is not None else ""


@contextmanager
def keeping_writer(recorded: str) -> Iterator[None]:
    """Import: an admin (or the local stack) keeps the writer an exported record carries;
    a user's import is recorded as written by that user, whatever the file says."""
    who = current.get()
    keep = recorded if (who is None or who.admin) and recorded else None
    reset = _writer_override.set(keep)
    try:
        yield
    finally:
        _writer_override.reset(reset)


def restricted_projects() -> frozenset[str] | None:
    """The projects the caller is confined to, or None when it may see every project."""
    who = current.get()
    return who.projects if who is not None and who.restricted else None


def may_access(project: str) -> bool:
    who = current.get()
    return who is None or who.may_access(project)


def require_writable(field: str, project: str) -> None:
    """A write into `project` (named by the caller in `field`) is allowed, else PERMISSION_DENIED."""
    who = current.get()
    if who is None or who.may_access(project):
        return
    if not project:
        raise PermissionDenied(f"{field}: a token confined to projects cannot write outside them; "
                               f"name one of its projects")
    raise PermissionDenied(f"{field}: the token of {who.user!r} may not write to project {project!r}; "
                           f"ask an administrator for a token that includes it")


def require_admin(what: str) -> None:
    who = current.get()
    if who is not None and not who.admin:
        raise PermissionDenied(f"{what} needs the service (admin) token")


def is_admin() -> bool:
    who = current.get()
    return who is None or who.admin
