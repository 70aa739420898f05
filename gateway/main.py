"""`mnemo mcp`: serve MCP over stdio until the client goes away.

stdout carries JSON-RPC only (every line read passes the frame guard, gateway/frames.py, which
answers every malformed frame that carries an id; fd 1 points at stderr while serving, so a
stray print cannot corrupt the stream); logs go to $MNEMO_HOME/logs/gateway.log
or the configured log file. The gateway exits when stdin closes or errors, on
SIGTERM/SIGINT, and when its parent is gone (checked every parent_check_interval_s). The
stack it may have started is detached on purpose: it keeps serving other gateways.

One server serves every runtime (gateway/server.py over gateway/stdio.py): the handshake and
the tool list are generated from the tool table, so nothing is recorded or replayed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from mnemo.config import Settings, ensure_private_dirs
from mnemo.logs import configure_logging, get_logger

if TYPE_CHECKING:  # imported late at run time: a refused profile answers before the heavy imports
    from gateway.core import Gateway

log = get_logger("gateway")


def run(settings: Settings, args: argparse.Namespace | None = None) -> int:
    parent = os.getppid()  # as early as possible: the parent may die while we import
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # until serve() arms its own
        signal.signal(signum, _exit_before_serving)
    from gateway.tools import profile_tools
    from mnemo.errors import InvalidArgument
    from mnemo.remote import server_settings

    try:
        profile_tools(settings.mcp_profile)
        # The server runtime: every call goes to server_url with the token file's token; its
        # address makes the stack non-local, so nothing here ever starts one.
        settings = server_settings(settings)
    except InvalidArgument as err:
        print(f"mnemo mcp: {err}", file=sys.stderr)
        return 2
    _configure_logging(settings)
    asyncio.run(_serve_then_exit(settings, parent))
    return 0


async def _serve_then_exit(settings: Settings, parent: int) -> None:
    reason = await serve(settings, parent)
    log.info("gateway_exit", reason=reason)
    sys.stderr.flush()
    # Exit now: a worker thread may still block on the old stdin, and a background stack
    # start may still be waiting for health; neither must keep this process alive (the
    # stack itself is detached and keeps running).
    os._exit(0)


def _exit_before_serving(signum: int, frame: object) -> None:
    """A stop signal while starting: nothing is running yet, so exit at once, cleanly."""
    sys.stderr.flush()
    os._exit(0)


def _configure_logging(settings: Settings) -> None:
    """Logs to the home's gateway.log (or log_file), set up with the first line logged: structlog's
    import would otherwise come before the handshake is answered."""
    ensure_private_dirs(settings)
    configure_logging(settings.log_level, settings.log_file or settings.logs_dir / "gateway.log", service="gateway",
                      max_bytes=settings.log_max_bytes, backups=settings.log_backups, deferred=True,
                      lean=True)  # never structlog (mnemo.logs._LeanLogger): about 1 MiB less


async def serve(settings: Settings, parent: int | None = None) -> str:
    """Serve one stdio connection; returns why it ended."""
    from gateway.core import Gateway
    from gateway.stdio import serve_stdio

    gateway = Gateway(settings)
    loop = asyncio.get_running_loop()
    ended: asyncio.Future[str] = loop.create_future()

    def finish(reason: str) -> None:
        if not ended.done():
            ended.set_result(reason)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        loop.add_signal_handler(signum, finish, signal.Signals(signum).name)
    startup = asyncio.ensure_future(_start_stack(settings, gateway))
    watcher = asyncio.ensure_future(_watch_parent(parent or os.getppid(), settings.parent_check_interval_s, finish))
    capabilities = asyncio.ensure_future(gateway.watch_capabilities(settings.capabilities_check_s))

    async def serve_session() -> None:
        try:
            reason = await serve_stdio(gateway)
        except Exception as exc:  # noqa: BLE001 - a broken stdin/stdout ends the session
            log.warning("stdio_failed", error=repr(exc))
            finish("stdio error")
            return
        finish(reason)

    serving = asyncio.ensure_future(serve_session())
    reason = await ended
    log.info("gateway_stopping", reason=reason)
    # Cancel in-flight tool calls first (streaming jobs see their gRPC call cancelled),
    # then close the channel so the services notice at once.
    serving.cancel()
    watcher.cancel()
    capabilities.cancel()
    startup.cancel()
    await asyncio.wait([serving], timeout=1.0)
    await gateway.client.close()
    return reason


# The start-up check waits this long so the handshake and the first tools/list get the CPU
# first (a refused call starts the stack on its own anyway).
STARTUP_CHECK_DELAY_S = 1.0
async def _start_stack(settings: Settings, gateway: Gateway) -> None:
    """Start the stack if it is down, off the event loop so the MCP handshake is not blocked."""
    await asyncio.sleep(STARTUP_CHECK_DELAY_S)
    from mnemo.processes import is_local
    from mnemo.stack import ensure_stack

    if not is_local(settings, "search"):
        return  # a remote search_svc is someone else's to run; a refused call says so

    try:
        healthy = await asyncio.to_thread(ensure_stack, settings, settings.start_timeout_s)
    except Exception:  # noqa: BLE001 - startup failures are reported by the calls that need the stack
        log.exception("stack_start_failed")
        return
    gateway.invalidate_capabilities()
    if not healthy:
        log.warning("stack_unhealthy", hint="run `mnemo status`; tool calls will report UNAVAILABLE")


async def _watch_parent(original: int, interval: float, finish: Callable[[str], None]) -> None:
    """Exit when the parent is gone: ppid changed (or became 1, the usual reparenting)."""
    while True:
        await asyncio.sleep(interval)
        current = os.getppid()
        if current != original or (current == 1 and original != 1):
            log.info("parent_gone", original=original, current=current)
            finish("parent gone")
            return
