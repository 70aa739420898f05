"""A priming job: load a corpus's snapshot, embed its passages, compute its digest.

The job runs inside the PrimeCorpus / ReprimeCorpus stream and yields its progress as
PrimeEvents. It ends in one of three ways:
- done: the corpus is "primed"; the last event carries the result;
- cancelled (the client went away, or the service is stopping): the partial index is
  dropped and the corpus is "unprimed" again; when the caller still listens, a last
  "cancelled" event says why the stream ends;
- failed: the partial index is dropped, the corpus is recorded "failed" with the reason
  (list_corpora shows it), and the error is raised, so the stream ends with its status
  code (NOT_FOUND, UNAVAILABLE...) rather than with an event that would hide it.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any

from mnemo.errors import (
    Aborted,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    MnemoError,
    Unavailable,
    downstream_unavailable,
)
from mnemo.logs import get_logger
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2
from search_svc.backend import Backend
from search_svc.corpus.passages import observation_passages
from search_svc.corpus.records import RECORDS_BATCH, detached, drop_collection, fetch_observations, job_total
from search_svc.corpus.rendering import render_cancelled, render_primed
from search_svc.digest import build_digest, digest_json, render_digest

# The name the server interceptor gives this service in the errors it restates.
SEARCH_SERVICE = search_pb2.DESCRIPTOR.services_by_name["SearchService"].name

log = get_logger(__name__)

# Passages per UpsertCorpusDocuments call adapt to the embedder (BatchSizer): cancellation
# is checked between calls, so a call should take about BATCH_TARGET_S, whatever the model
# and the passage lengths. Small batches cost a little throughput (a Chroma write per call).
BATCH_START, BATCH_MIN, BATCH_MAX = 32, 4, 128
BATCH_MAX_CHARS = 32_000
BATCH_TARGET_S = 1.0
JOB_HEARTBEAT_S = 2.0
RETRY_PAUSE_S = 0.5


@dataclass
class BatchSizer:
    """How many passages the next UpsertCorpusDocuments call carries. It doubles while calls
    finish in under half the target time and halves when one takes over twice the target,
    so a slow embedder (or a loaded machine) still lets a cancel through within seconds and
    a fast one is not slowed by a Chroma write per handful of passages."""

    size: int = BATCH_START
    minimum: int = BATCH_MIN
    maximum: int = BATCH_MAX
    target_s: float = BATCH_TARGET_S
    max_chars: int = BATCH_MAX_CHARS

    def take(self, docs: list[vector_pb2.CorpusDocument], start: int) -> list[vector_pb2.CorpusDocument]:
        """The next batch from `start`: at most `size` passages and `max_chars` characters (at least one)."""
        batch: list[vector_pb2.CorpusDocument] = []
        chars = 0
        for doc in docs[start:start + self.size]:
            if batch and chars + len(doc.text) > self.max_chars:
                break
            batch.append(doc)
            chars += len(doc.text)
        return batch

    def observe(self, seconds: float) -> None:
        if seconds < self.target_s / 2:
            self.size = min(self.maximum, self.size * 2)
        elif seconds > self.target_s * 2:
            self.size = max(self.minimum, self.size // 2)


class JobCancelled(Exception):
    """The client went away (or the service is stopping): stop and put the corpus back in order."""


def _replaced(name: str) -> FailedPrecondition:
    return FailedPrecondition(f'corpus "{name}" was rebuilt or replaced while it was being primed; '
                              "call prime_corpus again")


@dataclass
class PrimeJob:
    """One priming run. Cancellation is checked before and after every batch; work stops at
    the first check that sees it. A cancelled or failed job drops its partial collection, so a
    corpus is never left "primed" on half an index (see docs/corpora.md)."""

    backend: Backend
    corpus: store_pb2.Corpus
    kind: str
    client_gone: Callable[[], bool]  # the caller cancelled or disconnected
    stopping: Callable[[], bool]  # the service is shutting down
    done: int = 0
    started_at: int = field(default_factory=now_ms)
    ended: bool = False  # the outcome is recorded; nothing is left to clean up
    _last_heartbeat: float = field(default_factory=time.monotonic)
    # Fences this job's collection across vector_svc replicas (UpsertCorpusDocumentsRequest.generation).
    generation: str = field(default_factory=lambda: f"{now_ms():013d}-{secrets.token_hex(4)}")

    @property
    def name(self) -> str:
        return self.corpus.name

    @property
    def project(self) -> str:
        """The corpus's project: with its name, its key in the store and in vector_svc."""
        return self.corpus.filter.project

    @property
    def total(self) -> int:
        return job_total(len(self.corpus.observation_ids))

    # -- driver --------------------------------------------------------------------------
    def run(self) -> Iterator[search_pb2.PrimeEvent]:
        log.info("corpus_job_started", corpus=self.name, kind=self.kind,
                 observations=len(self.corpus.observation_ids))
        try:
            yield from self._work()
        except JobCancelled:
            yield from self._cancelled()
        except GeneratorExit:
            # The server stopped reading (client gone) while this job waited at a yield.
            if not self.ended:
                self._abandon("cancelled: the client went away")
            raise
        except MnemoError as err:
            # Recorded as the caller will see it (a refusal met downstream is restated).
            reported = downstream_unavailable(err, SEARCH_SERVICE)
            self._fail(reported.message)
            if reported is err:
                raise
            raise reported from None
        except Exception as err:
            ref = secrets.token_hex(4)
            log.exception("corpus_job_crashed", corpus=self.name, ref=ref)
            message = f"internal error (ref={ref}); see the search service log"
            self._fail(message)
            raise Internal(message) from err

    def _work(self) -> Iterator[search_pb2.PrimeEvent]:
        yield self._event("load", f"loading {len(self.corpus.observation_ids):,} observations")
        observations = yield from self._load()
        yield from self._embed(observations)
        yield self._event("digest", "computing the digest")
        yield self._finish(build_digest(observations))

    def _cancelled(self) -> Iterator[search_pb2.PrimeEvent]:
        if self.client_gone():
            self._abandon("cancelled: the client cancelled the call or went away")
            return
        # The service is stopping but the caller still listens: say why the stream ends.
        message = "cancelled: the search service is stopping"
        corpus = self._abandon(message)
        event = search_pb2.PrimeEvent(phase="cancelled", done=self.done, total=self.total, message=message,
                                      result_text=render_cancelled(self.name, message, self.kind), final=True)
        if corpus is not None:
            event.corpus.CopyFrom(corpus)
        yield event

    def _check(self) -> None:
        if self.stopping() or self.client_gone():
            raise JobCancelled()

    def _event(self, phase: str, message: str) -> search_pb2.PrimeEvent:
        return search_pb2.PrimeEvent(phase=phase, done=self.done, total=self.total, message=message)

    def _job_record(self, outcome: str, message: str = "") -> store_pb2.CorpusJob:
        finished = now_ms() if outcome != "running" else 0
        return store_pb2.CorpusJob(kind=self.kind, outcome=outcome, message=message,
                                   started_at_epoch=self.started_at, finished_at_epoch=finished,
                                   done=self.done, total=self.total)

    def _heartbeat(self) -> None:
        """Record progress on the corpus now and then: list_corpora shows it, and a fresh
        record tells other jobs this one is alive."""
        if time.monotonic() - self._last_heartbeat < JOB_HEARTBEAT_S:
            return
        self._last_heartbeat = time.monotonic()
        try:
            self.backend.store.stub.UpdateCorpus(store_pb2.UpdateCorpusRequest(
                name=self.name, project=self.project, last_job=self._job_record("running"),
                expected_state="priming"))
        except Aborted:
            raise _replaced(self.name) from None
        except MnemoError as err:  # progress is informational: a store hiccup must not end the job
            log.warning("corpus_heartbeat_failed", corpus=self.name, error=str(err))

    # -- phases --------------------------------------------------------------------------
    def _load(self) -> Generator[search_pb2.PrimeEvent, None, list[common_pb2.Observation]]:
        ids = list(self.corpus.observation_ids)
        observations: list[common_pb2.Observation] = []
        for start in range(0, len(ids), RECORDS_BATCH):
            self._check()
            observations += fetch_observations(self.backend, ids[start:start + RECORDS_BATCH])
            self.done = min(len(ids), start + RECORDS_BATCH)
            self._heartbeat()
            self._check()
            yield self._event("load", f"loaded {self.done:,} of {len(ids):,} observations")
        if not observations:
            raise FailedPrecondition("none of the snapshot's observations exist any more; "
                                     "call rebuild_corpus")
        return observations

    def _embed(self, observations: list[common_pb2.Observation]) -> Iterator[search_pb2.PrimeEvent]:
        docs = [doc for obs in observations for doc in observation_passages(obs)]
        if not docs:
            raise FailedPrecondition("the corpus's observations hold no text to index; "
                                     "rebuild it with another filter")
        count = len(self.corpus.observation_ids)
        sizer = BatchSizer()
        sent = number = 0
        ids: set[str] = set()
        while sent < len(docs):
            self._check()
            batch = sizer.take(docs, sent)
            number += 1
            began = time.monotonic()
            stored = self._upsert(vector_pb2.UpsertCorpusDocumentsRequest(
                corpus=self.name, project=self.project, documents=batch, reset=(number == 1),
                generation=self.generation))
            sizer.observe(time.monotonic() - began)
            sent += len(batch)
            ids.update(d.id for d in batch)
            if stored < len(ids):  # a stalled first attempt of another replica emptied the collection
                raise _replaced(self.name)
            self.done = count + (count * sent) // len(docs)
            self._heartbeat()
            self._check()
            yield self._event("embed", f"embedded {sent:,} of {len(docs):,} passages (batch {number})")

    def _upsert(self, request: vector_pb2.UpsertCorpusDocumentsRequest) -> int:
        """One batch, retried once after a transient failure: an upsert by stable ids (and a
        reset of the same generation) can run twice without harm, and one hiccup should not
        waste a long job. Returns how many documents the collection holds after it."""
        try:
            return int(self.backend.call_vector(self.backend.vector.stub.UpsertCorpusDocuments, request).documents)
        except (Unavailable, DeadlineExceeded, Internal) as err:
            log.warning("corpus_batch_retry", corpus=self.name, error=str(err))
            time.sleep(RETRY_PAUSE_S)
            self._check()
            return int(self.backend.vector.stub.UpsertCorpusDocuments(request).documents)

    def _finish(self, digest: dict[str, Any]) -> search_pb2.PrimeEvent:
        self._check()
        self.done = self.total
        try:
            corpus = self.backend.store.stub.UpdateCorpus(store_pb2.UpdateCorpusRequest(
                name=self.name, project=self.project, priming_state="primed", last_job=self._job_record("succeeded"),
                digest_json=digest_json(digest), session_id="ks_" + secrets.token_urlsafe(18),
                clear_history=True, expected_state="priming"))
        except Aborted:
            raise _replaced(self.name) from None
        self.ended = True
        log.info("corpus_job_succeeded", corpus=self.name, kind=self.kind, ms=now_ms() - self.started_at)
        text = render_primed(self.name, (now_ms() - self.started_at) / 1000, corpus.stats.observation_count,
                             render_digest(digest))
        return search_pb2.PrimeEvent(phase="done", done=self.done, total=self.total, message="primed",
                                     result_text=text, final=True, corpus=corpus)

    # -- endings -------------------------------------------------------------------------
    def _abandon(self, message: str) -> store_pb2.Corpus | None:
        """Cancelled: drop the partial index, mark the corpus unprimed."""
        log.info("corpus_job_cancelled", corpus=self.name, kind=self.kind, done=self.done, total=self.total)
        drop_collection(self.backend, self.name, self.project)
        return self._record_end("unprimed", self._job_record("cancelled", message))

    def _fail(self, message: str) -> None:
        """Failed: drop the partial index and record why (the caller re-raises the error)."""
        log.warning("corpus_job_failed", corpus=self.name, kind=self.kind, error=message)
        drop_collection(self.backend, self.name, self.project)
        self._record_end("failed", self._job_record("failed", message))

    def _record_end(self, state: str, job: store_pb2.CorpusJob) -> store_pb2.Corpus | None:
        """Write the job's outcome, unless the corpus was replaced meanwhile (then it is not ours)."""
        self.ended = True
        request = store_pb2.UpdateCorpusRequest(name=self.name, project=self.project, priming_state=state,
                                                last_job=job, expected_state="priming")
        try:
            return detached(lambda: self.backend.store.stub.UpdateCorpus(request))
        except Exception as err:  # replaced meanwhile (ABORTED), store down, or channel closed at shutdown
            log.warning("corpus_job_outcome_not_recorded", corpus=self.name, state=state, error=str(err))
            return None
