"""An in-process team server for tests of the server runtime (tests/server_support.py runs
`mnemo serve` replicas as subprocesses instead): store_svc, vector_svc and search_svc on
loopback TCP with a token, in a home of their own, and the client side's settings.

    server = TeamServer.start(server_home, token)       # in-process, real services
    env = server_runtime_env(client_settings, server.url, write_token_file(dir, token))
    ... spawn `mnemo mcp` / `mnemo hook` with env ...
    server.stop()

`port` pins search_svc's port, so a test can stop the server and start it again where its
clients expect it (store and vector always take free ports).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.config import Settings, with_overrides
from tests.conftest import make_settings, start_service, subprocess_env
from tests.grpcurl_support import free_port

__all__ = ["TeamServer", "free_port", "server_runtime_env", "write_token_file"]


def write_token_file(directory: Path, token: str, mode: int = 0o600) -> Path:
    path = directory / "mnemo.token"
    path.write_text(token + "\n", encoding="utf-8")
    os.chmod(path, mode)
    return path


@dataclass
class TeamServer:
    settings: Settings
    url: str  # search_svc: the one address of the server runtime
    store_addr: str
    _running: list[Any] = field(default_factory=list)

    @classmethod
    def start(cls, home: Path, token: str, port: int = 0, **overrides: Any) -> TeamServer:
        settings = make_settings(home, auth_token=token, **overrides)
        running: list[Any] = []
        store, stop_store = start_service("store", settings, "127.0.0.1:0")
        running.append((store, stop_store))
        settings = with_overrides(settings, store_addr=store.address)
        vector, stop_vector = start_service("vector", settings, "127.0.0.1:0")
        running.append((vector, stop_vector))
        settings = with_overrides(settings, vector_addr=vector.address)
        search, stop_search = start_service("search", settings, f"127.0.0.1:{port}")
        running.append((search, stop_search))
        return cls(settings, search.address, store.address, running)

    def stop_search(self) -> None:
        """Take the front door down (the store keeps its data): clients see a refusal."""
        handle, on_stop = self._running.pop()
        handle.stop(0.5)
        on_stop()

    def start_search(self, port: int) -> None:
        search, stop_search = start_service("search", self.settings, f"127.0.0.1:{port}")
        self._running.append((search, stop_search))

    def stop(self) -> None:
        while self._running:
            handle, on_stop = self._running.pop()
            handle.stop(0.5)
            on_stop()


def server_runtime_env(client: Settings, url: str, token_file: Path, **extra: str) -> dict[str, str]:
    """The environment of a gateway or hook of the server runtime, in the client's home."""
    return subprocess_env(client, MNEMO_SERVER_URL=url, MNEMO_TOKEN_FILE=str(token_file), **extra)


@contextmanager
def team_with_token_kinds(service_token: str, titles: list[str],
                          **overrides: Any) -> Iterator[tuple[TeamServer, dict[str, str]]]:
    """A team server with user tokens and one secret per token kind: "service", "project" (of
    project `harbor`), "all" (every project) and "other" (project `elsewhere`); `titles` are
    written to harbor first. `overrides` go to its settings (e.g. a PostgreSQL store)."""
    from mnemo.grpc_client import open_channel
    from mnemo.v1 import store_pb2, store_pb2_grpc
    from tests.conftest import add_observation

    with tempfile.TemporaryDirectory(prefix="mnemo-team-") as home:
        server = TeamServer.start(Path(home), service_token, user_tokens=True, token_cache_s=0.0, **overrides)
        channel = open_channel(server.store_addr, auth_token=service_token)
        try:
            store = store_pb2_grpc.StoreServiceStub(channel)
            secrets = {"service": service_token}
            for kind, request in (("project", store_pb2.AddTokenRequest(user="ana", projects=["harbor"])),
                                  ("all", store_pb2.AddTokenRequest(user="ci", all_projects=True)),
                                  ("other", store_pb2.AddTokenRequest(user="eve", projects=["elsewhere"]))):
                secrets[kind] = store.AddToken(request).secret
            for title in titles:
                add_observation(store, project="harbor", title=title)
        finally:
            channel.close()
        try:
            yield server, secrets
        finally:
            server.stop()
