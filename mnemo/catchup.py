"""After work that adds many records (`mnemo import`), show the vector index catching up:
how far, how fast, how long still, on stderr, for a person at a terminal.

Searches work meanwhile (lexically for what is not embedded yet), so Ctrl-C only stops
watching: vector_svc keeps catching up in the background.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mnemo.config import Settings
from mnemo.errors import MnemoError
from mnemo.progress import Progress, rate_and_eta

POLL_S = 0.5
# Give up watching (not the work) when the lag has not moved for this long.
STALL_S = 30.0


def follow_vectors(settings: Settings) -> None:
    """Watch vector_svc's lag until it reaches 0; silent when progress is not wanted, when
    vector search is off, or when vector_svc does not answer."""
    progress = Progress()
    if not progress.enabled or settings.vector == "off":
        return
    from mnemo.grpc_client import connect
    from mnemo.v1 import vector_pb2, vector_pb2_grpc

    client = connect(settings, "vector", vector_pb2_grpc.VectorServiceStub)
    try:
        status = client.stub.Status(vector_pb2.VectorStatusRequest(), timeout=settings.rpc_timeout_s)
        if status.lag <= 0:
            return
        _watch(progress, lambda: client.stub.Status(vector_pb2.VectorStatusRequest(),
                                                    timeout=settings.rpc_timeout_s), status.lag)
    except MnemoError:
        return
    except KeyboardInterrupt:
        progress.fail("stopped watching; the vector index keeps catching up in the background (mnemo stats)")
    finally:
        client.close()


def _watch(progress: Progress, status_of: Callable[[], Any], initial: int) -> None:
    started, moved = time.monotonic(), time.monotonic()
    last = initial
    while True:
        lag = status_of().lag
        if lag <= 0:
            progress.done(f"vector index caught up: {initial:,} changes embedded")
            return
        if lag != last:
            last, moved = lag, time.monotonic()
        if time.monotonic() - moved > STALL_S:
            progress.fail(f"vector index: {lag:,} changes behind and not moving; see mnemo status")
            return
        done = initial - lag
        progress.update(f"vector index catching up: {rate_and_eta(max(done, 0), initial, time.monotonic() - started)}")
        time.sleep(POLL_S)
