"""The server runtime: a gateway and hooks that talk to a team server instead of a local stack.

Two settings select it: `server_url` (HOST:PORT of the server's search_svc) and `token_file`
(the user's token). `server_settings` turns them into the settings every client already
reads: search_addr and store_addr both name the server (search_svc forwards the store RPCs
hooks make, so one URL serves everything), and auth_token is the file's token. Setting an
address makes `mnemo.processes.is_local` false, so nothing ever starts a local stack for it.

Standard library only: hooks import this on every event.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path
from typing import Any

from mnemo.errors import InvalidArgument

TOKEN_MAX_BYTES = 4096


def is_server_runtime(settings: Any) -> bool:
    return bool(getattr(settings, "server_url", ""))


def read_token(path: str | os.PathLike[str]) -> str:
    """The token in `path`, refused (InvalidArgument naming token_file) when the file is
    missing, not a regular file, readable or writable by group or others (like ssh refuses
    a private key), empty, or not one line of printable ASCII."""
    if not str(path):
        raise InvalidArgument("token_file", "required with server_url: a file holding your token")
    file = Path(path).expanduser()
    try:
        info = file.stat()
    except OSError as err:
        raise InvalidArgument("token_file", f"cannot read {file}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidArgument("token_file", f"{file} is not a regular file")
    if info.st_mode & 0o077:
        raise InvalidArgument("token_file", f"{file} is accessible by others (mode {stat.S_IMODE(info.st_mode):04o}); "
                                            f"a token must be private: run `chmod 600 {file}`")
    if info.st_size > TOKEN_MAX_BYTES:
        raise InvalidArgument("token_file", f"{file} is larger than {TOKEN_MAX_BYTES} bytes; it must hold one token")
    token = file.read_text(encoding="utf-8", errors="replace").strip()
    if not token:
        raise InvalidArgument("token_file", f"{file} is empty")
    if not token.isascii() or not token.isprintable() or any(c.isspace() for c in token):
        raise InvalidArgument("token_file", f"{file} must hold one token: printable ASCII, no spaces or newlines")
    return token


def check_server_url(url: str) -> str:
    """HOST:PORT, as gRPC dials it (no scheme: TLS follows the address, as for every client),
    or a comma-separated list of them: the server's search_svc replicas (mnemo.addresses)."""
    for entry in url.split(","):
        entry = entry.strip()
        if "://" in entry or entry.startswith("unix:"):
            raise InvalidArgument("server_url", f"use HOST:PORT of the server's search_svc, got {url!r}")
        host, sep, port = entry.rpartition(":")
        if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
            raise InvalidArgument("server_url", f"use HOST:PORT of the server's search_svc, got {url!r}")
    return url


def server_settings(settings: Any) -> Any:
    """`settings` as the server runtime's clients need them, or unchanged under the local
    runtime. Raises InvalidArgument for a bad server_url or token file."""
    if not is_server_runtime(settings):
        return settings
    url = check_server_url(settings.server_url)
    token = read_token(settings.token_file)
    return dataclasses.replace(settings, search_addr=url, store_addr=url, auth_token=token)
