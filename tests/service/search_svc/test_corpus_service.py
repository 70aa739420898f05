"""Knowledge corpora through the real search_svc, store_svc and vector_svc (hash embedder).

Every build filter, alone and combined, must select exactly what a direct store query with
the same Filters selects, and what a plain Python reading of the seeded data selects (so
a filter dropped by both sides is still caught). Then priming, querying without an LLM,
rebuilding, and a job failure reported in list_corpora.
"""

from __future__ import annotations

import json

import grpc
import pytest

from mnemo.config import with_overrides
from mnemo.grpc_client import open_channel
from mnemo.timefmt import iso_from_ms, parse_instant
from mnemo.v1 import common_pb2, search_pb2, search_pb2_grpc, store_pb2, vector_pb2
from mnemo.vocab import EVIDENCE_NOTICE
from search_svc.backend import Backend
from search_svc.corpus.core import Corpora
from tests.conftest import start_service
from tests.service.search_svc.corpus_support import ReceivedBatches

pytestmark = [pytest.mark.service, pytest.mark.chroma]

DAY_MS = 86_400_000
BASE_MS = parse_instant("2026-01-01", "seed")
TYPES = ("bugfix", "decision", "feature", "discovery", "refactor")
CONCEPTS = (["gotcha"], ["how-it-works"], ["pattern", "gotcha"], [], ["trade-off"])
FILES = ("src/auth/login.py", "src/db/pool.py", "docs/readme.md", "src/auth/token.py")


def seed_observations(store_stub, count: int, *, project_cycle=("alpha", "beta"), start_ms: int = BASE_MS,
                      first: int = 0):
    """Deterministic observations spread over days, types, concepts, files and words."""
    items = []
    for i in range(first, first + count):
        word = "zebrafish" if i % 7 == 0 else ("quokka" if i % 5 == 0 else "routine")
        items.append(common_pb2.Observation(
            memory_session_id=f"sess-{i % 3}", project=project_cycle[i % len(project_cycle)],
            type=TYPES[i % len(TYPES)], title=f"note {i} about {word}",
            subtitle=f"subtitle {i}", narrative=f"Observation {i}: the {word} module changed in step {i}.",
            facts=[f"fact {i} one", f"fact {i} two"], concepts=CONCEPTS[i % len(CONCEPTS)],
            files_modified=[FILES[i % len(FILES)]] if i % 2 == 0 else [],
            files_read=[FILES[(i + 1) % len(FILES)]] if i % 3 == 0 else [],
            created_at_epoch=start_ms + (i % 60) * DAY_MS + i * 1000,
        ))
    ids = []
    for start in range(0, len(items), 1000):
        request = store_pb2.AddObservationsRequest(observations=items[start:start + 1000])
        ids += store_stub.AddObservations(request).ids
    for obs, id_ in zip(items, ids, strict=True):
        obs.id = id_
    return items


def oracle(items, *, project="", types=(), concepts=(), files=(), word="", start=0, end=0) -> set[int]:
    """What each filter means, read from the seeded data in Python."""
    def keep(o):
        paths = [*o.files_read, *o.files_modified]
        text = " ".join([o.title, o.subtitle, o.narrative, *o.facts]).lower()
        return ((not project or o.project == project) and (not types or o.type in types)
                and (not concepts or set(concepts) & set(o.concepts))
                and (not files or any(f in p for f in files for p in paths))
                and (not word or word in text.split() or f"{word}." in text)
                and (not start or o.created_at_epoch >= start) and (not end or o.created_at_epoch <= end))
    return {o.id for o in items if keep(o)}


def direct_store_ids(store_stub, flt: store_pb2.CorpusFilter) -> set[int]:
    """Every id the store itself returns for the same Filters, paged."""
    filters = common_pb2.Filters(project=flt.project, kinds=[common_pb2.DOC_KIND_OBSERVATION],
                                 obs_types=flt.types, concepts=flt.concepts, files=flt.files,
                                 date_start_epoch=flt.date_start_epoch, date_end_epoch=flt.date_end_epoch)
    ids: set[int] = set()
    offset = 0
    while True:
        page = common_pb2.Page(limit=500, offset=offset)
        if flt.query:
            request = store_pb2.StoreSearchRequest(query=flt.query, filters=filters, page=page)
            rows = store_stub.Search(request).hits
        else:
            rows = store_stub.ListRecent(store_pb2.ListRecentRequest(filters=filters, page=page)).rows
        ids |= {r.ref.id for r in rows}
        offset += len(rows)
        if len(rows) < 500:
            return ids


