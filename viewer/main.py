"""`mnemo ui`: serve the viewer on loopback and print the one URL that opens it.

The port is random (the kernel picks a free one) unless `--port` sets it, and the socket
is bound to 127.0.0.1 only: the viewer shows everything the memory holds.
"""

from __future__ import annotations

import argparse
import errno
import socket
import sys
import webbrowser

import uvicorn

from mnemo.config import Settings
from mnemo.errors import FailedPrecondition, InvalidArgument
from mnemo.logs import get_logger
from viewer import running
from viewer.app import build_app
from viewer.auth import TOKEN_PARAM, Gate
from viewer.client import MemoryClient

log = get_logger(__name__)
LOOPBACK = running.LOOPBACK
SHUTDOWN_S = 2


def bind(port: int) -> socket.socket:
    """A loopback socket listening on `port` (0: any free one); a port in use or out of
    range is a one-line error naming what to do."""
    if not 0 <= port <= 65535:
        raise InvalidArgument("--port", f"{port} is not a port: use 1-65535, or 0 for any free port")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as err:
        sock.close()
        if err.errno == errno.EADDRINUSE:
            raise FailedPrecondition(f"port {port} on {LOOPBACK} is in use: choose another --port, "
                                     "or leave --port out for a free one") from None
        raise
    sock.listen(128)  # listening before the URL is printed: early clients wait in the backlog
    return sock


def ensure_services(settings: Settings) -> None:
    """Start the local stack when it is down (as the gateway does); a remote one is left alone."""
    from mnemo.stack import ensure_stack_shown, is_local

    if all(is_local(settings, s) for s in ("store", "vector", "search")) and not ensure_stack_shown(settings):
        print("mnemo ui: the stack did not become healthy; run `mnemo status`", file=sys.stderr)


def run(settings: Settings, args: argparse.Namespace) -> int:
    port = getattr(args, "port", None)
    if port is None and not getattr(args, "new", False):
        url = running.fresh_link(settings)
        if url:  # a viewer already serves this home: a new link into it, no second server
            _announce(url, args, "(a new link into the viewer already running; it works once, in one browser)")
            return 0
    sock = bind(int(port or 0))  # first: a port in use is said before any stack is started
    ensure_services(settings)
    bound = sock.getsockname()[1]
    gate = Gate()
    client = MemoryClient(settings)
    app = build_app(client, settings.home, gate, lambda: bound)
    _announce(f"http://{LOOPBACK}:{bound}/?{TOKEN_PARAM}={gate.token}", args,
              "(the link works once, in one browser; `mnemo ui` again prints a new one; Ctrl-C stops the viewer)")
    # Open event streams would hold a graceful shutdown forever: Ctrl-C waits this long at most.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                           timeout_graceful_shutdown=SHUTDOWN_S))
    record = running.record(settings, bound, gate.link_secret)
    try:
        server.run(sockets=[sock])
    finally:
        running.forget(record)
        client.close()
        sock.close()
    return 0


def _announce(url: str, args: argparse.Namespace, note: str) -> None:
    print(f"mnemo viewer: {url}", flush=True)
    print(note, file=sys.stderr, flush=True)
    if getattr(args, "open", False):
        webbrowser.open(url)
