"""Cancelling a priming job over gRPC: the service-side job stops working and leaves the
corpus consistent. The embedder is slowed (embed_delay_ms) so the job is still running
when the client cancels."""

from __future__ import annotations

import time

import grpc
import pytest

from mnemo.config import with_overrides
from mnemo.grpc_client import open_channel
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, vector_pb2
from tests.conftest import start_service, wait_for
from tests.service.search_svc.corpus_support import ReceivedBatches

pytestmark = [pytest.mark.service, pytest.mark.chroma, pytest.mark.slow]

EMBED_DELAY_MS = 200


@pytest.fixture
def settings(settings):
    """Every service of this module embeds slowly (fault injection)."""
    return with_overrides(settings, embed_delay_ms=EMBED_DELAY_MS)


def seed(store_stub, count: int, project: str = "slow") -> list[int]:
    items = [common_pb2.Observation(
        memory_session_id="s1", project=project, type="discovery", title=f"slow note {i}",
        subtitle=f"why {i}", narrative=f"Narrative {i} about the slow embedder and batch {i}.",
        facts=[f"fact {i} a", f"fact {i} b"], created_at_epoch=1_767_225_600_000 + i * 1000)
        for i in range(count)]
    return list(store_stub.AddObservations(store_pb2.AddObservationsRequest(observations=items)).ids)


def build(stub, name: str) -> None:
    """A corpus over the project of the same name."""
    stub.BuildCorpus(search_pb2.BuildCorpusRequest(name=name, filter=store_pb2.CorpusFilter(project=name)))


def get(store_stub, name: str) -> store_pb2.Corpus:
    return store_stub.GetCorpus(store_pb2.GetCorpusRequest(name=name))


def test_cancelling_the_call_stops_the_job_and_leaves_the_corpus_unprimed(search_stub, store_stub,
                                                                          vector_stub, received: ReceivedBatches):
    seed(store_stub, 300)
    build(search_stub, "slow")
    passages = 300 * 4  # head, one narrative chunk, two facts
    call = search_stub.PrimeCorpus(search_pb2.CorpusNameRequest(name="slow"), timeout=120)
    embed_events = 0
    for event in call:
        embed_events += event.phase == "embed"
        if embed_events == 2:
            break
    running = store_stub.GetCorpus(store_pb2.GetCorpusRequest(name="slow"))
    assert running.priming_state == "priming" and running.last_job.outcome == "running"
    at_cancel = received.batches("slow")
    call.cancel()
    corpus = wait_for(lambda: (c := get(store_stub, "slow")).priming_state != "priming" and c,
                      timeout=30, what="the job to record its end")
    assert corpus.priming_state == "unprimed"
    assert corpus.last_job.outcome == "cancelled" and "cancel" in corpus.last_job.message
    assert 0 < corpus.last_job.done < corpus.last_job.total and corpus.last_job.finished_at_epoch > 0
    sent = received.batches("slow")
    assert sent >= 2 and received.documents("slow") < passages / 2, "the job went on"
    # Honoured promptly, counted in work rather than seconds: the job checks before and after each
    # batch, so past the cancel only the batch in flight completes (one more if the cancel reached
    # the server between that batch's check and the next batch's).
    assert sent <= at_cancel + 2, f"{sent - at_cancel} batches were embedded after the cancel"
    time.sleep(4 * EMBED_DELAY_MS / 1000)  # long enough for several more batches, had the job kept going
    assert received.batches("slow") == sent, "the job kept sending batches after the cancel"
    # The partial collection was dropped: nothing half-built is left to query.
    dropped = vector_stub.DropCorpus(vector_pb2.DropCorpusRequest(corpus="slow", project="slow"))
    assert not dropped.dropped
    with pytest.raises(grpc.RpcError) as err:
        search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="slow", question="slow embedder"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    text = search_stub.ListCorpora(search_pb2.ListCorporaToolRequest()).text
    assert "State: unprimed; last prime: cancelled" in text


def test_a_second_job_on_the_same_corpus_is_refused_while_one_runs(search_stub, store_stub):
    seed(store_stub, 120, project="busy")
    build(search_stub, "busy")
    first = search_stub.PrimeCorpus(search_pb2.CorpusNameRequest(name="busy"), timeout=120)
    assert next(first).phase == "load"
    with pytest.raises(grpc.RpcError) as err:
        list(search_stub.ReprimeCorpus(search_pb2.CorpusNameRequest(name="busy"), timeout=30))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "being primed" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        search_stub.RebuildCorpus(search_pb2.CorpusNameRequest(name="busy"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    events = list(first)
    assert events[-1].phase == "done" and events[-1].done == events[-1].total


def test_stopping_the_service_cancels_its_jobs_and_records_them(settings, store_stub, vector_server, home,
                                                                received: ReceivedBatches):
    seed(store_stub, 200, project="stop")
    handle, on_stop = start_service("search", settings, listen=f"unix:{home}/run/search-stopping.sock")
    channel = open_channel(handle.address)
    try:
        stub = search_pb2_grpc.SearchServiceStub(channel)
        build(stub, "stop")
        call = stub.PrimeCorpus(search_pb2.CorpusNameRequest(name="stop"), timeout=120)
        assert next(call).phase == "load"
        wait_for(lambda: received.batches("stop") >= 1, 10, "a first batch")
    finally:
        handle.stop(0)
        on_stop()  # Corpora.close(): running jobs stop and record themselves before the channels close
        channel.close()
    # Recorded by the time close() returned, and stopped rather than waited for: cut short mid-way.
    corpus = store_stub.GetCorpus(store_pb2.GetCorpusRequest(name="stop"))
    assert corpus.priming_state == "unprimed" and corpus.last_job.outcome == "cancelled"
    assert 0 < corpus.last_job.done < corpus.last_job.total
