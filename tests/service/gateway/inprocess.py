"""The gateway in the test's own process: the MCP SDK's client talking to the gateway's server
(gateway/server.py) through memory streams, over the real services. A drop-in for
`mcp_support.mcp_session` where the process itself is not what a test is about (its stdio,
signals, exit and stdout hygiene keep their subprocess tests): no interpreter to start, no
imports to repeat, per session.

The settings are what `mnemo mcp` would read from the same environment and `-o` flags, and
`cwd` is the code tools' project root, as for a spawned gateway.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

from gateway.core import Gateway
from gateway.server import Session
from mnemo.config import load_settings, with_overrides
from mnemo.remote import server_settings
from tests.service.gateway.mcp_support import REPO_ROOT

BUFFER = 256  # frames either way; a test never has that many in flight


def settings_of(env: dict[str, str], args: tuple[str, ...] = (), cwd: Path = REPO_ROOT):
    """The settings `mnemo mcp *args` started in `cwd` with `env` would serve with."""
    flags = dict(arg.split("=", 1) for arg in args[1::2]) if args else {}
    assert all(option == "-o" for option in args[::2]), args
    settings = load_settings(flags, environ=env)
    return server_settings(with_overrides(settings, project_root=settings.project_root or str(cwd)))


@asynccontextmanager
async def gateway_session(
    env: dict[str, str], *, message_handler=None, cwd: Path = REPO_ROOT, args: tuple[str, ...] = ()
) -> AsyncIterator[ClientSession]:
    """An initialized SDK ClientSession served by an in-process gateway; `message_handler`
    receives the server's notifications (the capability watch runs, so list_changed comes)."""
    settings = settings_of(env, args, cwd)
    gateway = Gateway(settings)
    to_client, client_in = anyio.create_memory_object_stream[SessionMessage | Exception](BUFFER)
    client_out, to_server = anyio.create_memory_object_stream[SessionMessage](BUFFER)

    def send(line: bytes) -> None:
        to_client.send_nowait(SessionMessage(types.jsonrpc_message_adapter.validate_python(json.loads(line))))

    session = Session(gateway, send)

    async def serve() -> None:
        async for message in to_server:
            session.receive(message.message.model_dump_json(by_alias=True, exclude_unset=True).encode())

    try:
        async with to_client, client_in, client_out, to_server, anyio.create_task_group() as tasks:
            tasks.start_soon(serve)
            tasks.start_soon(gateway.watch_capabilities, settings.capabilities_check_s)
            async with ClientSession(client_in, client_out, message_handler=message_handler) as client:
                await client.initialize()
                yield client
            await session.drain()
            tasks.cancel_scope.cancel()
    finally:
        session.close()
        await gateway.client.close()
