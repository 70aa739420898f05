"""Corpus jobs against queries on real embedded Chroma: a query that meets a collection being
reset answers a retryable UNAVAILABLE (never Chroma's NotFoundError, an INTERNAL), and a batch
sent again after a timeout waits for its first attempt instead of deleting the collection under it;
across replicas, where no lock is shared, the job's generation fences its collection."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import vector_svc.corpus as corpus_module
from mnemo.config import load_settings, with_overrides
from mnemo.errors import Aborted, FailedPrecondition, Unavailable
from mnemo.v1 import vector_pb2
from vector_svc.corpus import Corpora, collection_name
from vector_svc.embedders import make_embedder
from vector_svc.index import ChromaConnection

pytestmark = pytest.mark.unit

DOCS = [vector_pb2.CorpusDocument(id=f"d{i}", text=f"passage {i} about harbor deploys", observation_id=i)
        for i in range(1, 41)]


@pytest.fixture
def connection(tmp_path: Path):
    conn = ChromaConnection(with_overrides(load_settings({"home": str(tmp_path)}, environ={}), embedder="hash"))
    yield conn
    conn.close()


def test_a_collection_deleted_between_finding_and_querying_it_is_unavailable(connection, monkeypatch):
    corpora = Corpora(connection, make_embedder("hash"))
    corpora.upsert("kb", DOCS[:5], reset=True)
    found = corpus_module.find_collection

    def found_then_reset(client, name, embedder, remedy):  # the fault: a reprime's reset lands in between
        collection = found(client, name, embedder, remedy)
        client.delete_collection(name)
        return collection

    monkeypatch.setattr(corpus_module, "find_collection", found_then_reset)
    with pytest.raises(Unavailable, match="being re-primed"):
        corpora.query("kb", "harbor", 5)


def test_queries_during_a_slow_reprime_never_fail_otherwise(connection):
    writer = Corpora(connection, make_embedder("hash", delay_ms=20))
    writer.upsert("kb", DOCS, reset=True)
    outcomes: list[str] = []
    done = threading.Event()

    def reprime() -> None:
        try:
            for start in range(0, len(DOCS), 8):
                writer.upsert("kb", DOCS[start:start + 8], reset=start == 0)
        finally:
            done.set()

    thread = threading.Thread(target=reprime)
    thread.start()
    while not done.is_set() or len(outcomes) < 5:
        try:
            outcomes.append("passages" if writer.query("kb", "harbor deploys", 3) else "empty")
        except Unavailable:
            outcomes.append("unavailable")
        except FailedPrecondition:
            outcomes.append("not primed")
    thread.join()
    assert set(outcomes) <= {"passages", "empty", "unavailable", "not primed"}
    assert writer.query("kb", "harbor deploys", 3)


def test_a_batch_sent_again_while_its_first_attempt_runs_leaves_every_passage(connection):
    """The job's retry after a timeout: the same reset batch twice at once, then the next batch."""
    corpora = Corpora(connection, make_embedder("hash", delay_ms=30))
    errors: list[BaseException] = []

    def attempt() -> None:
        try:
            corpora.upsert("kb", DOCS[:20], reset=True)
        except BaseException as err:  # collected: any failure of either attempt fails the test
            errors.append(err)

    attempts = [threading.Thread(target=attempt) for _ in range(2)]
    for thread in attempts:
        thread.start()
    for thread in attempts:
        thread.join()
    assert errors == []
    assert corpora.upsert("kb", DOCS[20:], reset=False) == len(DOCS)
    assert connection.client().get_collection(collection_name("kb")).count() == len(DOCS)


def test_a_late_first_attempt_on_another_replica_keeps_what_its_job_wrote_since(connection):
    """Two replicas (two Corpora, each with its own locks) on one Chroma: the job's retry of its
    reset batch ran on the second, the job went on, then the stalled first attempt arrives."""
    first, second = Corpora(connection, make_embedder("hash")), Corpora(connection, make_embedder("hash"))
    job = "0001765000000000-aaaa"
    second.upsert("kb", DOCS[:20], reset=True, generation=job)
    second.upsert("kb", DOCS[20:], reset=False, generation=job)
    assert first.upsert("kb", DOCS[:20], reset=True, generation=job) == len(DOCS)  # not emptied


def test_an_older_jobs_batches_cannot_touch_a_later_jobs_collection(connection):
    first, second = Corpora(connection, make_embedder("hash")), Corpora(connection, make_embedder("hash"))
    older, later = "0001765000000000-aaaa", "0001765000000500-bbbb"
    first.upsert("kb", DOCS[:10], reset=True, generation=older)
    second.upsert("kb", DOCS[10:30], reset=True, generation=later)
    with pytest.raises(Aborted, match="re-primed by another job"):
        first.upsert("kb", DOCS[:10], reset=True, generation=older)  # a late reset of the older job
    with pytest.raises(Aborted, match="re-primed by another job"):
        first.upsert("kb", DOCS[30:], reset=False, generation=older)  # its next batch
    assert connection.client().get_collection(collection_name("kb")).count() == 20


def test_a_batch_whose_collection_was_dropped_under_its_job_is_aborted(connection):
    corpora = Corpora(connection, make_embedder("hash"))
    corpora.upsert("kb", DOCS[:10], reset=True, generation="0001765000000000-aaaa")
    assert corpora.drop("kb")
    with pytest.raises(Aborted, match="re-primed by another job"):
        corpora.upsert("kb", DOCS[10:], reset=False, generation="0001765000000000-aaaa")


def test_corpora_of_one_name_in_two_projects_are_separate_collections(connection):
    """Names are each project's own: alpha's "kb" and beta's "kb" never share passages, and a
    reset or drop of one leaves the other; a corpus over all projects keeps its old collection."""
    corpora = Corpora(connection, make_embedder("hash"))
    assert corpora.upsert("kb", DOCS[:5], reset=True, project="alpha") == 5
    assert corpora.upsert("kb", DOCS[5:8], reset=True, project="beta") == 3
    assert corpora.upsert("kb", DOCS[8:9], reset=True) == 1
    assert {p.observation_id for p in corpora.query("kb", "harbor", 20, project="alpha")} == {1, 2, 3, 4, 5}
    assert corpora.drop("kb", project="beta") and not corpora.drop("kb", project="beta")
    assert len(corpora.query("kb", "harbor", 20, project="alpha")) == 5
    names = {collection_name("kb"), collection_name("kb", "alpha"), collection_name("kb", "beta")}
    assert len(names) == 3 and collection_name("kb") == "corpus_kb"
    assert all(n.startswith("pcorpus_") for n in names - {"corpus_kb"})