def build(search_stub, name="c", *, description="", date_start="", date_end="", **flt):
    return search_stub.BuildCorpus(search_pb2.BuildCorpusRequest(
        name=name, description=description, filter=store_pb2.CorpusFilter(**flt),
        date_start=date_start, date_end=date_end))


def prime(search_stub, name="c") -> list[search_pb2.PrimeEvent]:
    return list(search_stub.PrimeCorpus(search_pb2.CorpusNameRequest(name=name), timeout=60))


def corpus_named(search_stub, name):
    corpora = search_stub.ListCorpora(search_pb2.ListCorporaToolRequest()).corpora
    return next(c for c in corpora if c.name == name)


def test_every_filter_alone_and_combined_selects_what_the_store_selects(search_stub, store_stub):
    items = seed_observations(store_stub, 240)
    d10, d20, d40 = BASE_MS + 10 * DAY_MS, BASE_MS + 20 * DAY_MS, BASE_MS + 40 * DAY_MS
    end_of_d20 = d20 + DAY_MS - 1  # a bare dateEnd covers its whole day
    cases = {
        "project": (dict(project="alpha"), dict(project="alpha")),
        "types": (dict(types=["bugfix"]), dict(types=["bugfix"])),
        "two types": (dict(types=["decision", "refactor"]), dict(types=["decision", "refactor"])),
        "concepts": (dict(concepts=["gotcha"]), dict(concepts=["gotcha"])),
        "files": (dict(files=["src/auth/"]), dict(files=["src/auth/"])),
        "query": (dict(query="zebrafish"), dict(word="zebrafish")),
        "date range": (dict(date_start="2026-01-11", date_end="2026-01-21"), dict(start=d10, end=end_of_d20)),
        "date start": (dict(date_start="2026-02-10"), dict(start=d40)),
        "date end": (dict(date_end="2026-01-11"), dict(end=d10 + DAY_MS - 1)),
        "project+types": (dict(project="beta", types=["feature", "bugfix"]),
                          dict(project="beta", types=["feature", "bugfix"])),
        "types+concepts+files": (
            dict(types=["bugfix", "feature", "discovery"], concepts=["gotcha", "trade-off"], files=["auth"]),
            dict(types=["bugfix", "feature", "discovery"], concepts=["gotcha", "trade-off"], files=["auth"])),
        "query+project+types": (
            dict(query="quokka", project="alpha", types=["bugfix", "discovery", "refactor"]),
            dict(word="quokka", project="alpha", types=["bugfix", "discovery", "refactor"])),
        "everything": (dict(project="alpha", types=["bugfix", "decision", "discovery"], concepts=["gotcha"],
                            files=["src/"], query="zebrafish", date_start="2026-01-05",
                            date_end="2026-02-20"),
                       dict(project="alpha", types=["bugfix", "decision", "discovery"], concepts=["gotcha"],
                            files=["src/"], word="zebrafish", start=BASE_MS + 4 * DAY_MS,
                            end=BASE_MS + 51 * DAY_MS - 1)),
    }
    everyone = {o.id for o in items}
    by_id = {o.id: o for o in items}
    problems = {}
    for label, (args, meaning) in cases.items():
        expected = oracle(items, **meaning)
        assert 0 < len(expected) < len(everyone), f"seed data does not exercise {label}"
        reply = build(search_stub, "case", **args)
        got = list(reply.corpus.observation_ids)
        store_ids = direct_store_ids(store_stub, reply.corpus.filter)
        epochs = [by_id[i].created_at_epoch for i in got]
        if set(got) != expected or store_ids != expected or epochs != sorted(epochs):
            problems[label] = {"missing": sorted(expected - set(got))[:5],
                               "extra": sorted(set(got) - expected)[:5],
                               "store_differs": store_ids != expected,
                               "oldest_first": epochs == sorted(epochs)}
        assert reply.corpus.stats.observation_count == len(expected)
        breakdown = {t: sum(1 for i in expected if by_id[i].type == t) for t in TYPES}
        assert dict(reply.corpus.stats.type_breakdown) == {t: n for t, n in breakdown.items() if n}
    assert problems == {}


