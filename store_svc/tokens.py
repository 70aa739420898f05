"""Per-user tokens: created, listed and revoked through the store (service token only),
resolved to an Identity by store_svc's server interceptor.

A token is `mnemo_` + 43 URL-safe characters, shown once; the store keeps only its
SHA-256 (hex), and compares hashes, never secrets. A resolved token is cached for
`token_cache_s` seconds, so a revocation takes effect everywhere within that time.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from typing import TYPE_CHECKING, Any

from mnemo import identity
from mnemo.errors import InvalidArgument, NotFound, Unauthenticated
from mnemo.identity import Identity
from mnemo.timefmt import now_ms
from mnemo.v1 import store_pb2
from mnemo.vocab import PROJECT_MAX_BYTES

if TYPE_CHECKING:
    from store_svc.core import Store

TOKEN_PREFIX = "mnemo_"
MAX_TOKEN_PROJECTS = 100
_USER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


def token_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _token_pb(row: Any) -> store_pb2.AccessToken:
    everything = bool(row["all_projects"])
    return store_pb2.AccessToken(
        id=row["id"], user=row["user_name"], projects=[] if everything else json.loads(row["projects"]),
        all_projects=everything, created_at_epoch=row["created_at_epoch"],
        revoked_at_epoch=row["revoked_at_epoch"] or 0,
    )


def _check_token_request(request: store_pb2.AddTokenRequest) -> list[str]:
    if not _USER.fullmatch(request.user):
        raise InvalidArgument("user", "1-64 characters from letters, digits, '.', '_', '@' and '-', "
                                      "starting with a letter or digit")
    if request.user.lower() == identity.ADMIN_USER:  # records and cursors would pass for the service token's
        raise InvalidArgument("user", f"{identity.ADMIN_USER!r} is the service token's name; choose another")
    if request.all_projects and request.projects:
        raise InvalidArgument("projects", "leave empty with all_projects")
    if not request.all_projects and not request.projects:
        raise InvalidArgument("projects", "name at least one project (or set all_projects)")
    if len(request.projects) > MAX_TOKEN_PROJECTS:
        raise InvalidArgument("projects", f"at most {MAX_TOKEN_PROJECTS}")
    for i, project in enumerate(request.projects):
        if not project.strip():
            raise InvalidArgument(f"projects[{i}]", "must not be empty")
        if len(project.encode("utf-8", "surrogatepass")) > PROJECT_MAX_BYTES:
            raise InvalidArgument(f"projects[{i}]", f"at most {PROJECT_MAX_BYTES} bytes")
    return sorted(set(request.projects))


def add_token(store: Store, request: store_pb2.AddTokenRequest) -> store_pb2.AddTokenResponse:
    identity.require_admin("AddToken")
    projects = _check_token_request(request)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    digest = token_hash(secret)
    with store.writing() as conn:
        conn.execute("INSERT INTO access_tokens(user_name, token_hash, projects, all_projects, created_at_epoch) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (request.user, digest, json.dumps(projects), int(request.all_projects), now_ms()))
        row = conn.execute("SELECT * FROM access_tokens WHERE token_hash = ?", (digest,)).fetchone()
    return store_pb2.AddTokenResponse(token=_token_pb(row), secret=secret)


def list_tokens(store: Store, request: store_pb2.ListTokensRequest) -> store_pb2.ListTokensResponse:
    identity.require_admin("ListTokens")
    where = "" if request.include_revoked else " WHERE revoked_at_epoch = 0"
    with store.reading() as conn:
        rows = conn.execute(f"SELECT * FROM access_tokens{where} ORDER BY id").fetchall()
    return store_pb2.ListTokensResponse(tokens=[_token_pb(r) for r in rows])


def revoke_token(store: Store, request: store_pb2.RevokeTokenRequest) -> store_pb2.AccessToken:
    identity.require_admin("RevokeToken")
    if request.id <= 0:
        raise InvalidArgument("id", "must be a positive token id (see `mnemo server token list`)")
    with store.writing() as conn:
        conn.execute("UPDATE access_tokens SET revoked_at_epoch = ? WHERE id = ? AND revoked_at_epoch = 0",
                     (now_ms(), request.id))
        row = conn.execute("SELECT * FROM access_tokens WHERE id = ?", (request.id,)).fetchone()
    if row is None:
        raise NotFound(f"token {request.id} not found; `mnemo server token list` shows the ids")
    return _token_pb(row)


def who_am_i() -> store_pb2.WhoAmIResponse:
    who = identity.get() or identity.SERVICE
    everything = who.projects is None
    return store_pb2.WhoAmIResponse(user=who.user, projects=sorted(who.projects or ()), all_projects=everything,
                                    admin=who.admin)


UNKNOWN_TOKEN = ("unknown or revoked token; ask an administrator for a new one (`mnemo server token add`) "
                 "and configure it (auth_token / auth_token_file)")


class TokenResolver:
    """Per-user tokens of one store: secret -> Identity, cached for `ttl_s` seconds.

    The cache is keyed by the secret's hash, so no secret stays in memory longer than the call.
    """

    def __init__(self, store: Store, ttl_s: float = 5.0):
        self._store = store
        self._cache = identity.TokenCache(ttl_s)

    def __call__(self, secret: str) -> Identity:
        digest = token_hash(secret)
        cached = self._cache.get(digest)
        if cached is not None:
            return cached
        with self._store.reading() as conn:
            row = conn.execute("SELECT * FROM access_tokens WHERE token_hash = ?", (digest,)).fetchone()
        if row is None or row["revoked_at_epoch"]:
            raise Unauthenticated(UNKNOWN_TOKEN)
        projects = None if row["all_projects"] else frozenset(json.loads(row["projects"]))
        who = Identity(row["user_name"], projects, admin=False, token_id=row["id"])
        self._cache.put(digest, who)
        return who
