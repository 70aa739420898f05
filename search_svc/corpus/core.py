"""Knowledge corpora: build a snapshot from a filter, prime it into its own index, query it.

Where things live: the corpus (filter, snapshot, stats, state, job record, digest, session,
history) in store_svc (PutCorpus/GetCorpus/UpdateCorpus); its passages in its own Chroma
collection in vector_svc (UpsertCorpusDocuments/QueryCorpus/DropCorpus). A corpus name is
a key in both, never a path. This class keeps no state between calls except the set of
jobs running in this process (so it can refuse a second concurrent job and cancel its
jobs on close). See docs/corpora.md for the states and what a cancelled job leaves.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

from mnemo import llm
from mnemo.config import Settings
from mnemo.errors import Aborted, FailedPrecondition, MnemoError, NotFound, Unavailable
from mnemo.logs import get_logger
from mnemo.timefmt import now_ms
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2
from mnemo.vocab import CORPUS_DESCRIPTION_MAX_CHARS, CORPUS_LIMIT_DEFAULT, STORE_PAGE_MAX
from search_svc.backend import Backend
from search_svc.corpus.job import PrimeJob
from search_svc.corpus.passages import corpus_stats
from search_svc.corpus.records import drop_collection, fetch_observations, job_total
from search_svc.corpus.rendering import (
    SYSTEM_PROMPT,
    answer_prompt,
    parse_citations,
    render_answer,
    render_built,
    render_corpora,
)
from search_svc.corpus.validation import (
    bounded_text,
    normalize_filter,
    passage_limit,
    store_filters,
    validate_name,
    validate_question,
)

log = get_logger(__name__)

# A "priming" corpus whose job record was not refreshed for this long has lost its job
# (the process died): a new job may take it over.
JOB_STALE_MS = 60_000
CLOSE_WAIT_S = 5.0
NO_LLM_NOTICE = ("No LLM is configured, so only the passages are returned (no generated answer). "
                 "Read them, or configure anthropic_api_key for grounded answers.")


class Corpora:
    def __init__(self, backend: Backend, settings: Settings):
        self.backend = backend
        self.settings = settings
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified whenever a job leaves _running
        self._running: dict[tuple[str, str], threading.Event] = {}
        self._closing = threading.Event()

    def capabilities(self) -> list[str]:
        return ["corpus", "llm"] if llm.is_configured(self.settings) else ["corpus"]

    def close(self, timeout: float = CLOSE_WAIT_S) -> None:
        """Ask the jobs of this process to stop, and give them a moment to record themselves as
        cancelled before the caller closes the channels they write through."""
        self._closing.set()
        with self._lock:
            for stop in self._running.values():
                stop.set()
            self._idle.wait_for(lambda: not self._running, timeout=timeout)

    # -- build / list / rebuild ----------------------------------------------------------
    def build(self, req: search_pb2.BuildCorpusRequest) -> search_pb2.CorpusReply:
        name = validate_name(req.name)
        description = bounded_text(req.description, "description", CORPUS_DESCRIPTION_MAX_CHARS)
        flt = normalize_filter(req)
        previous = self._find(name, flt.project)
        if previous is not None and previous.filter.project != flt.project:
            previous = None  # names are each project's own: another project's corpus stays
        if previous is not None:
            self._refuse_while_priming(previous, "build_corpus")
        observations, matched = self._snapshot(flt)
        corpus = store_pb2.Corpus(
            name=name, description=description, filter=flt,
            observation_ids=[o.id for o in observations], stats=corpus_stats(observations),
            priming_state="unprimed",
        )
        stored = self.backend.store.stub.PutCorpus(corpus)
        if previous is not None:
            drop_collection(self.backend, name, stored.filter.project)  # the old index: the replaced snapshot's
        log.info("corpus_built", corpus=name, observations=len(observations), matched=matched)
        return search_pb2.CorpusReply(text=render_built(stored, matched, "built"), corpus=stored)

    def list_corpora(self) -> search_pb2.ListCorporaReply:
        corpora = list(self.backend.store.stub.ListCorpora(store_pb2.ListCorporaRequest()).corpora)
        return search_pb2.ListCorporaReply(text=render_corpora(corpora), corpora=corpora)

    def rebuild(self, req: search_pb2.CorpusNameRequest) -> search_pb2.CorpusReply:
        """Re-run the stored filter. The index (if any) now describes an older snapshot, so the
        state becomes "stale"; the session, its history and the last job record are kept."""
        name = validate_name(req.name)
        corpus = self._get(name, req.project)
        self._refuse_while_priming(corpus, "rebuild_corpus")
        flt = store_pb2.CorpusFilter()
        flt.CopyFrom(corpus.filter)
        flt.limit = flt.limit or CORPUS_LIMIT_DEFAULT
        observations, matched = self._snapshot(flt)
        indexed = corpus.priming_state in ("primed", "stale")
        state = "stale" if indexed else ("failed" if corpus.priming_state == "failed" else "unprimed")
        fresh = store_pb2.Corpus(
            name=name, description=corpus.description, filter=flt,
            observation_ids=[o.id for o in observations], stats=corpus_stats(observations),
            priming_state=state, last_job=corpus.last_job, digest_json=corpus.digest_json,
            session_id=corpus.session_id, history=corpus.history, created_at_epoch=corpus.created_at_epoch,
        )
        stored = self.backend.store.stub.PutCorpus(fresh)
        log.info("corpus_rebuilt", corpus=name, observations=len(observations), state=state)
        return search_pb2.CorpusReply(text=render_built(stored, matched, "rebuilt"), corpus=stored)

    def _snapshot(self, flt: store_pb2.CorpusFilter) -> tuple[list[common_pb2.Observation], int]:
        """The observations a filter selects (oldest first) and how many matched in all."""
        ids, matched = self._select_ids(flt)
        observations = fetch_observations(self.backend, ids)
        observations.sort(key=lambda o: (o.created_at_epoch, o.id))
        return observations, max(matched, len(observations))

    def _select_ids(self, flt: store_pb2.CorpusFilter) -> tuple[list[int], int]:
        """Ids of up to `limit` matches, paging through the store (one page is at most STORE_PAGE_MAX).

        Without a query: the newest matches. With a query: the best full-text matches (bm25
        over every word of the query, every filter applied by the store). Vector neighbours
        are not used to select: they have no cutoff, so they would pad every corpus to its
        limit with unrelated records.
        """
        filters = store_filters(flt)
        limit = flt.limit or CORPUS_LIMIT_DEFAULT
        ids: dict[int, None] = {}
        matched = 0
        offset = 0
        while len(ids) < limit:
            page = common_pb2.Page(limit=min(STORE_PAGE_MAX, limit - len(ids)), offset=offset)
            rows, matched = self._page(flt.query, filters, page)
            for row in rows:
                if row.ref.kind == common_pb2.DOC_KIND_OBSERVATION and len(ids) < limit:
                    ids.setdefault(row.ref.id)
            offset += len(rows)
            if len(rows) < page.limit or offset >= matched:
                break
        return list(ids), matched

    def _page(self, query: str, filters: common_pb2.Filters,
              page: common_pb2.Page) -> tuple[list[common_pb2.IndexRow], int]:
        if query:
            found = self.backend.store.stub.Search(store_pb2.StoreSearchRequest(
                query=query, syntax=store_pb2.QUERY_SYNTAX_PLAIN, filters=filters,
                order=common_pb2.ORDER_RELEVANCE, page=page, skip_fusion_inputs=True))
            return list(found.hits), found.observation_total
        recent = self.backend.store.stub.ListRecent(store_pb2.ListRecentRequest(
            filters=filters, page=page, order=common_pb2.ORDER_DATE_DESC))
        return list(recent.rows), recent.total

    # -- store helpers -------------------------------------------------------------------
    def _find(self, name: str, project: str) -> store_pb2.Corpus | None:
        try:
            return self.backend.store.stub.GetCorpus(store_pb2.GetCorpusRequest(name=name, project=project))
        except NotFound:
            return None

    def _get(self, name: str, project: str) -> store_pb2.Corpus:
        corpus = self._find(name, project)
        if corpus is None:
            raise NotFound(f'corpus "{name}" does not exist; call list_corpora to see the corpora, '
                           "or build_corpus to create it")
        return corpus

    def _job_alive(self, corpus: store_pb2.Corpus) -> bool:
        with self._lock:
            if _key(corpus) in self._running:
                return True
        if corpus.priming_state != "priming":
            return False
        last_sign_of_life = max(corpus.updated_at_epoch, corpus.last_job.started_at_epoch)
        return now_ms() - last_sign_of_life < JOB_STALE_MS

    def _refuse_while_priming(self, corpus: store_pb2.Corpus, action: str) -> None:
        if self._job_alive(corpus):
            raise FailedPrecondition(
                f'corpus "{corpus.name}" is being primed right now; wait for the job to finish '
                f"(list_corpora shows its progress) or cancel it, then call {action} again")

    # -- prime / reprime -----------------------------------------------------------------
    def prime(self, req: search_pb2.CorpusNameRequest,
              is_cancelled: Callable[[], bool]) -> Iterator[search_pb2.PrimeEvent]:
        return self._run_job(req, "prime", is_cancelled)

    def reprime(self, req: search_pb2.CorpusNameRequest,
                is_cancelled: Callable[[], bool]) -> Iterator[search_pb2.PrimeEvent]:
        """Clear the knowledge session's history, then prime again (history is cleared as the
        job starts, in the same store write that marks the corpus "priming")."""
        return self._run_job(req, "reprime", is_cancelled)

    def _run_job(self, req: search_pb2.CorpusNameRequest, kind: str,
                 is_cancelled: Callable[[], bool]) -> Iterator[search_pb2.PrimeEvent]:
        name = validate_name(req.name)
        corpus = self._get(name, req.project)
        key = _key(corpus)
        stop = self._claim(corpus, kind)
        try:
            job = PrimeJob(self.backend, corpus, kind, client_gone=is_cancelled, stopping=stop.is_set)
            for event in job.run():
                if event.final:
                    # Free the name before the caller hears the end: the generator resumes
                    # only when gRPC asks for the next item, after the caller may have
                    # started the next job on this corpus.
                    self._release(key, stop)
                yield event
        finally:
            self._release(key, stop)

    def _release(self, key: tuple[str, str], stop: threading.Event) -> None:
        """Forget the job holding `stop` (a later job on the same corpus stays)."""
        with self._lock:
            if self._running.get(key) is stop:
                self._running.pop(key, None)
            self._idle.notify_all()

    def _register(self, corpus: store_pb2.Corpus, kind: str) -> threading.Event:
        """The stop event of a new job on `corpus`, or FailedPrecondition when none may start."""
        name = corpus.name
        if self._closing.is_set():
            raise FailedPrecondition("the search service is stopping; call again in a moment")
        if not corpus.observation_ids:
            raise FailedPrecondition(f'corpus "{name}" has no observations; call rebuild_corpus, '
                                     "or build_corpus with a broader filter")
        self._refuse_while_priming(corpus, f"{kind}_corpus")
        stop = threading.Event()
        with self._lock:
            if _key(corpus) in self._running:
                raise FailedPrecondition(f'corpus "{name}" is being primed right now; '
                                         "wait for the job to finish")
            self._running[_key(corpus)] = stop
        return stop

    def _claim(self, corpus: store_pb2.Corpus, kind: str) -> threading.Event:
        """Mark the corpus "priming" with a running job record, or refuse."""
        name = corpus.name
        stop = self._register(corpus, kind)
        try:
            self.backend.store.stub.UpdateCorpus(store_pb2.UpdateCorpusRequest(
                name=name, project=corpus.filter.project, priming_state="priming",
                last_job=store_pb2.CorpusJob(kind=kind, outcome="running", started_at_epoch=now_ms(),
                                             total=job_total(len(corpus.observation_ids))),
                clear_history=(kind == "reprime"), expected_state=corpus.priming_state))
        except Aborted:
            self._release(_key(corpus), stop)
            raise Aborted(f'corpus "{name}" changed while the job was starting; '
                          f"call {kind}_corpus again") from None
        except BaseException:
            self._release(_key(corpus), stop)
            raise
        return stop

    # -- query ---------------------------------------------------------------------------
    def query(self, req: search_pb2.QueryCorpusToolRequest) -> search_pb2.QueryCorpusReply:
        name = validate_name(req.name)
        question = validate_question(req.question)
        limit = passage_limit(req.limit)
        corpus = self._get(name, req.project)
        _require_index(corpus)
        passages = list(self.backend.call_vector(self.backend.vector.stub.QueryCorpus, vector_pb2.QueryCorpusRequest(
            corpus=name, project=corpus.filter.project, text=question, limit=limit)).passages)
        evidence_ids = list(dict.fromkeys(p.observation_id for p in passages))
        answer, notice = self._answer(corpus, question, passages)
        citations = parse_citations(answer, evidence_ids) if answer else evidence_ids
        if not answer and not notice:
            notice = "No passage matched; nothing to answer from."
        if answer or not llm.is_configured(self.settings):
            self.backend.store.stub.UpdateCorpus(store_pb2.UpdateCorpusRequest(
                name=name, project=corpus.filter.project,
                append_turn=store_pb2.CorpusTurn(question=question, answer=answer, citations=citations,
                                                 created_at_epoch=now_ms())))
        refs = [search_pb2.CorpusPassageRef(observation_id=p.observation_id, text=p.text,
                                            score=1.0 - p.distance) for p in passages]
        text = render_answer(corpus, question, refs, answer, citations, notice)
        return search_pb2.QueryCorpusReply(text=text, passages=refs, answer=answer, citations=citations)

    def _answer(self, corpus: store_pb2.Corpus, question: str,
                passages: list[vector_pb2.CorpusPassage]) -> tuple[str, str]:
        """(the LLM's grounded answer, a notice): the answer is empty when there is none."""
        if not llm.is_configured(self.settings):
            return "", NO_LLM_NOTICE
        if not passages:
            return "", ""
        try:
            prompt = answer_prompt(corpus, question, passages)
            return llm.complete(self.settings, SYSTEM_PROMPT, prompt).strip(), ""
        except MnemoError as err:
            return "", f"The LLM could not answer ({err}); only the passages are returned."


def _key(corpus: store_pb2.Corpus) -> tuple[str, str]:
    """A corpus's key: names are each project's own."""
    return corpus.filter.project, corpus.name


def _require_index(corpus: store_pb2.Corpus) -> None:
    state = corpus.priming_state
    if state in ("primed", "stale"):
        return
    if state == "priming":
        # Retryable: the job ends by itself (a reprime's query used to meet a half-reset index).
        raise Unavailable(f'corpus "{corpus.name}" is being primed; ask again when prime_corpus has '
                          "finished (list_corpora shows its progress)")
    reason = f" (the last job failed: {corpus.last_job.message})" if state == "failed" else ""
    raise FailedPrecondition(f'corpus "{corpus.name}" is not primed{reason}; call prime_corpus with name '
                             f'"{corpus.name}" first, then query_corpus')