def test_default_is_500_newest_and_limit_is_bounded(search_stub, store_stub):
    items = seed_observations(store_stub, 620, project_cycle=("bulk",))
    reply = build(search_stub, "big", project="bulk")
    newest = sorted(items, key=lambda o: (o.created_at_epoch, o.id))[-500:]
    assert reply.corpus.filter.limit == 500
    assert list(reply.corpus.observation_ids) == [o.id for o in newest]
    assert reply.corpus.stats.observation_count == 500
    assert "500 of 620 matching observations" in reply.text
    assert reply.corpus.stats.token_estimate > 500 * 20
    assert reply.corpus.stats.earliest == iso_from_ms(newest[0].created_at_epoch)
    assert reply.corpus.stats.latest == iso_from_ms(newest[-1].created_at_epoch)
    small = build(search_stub, "small", project="bulk", types=["bugfix"], limit=7)
    assert len(small.corpus.observation_ids) == 7
    everything = build(search_stub, "all", project="bulk", limit=10_000)
    assert len(everything.corpus.observation_ids) == 620
    for bad in (10_001, -5):
        with pytest.raises(grpc.RpcError) as err:
            build(search_stub, "bad", limit=bad)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "limit" in err.value.details()


@pytest.mark.parametrize("name", ["../x", "a/b", "", "x" * 65, "bad name"])
def test_names_that_could_be_paths_are_refused(search_stub, name):
    with pytest.raises(grpc.RpcError) as err:
        build(search_stub, name)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_prime_reports_progress_to_the_end_and_opens_a_session(search_stub, store_stub, vector_stub,
                                                               received: ReceivedBatches):
    items = seed_observations(store_stub, 60)
    built = build(search_stub, "kb", description="alpha notes", project="alpha")
    assert built.corpus.priming_state == "unprimed" and "prime_corpus" in built.text
    events = prime(search_stub, "kb")
    progress = [(e.done, e.total) for e in events]
    assert [e.phase for e in events][0] == "load" and {"embed", "digest"} <= {e.phase for e in events}
    assert all(a[0] <= b[0] for a, b in zip(progress, progress[1:], strict=False)), "progress must never go back"
    assert len({t for _, t in progress}) == 1
    final = events[-1]
    assert final.final and final.phase == "done" and final.done == final.total > 0
    assert sum(e.final for e in events) == 1
    assert "primed" in final.result_text and "query_corpus" in final.result_text
    corpus = final.corpus
    assert corpus.priming_state == "primed" and corpus.session_id.startswith("ks_")
    assert corpus.last_job.outcome == "succeeded" and corpus.last_job.kind == "prime"
    digest = json.loads(corpus.digest_json)
    alpha = [o for o in items if o.project == "alpha"]
    assert digest["observations"] == len(alpha)
    assert {t["name"] for t in digest["themes"]["types"]} == {o.type for o in alpha}
    assert digest["top_terms"] and digest["time_span"]["earliest"]
    assert received.batches("kb") == sum(e.phase == "embed" for e in events)
    hits = vector_stub.QueryCorpus(vector_pb2.QueryCorpusRequest(corpus="kb", project="alpha",
                                                                 text="zebrafish module", limit=5))
    assert hits.passages and {p.observation_id for p in hits.passages} <= set(corpus.observation_ids)
    listed = corpus_named(search_stub, "kb")
    assert listed.priming_state == "primed" and "last prime: succeeded" in search_stub.ListCorpora(
        search_pb2.ListCorporaToolRequest()).text


def test_query_without_llm_returns_cited_passages_and_records_the_question(search_stub, store_stub):
    seed_observations(store_stub, 40)
    build(search_stub, "kb", project="beta")
    with pytest.raises(grpc.RpcError) as err:
        search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="what changed?"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "prime_corpus" in err.value.details()
    prime(search_stub, "kb")
    reply = search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="zebrafish module",
                                                                      limit=4))
    snapshot = set(store_stub.GetCorpus(store_pb2.GetCorpusRequest(name="kb")).observation_ids)
    assert reply.text.startswith(EVIDENCE_NOTICE)
    assert 0 < len(reply.passages) <= 4 and reply.answer == ""
    assert set(reply.citations) == {p.observation_id for p in reply.passages} <= snapshot
    assert "only the passages are returned" in reply.text
    assert f"[#{reply.passages[0].observation_id}]" in reply.text
    history = store_stub.GetCorpus(store_pb2.GetCorpusRequest(name="kb")).history
    assert [t.question for t in history] == ["zebrafish module"]
    for bad in (search_pb2.QueryCorpusToolRequest(name="kb", question=""),
                search_pb2.QueryCorpusToolRequest(name="kb", question="x" * 2001),
                search_pb2.QueryCorpusToolRequest(name="kb", question="ok", limit=21)):
        with pytest.raises(grpc.RpcError) as err:
            search_stub.QueryCorpus(bad)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_rebuild_refreshes_the_snapshot_and_marks_the_index_stale(search_stub, store_stub):
    seed_observations(store_stub, 30)
    build(search_stub, "kb", project="alpha", types=["bugfix"])
    prime(search_stub, "kb")
    search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="note"))
    before = corpus_named(search_stub, "kb")
    extra = seed_observations(store_stub, 10, project_cycle=("alpha",), start_ms=BASE_MS + 90 * DAY_MS,
                              first=1000)
    new_bugfixes = {o.id for o in extra if o.type == "bugfix"}
    reply = search_stub.RebuildCorpus(search_pb2.CorpusNameRequest(name="kb"))
    assert new_bugfixes and new_bugfixes <= set(reply.corpus.observation_ids)
    assert reply.corpus.priming_state == "stale" and "reprime_corpus" in reply.text
    assert reply.corpus.last_job == before.last_job  # rebuild runs no job
    assert reply.corpus.session_id == before.session_id and len(reply.corpus.history) == 1
    stale = search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="note"))
    assert "stale" in stale.text
    events = list(search_stub.ReprimeCorpus(search_pb2.CorpusNameRequest(name="kb"), timeout=60))
    after = store_stub.GetCorpus(store_pb2.GetCorpusRequest(name="kb"))
    assert events[-1].phase == "done" and after.priming_state == "primed" and after.last_job.kind == "reprime"
    assert len(after.history) == 0 and after.session_id != before.session_id


