"""The store and vector calls that both the corpus core and a priming job make."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import TypeVar

from mnemo import identity
from mnemo.logs import get_logger
from mnemo.v1 import common_pb2, store_pb2, vector_pb2
from search_svc.backend import Backend

log = get_logger(__name__)

RECORDS_BATCH = 200  # GetRecords maximum
T = TypeVar("T")


def detached(call: Callable[[], T]) -> T:
    """Run a call outside the current RPC's deadline. A cancelled or expired RPC has no time
    left, yet a cancelled job must still record its outcome (the clients read the budget
    from a context variable, which an empty context does not have). The caller stays: the
    store still sees its token, not the service token (mnemo.identity)."""
    who, token = identity.current.get(), identity.caller_token.get()

    def as_caller() -> T:
        identity.current.set(who)
        identity.caller_token.set(token)
        return call()

    return contextvars.Context().run(as_caller)


def fetch_observations(backend: Backend, ids: list[int]) -> list[common_pb2.Observation]:
    """The observations of `ids` that still exist, in batches the store accepts."""
    out = []
    for start in range(0, len(ids), RECORDS_BATCH):
        refs = [common_pb2.Ref(kind=common_pb2.DOC_KIND_OBSERVATION, id=i)
                for i in ids[start:start + RECORDS_BATCH]]
        reply = backend.store.stub.GetRecords(store_pb2.GetRecordsRequest(refs=refs))
        out += [r.observation for r in reply.records if r.WhichOneof("record") == "observation"]
    return out


def drop_collection(backend: Backend, name: str, project: str) -> None:
    """Drop the passage index of corpus `name` of `project`, best effort: the next prime resets it anyway."""
    request = vector_pb2.DropCorpusRequest(corpus=name, project=project)
    try:
        detached(lambda: backend.vector.stub.DropCorpus(request))
    except Exception as err:  # also a channel closed at shutdown
        log.warning("corpus_drop_failed", corpus=name, error=str(err))


def job_total(observations: int) -> int:
    """Work items of a priming job: each observation loaded, each observation embedded, the digest."""
    return 2 * observations + 1
