"""vector_svc against a Chroma server (`chroma run`) started and stopped by the test."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mnemo.config import with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, store_pb2, vector_pb2, vector_pb2_grpc
from tests.conftest import start_service

pytestmark = [pytest.mark.service, pytest.mark.chroma, pytest.mark.slow]

CHROMA = Path(sys.executable).parent / "chroma"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def chroma_url(home: Path):
    if not CHROMA.exists():
        pytest.skip(f"{CHROMA} is not installed")
    port = free_port()
    log = (home / "chroma-server.log").open("wb")
    process = subprocess.Popen(
        [str(CHROMA), "run", "--path", str(home / "chroma-server"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, (home / "chroma-server.log").read_text()[-2000:]
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1) as reply:
                    if reply.status == 200:
                        break
            except urllib.error.HTTPError as err:
                err.close()  # not up yet (e.g. 503); close it, or its socket leaks a ResourceWarning
            except OSError:
                pass
            assert time.monotonic() < deadline, "chroma server did not answer its heartbeat"
            time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_index_and_query_through_a_chroma_server(settings, store_stub, chroma_url):
    store_stub.UpsertSession(store_pb2.UpsertSessionRequest(content_session_id="s1", project="alpha"))
    ids = store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=[
        common_pb2.Observation(memory_session_id="s1", project="alpha", type="bugfix",
                               narrative="the websocket reconnect loop spins", facts=["backoff missing"]),
        common_pb2.Observation(memory_session_id="s1", project="alpha", type="decision", narrative="use postgres"),
    ])).ids
    server_settings = with_overrides(settings, chroma_url=chroma_url)
    handle, on_stop = start_service("vector", server_settings)
    channel = open_channel(handle.address)
    try:
        stub = vector_pb2_grpc.VectorServiceStub(channel)
        synced = stub.Sync(vector_pb2.VectorSyncRequest())
        assert (synced.applied, synced.documents) == (2, 3)
        status = stub.Status(vector_pb2.VectorStatusRequest())
        assert status.backend == chroma_url and status.lag == 0
        hits = stub.Query(vector_pb2.VectorQueryRequest(
            text="websocket reconnect", filters=common_pb2.Filters(obs_types=["bugfix"]))).hits
        assert [h.ref.id for h in hits] == [ids[0]]
        assert stub.UpsertCorpusDocuments(vector_pb2.UpsertCorpusDocumentsRequest(
            corpus="c1", documents=[vector_pb2.CorpusDocument(id="a", text="hello", observation_id=1)])).documents == 1
        assert not settings.chroma_dir.exists() or not any(settings.chroma_dir.iterdir())  # nothing embedded locally
    finally:
        channel.close()
        handle.stop(0)
        on_stop()