def test_the_next_job_may_start_as_soon_as_the_caller_hears_the_end(settings, search_stub, store_stub,
                                                                   vector_server):
    """The caller hears the final event before gRPC resumes the job's generator: a reprime
    sent at that moment must find the corpus free (an MCP client does exactly this)."""
    seed_observations(store_stub, 20)
    build(search_stub, "kb", project="alpha")
    corpora = Corpora(Backend.connect(settings), settings)
    job = corpora.prime(search_pb2.CorpusNameRequest(name="kb"), is_cancelled=lambda: False)
    final = next(event for event in job if event.final)  # the generator is suspended after it
    again = corpora.reprime(search_pb2.CorpusNameRequest(name="kb"), is_cancelled=lambda: False)
    assert final.phase == "done" and list(again)[-1].phase == "done"
    job.close()
    assert corpus_named(search_stub, "kb").last_job.kind == "reprime"


def test_unknown_corpus_and_empty_corpus_say_what_to_do(search_stub, store_stub):
    with pytest.raises(grpc.RpcError) as err:
        prime(search_stub, "nope")
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "build_corpus" in err.value.details()
    reply = build(search_stub, "empty", project="no-such-project")
    assert reply.corpus.stats.observation_count == 0 and "broader filter" in reply.text
    with pytest.raises(grpc.RpcError) as err:
        prime(search_stub, "empty")
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_failed_job_ends_the_stream_with_its_status_and_is_recorded(settings, search_stub, store_stub, home):
    seed_observations(store_stub, 20)
    build(search_stub, "kb", project="alpha")
    # A second search service whose vector peer is gone: every embedding batch fails.
    broken = with_overrides(settings, vector_addr=f"unix:{home}/run/nobody.sock", rpc_timeout_s=3.0)
    handle, on_stop = start_service("search", broken, listen=f"unix:{home}/run/search-broken.sock")
    events: list[search_pb2.PrimeEvent] = []
    try:
        channel = open_channel(handle.address)
        with pytest.raises(grpc.RpcError) as failed:
            for event in search_pb2_grpc.SearchServiceStub(channel).PrimeCorpus(
                    search_pb2.CorpusNameRequest(name="kb"), timeout=30):
                events.append(event)
        channel.close()
    finally:
        handle.stop(0)
        on_stop()
    # The vector service's status reaches the caller with its own code, not an in-band event.
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE and failed.value.details()
    assert events and not any(e.final for e in events) and {e.phase for e in events} <= {"load", "embed"}
    listed = corpus_named(search_stub, "kb")
    assert listed.priming_state == "failed" and listed.last_job.outcome == "failed"
    assert listed.last_job.message == failed.value.details() and listed.last_job.finished_at_epoch > 0
    text = search_stub.ListCorpora(search_pb2.ListCorporaToolRequest()).text
    assert "last prime: failed" in text and listed.last_job.message[:40] in text
    with pytest.raises(grpc.RpcError) as err:
        search_stub.QueryCorpus(search_pb2.QueryCorpusToolRequest(name="kb", question="q"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "failed" in err.value.details()
    # The working service can prime it again.
    assert prime(search_stub, "kb")[-1].phase == "done"
