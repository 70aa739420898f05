"""Composition root of vector_svc, and the `mnemo reindex` command."""

from __future__ import annotations

import argparse
import os
import signal
import time
from collections.abc import Callable

from mnemo import wake
from mnemo.config import Settings
from mnemo.errors import InvalidArgument, Unavailable
from mnemo.grpc_client import connect
from mnemo.grpc_server import ServerHandle, build_server
from mnemo.logs import get_logger
from mnemo.v1 import store_pb2_grpc, vector_pb2, vector_pb2_grpc
from vector_svc.corpus import Corpora
from vector_svc.election import Election
from vector_svc.embedders import make_embedder
from vector_svc.follower import Follower
from vector_svc.idle import Activity, IdleExit
from vector_svc.index import ChromaConnection, VectorIndex
from vector_svc.servicer import VectorServicer

log = get_logger(__name__)

SERVICE_NAME = "mnemo.v1.VectorService"
REINDEX_TIMEOUT_S = 6 * 3600.0  # a rebuild embeds the whole store; it may take a while
PROJECT_MAP_STOP_S = 30.0  # reading a 1M-record map takes seconds; a stop waits for it, boundedly


def start(settings: Settings, listen: str) -> tuple[ServerHandle, Callable[[], None]]:
    """Build the index, start serving, start following the store. Returns (handle, on_stop)."""
    embedder = make_embedder(settings.embedder, settings.embed_delay_ms, settings.vector_idle_release_s)
    connection = ChromaConnection(settings)
    index = VectorIndex(connection, embedder)
    store = connect(settings, "store", store_pb2_grpc.StoreServiceStub)
    # A Chroma server may be shared by replicas: then one of them, elected, follows the feed.
    election = None
    if settings.chroma_url and settings.vector_lease_ttl_ms:
        election = Election(store, settings.vector_lease_ttl_ms, settings.vector_poll_ms / 1000.0)
    activity = Activity()
    follower = Follower(index, store, settings.vector_poll_ms, election, activity)
    servicer = VectorServicer(index, follower, Corpora(connection, embedder), activity)
    # A rest needs a supervisor to wake it: without one (`mnemo serve vector` by hand) it stays up.
    idle_exit = IdleExit(activity, lambda: follower.nothing_to_follow() and wake.supervisor_running(settings.run_dir),
                         idle_exit_s(settings), lambda: _rest(settings))

    def register(server):
        vector_pb2_grpc.add_VectorServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    handle = build_server(
        listen, register, tls_cert=settings.tls_cert, tls_key=settings.tls_key, auth_token=settings.auth_token,
        insecure_no_auth=settings.insecure_no_auth,
    )
    follower.start()
    idle_exit.start()
    project_map = index.start_project_map()  # scoped queries get fast once it is loaded (vector_svc/projects.py)
    log.info("vector_ready", model=embedder.model, backend=connection.backend)

    def on_stop() -> None:
        idle_exit.stop()
        follower.stop()
        if project_map is not None:  # let it finish reading before Chroma closes under it
            project_map.join(PROJECT_MAP_STOP_S)
        store.close()
        connection.close()

    return handle, on_stop


def idle_exit_s(settings: Settings) -> float:
    """Replicas on a Chroma server (chroma_url) are deployed, not supervised here: they never rest."""
    if settings.vector_idle_exit_s < 0:
        raise InvalidArgument("vector_idle_exit_s", f"must be 0 (never idle out) or more seconds, "
                                                    f"got {settings.vector_idle_exit_s}")
    return 0.0 if settings.chroma_url else settings.vector_idle_exit_s


def _rest(settings: Settings) -> None:
    """Idle out: tell the supervisor this exit is a rest (mnemo/wake.py), then stop as SIGTERM stops
    a service (mnemo.grpc_server.serve_forever: drain the calls, stop the follower, close Chroma)."""
    wake.mark_idle(settings.run_dir, "vector")
    os.kill(os.getpid(), signal.SIGTERM)


def run_reindex(settings: Settings, args: argparse.Namespace) -> int:
    """`mnemo reindex`: ask the running vector_svc to rebuild its index from the store."""
    address = settings.address("vector")
    client = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
    started = time.monotonic()
    try:
        reply = client.stub.Rebuild(vector_pb2.VectorRebuildRequest(), timeout=REINDEX_TIMEOUT_S)
    except Unavailable as err:
        raise Unavailable(
            f"vector_svc is not reachable at {address} ({err.message}); start it with "
            "`mnemo up` or `mnemo serve vector`, then run `mnemo reindex` again"
        ) from None
    finally:
        client.close()
    print(
        f"reindexed: {reply.applied} changes applied, {reply.documents} documents, "
        f"watermark {reply.watermark}, {time.monotonic() - started:.1f}s"
    )
    return 0
