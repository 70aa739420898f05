"""`mnemo server token add|list|revoke`: per-user tokens of a team server.

The commands call store_svc (`AddToken`, `ListTokens`, `RevokeToken`) with the service
token, so they work against a remote server as well as a local one:
`mnemo server token list --store-addr HOST:PORT --auth-token-file /path/to/service-token`.
A new token's secret is printed once; the store keeps only its SHA-256.

`mnemo server token service-file FILE` makes a service token without any server: a random
secret written to a new 0600 file, for `--auth-token-file` (every TCP listener needs one).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from typing import TYPE_CHECKING, Any

from mnemo.timefmt import iso_from_ms

if TYPE_CHECKING:
    from mnemo.config import Settings
    from mnemo.v1 import store_pb2


def add_arguments(parser: argparse.ArgumentParser, add_setting_flags: Any) -> None:
    """`server token {add,list,revoke}` under `parser` (the `server` command)."""
    groups = parser.add_subparsers(dest="server_command", required=True)
    token = groups.add_parser("token", help="per-user tokens: each reads and writes only its projects")
    actions = token.add_subparsers(dest="token_command", required=True)
    add = actions.add_parser("add", help="create a token; its secret is printed once")
    add.add_argument("--user", required=True, help="who the token is for (recorded as the writer)")
    add.add_argument("--project", action="append", default=[], dest="projects", metavar="P",
                     help="a project the token may read and write (repeat for more)")
    add.add_argument("--all-projects", action="store_true", help="every project, present and future")
    listing = actions.add_parser("list", help="list tokens (never their secrets)")
    listing.add_argument("--all", action="store_true", dest="include_revoked", help="include revoked tokens")
    revoke = actions.add_parser("revoke", help="revoke a token (refused within token_cache_s)")
    revoke.add_argument("id", type=int, help="the token's id (see `mnemo server token list`)")
    service = actions.add_parser("service-file", help="write a new random service token to FILE (mode 0600)")
    service.add_argument("file", help="where to write it; an existing file is kept as it is")
    for leaf in (add, listing, revoke, service):
        leaf.add_argument("--json", action="store_true", help="print JSON for scripts")
        add_setting_flags(leaf)


SERVICE_TOKEN_BYTES = 32  # 43 characters of url-safe base64, like a user token's secret


def write_service_token(path: str) -> bool:
    """A fresh secret in a new file `path`, born 0600 (never readable by others, even for a
    moment). An existing file is left alone (it may be a token in use): returns False then."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(SERVICE_TOKEN_BYTES) + "\n")
    return True


def _as_dict(token: store_pb2.AccessToken) -> dict[str, Any]:
    return {"id": token.id, "user": token.user, "projects": list(token.projects), "all_projects": token.all_projects,
            "created_at": iso_from_ms(token.created_at_epoch),
            "revoked_at": iso_from_ms(token.revoked_at_epoch) if token.revoked_at_epoch else None}


def _scope_text(token: dict[str, Any]) -> str:
    return "all projects" if token["all_projects"] else ", ".join(token["projects"])


def run(settings: Settings, args: argparse.Namespace) -> int:
    if args.token_command == "service-file":
        made = write_service_token(args.file)
        return _print(args, {"file": args.file, "created": made},
                      f"{'wrote a new service token to' if made else 'kept the existing token in'} {args.file}")
    from mnemo.grpc_client import connect
    from mnemo.v1 import store_pb2, store_pb2_grpc

    client = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    try:
        if args.token_command == "add":
            reply = client.stub.AddToken(store_pb2.AddTokenRequest(user=args.user, projects=args.projects,
                                                                   all_projects=args.all_projects))
            shown = {**_as_dict(reply.token), "secret": reply.secret}
            text = (f"token {shown['id']} for {shown['user']} ({_scope_text(shown)})\n"
                    f"secret, shown once (give it to {shown['user']}; only its hash is kept):\n{reply.secret}")
            return _print(args, shown, text)
        if args.token_command == "list":
            tokens = [_as_dict(t) for t in client.stub.ListTokens(
                store_pb2.ListTokensRequest(include_revoked=args.include_revoked)).tokens]
            lines = [f"{t['id']:>4}  {t['user']:<20} {t['created_at'][:19]}  "
                     f"{'revoked ' + t['revoked_at'][:19] if t['revoked_at'] else 'valid':<28} {_scope_text(t)}"
                     for t in tokens]
            return _print(args, tokens, "\n".join(lines) or "no tokens")
        revoked = _as_dict(client.stub.RevokeToken(store_pb2.RevokeTokenRequest(id=args.id)))
        return _print(args, revoked, f"token {revoked['id']} of {revoked['user']} revoked at {revoked['revoked_at']}")
    finally:
        client.close()


def _print(args: argparse.Namespace, payload: Any, text: str) -> int:
    if args.json:
        json.dump(payload, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(text)
    return 0
