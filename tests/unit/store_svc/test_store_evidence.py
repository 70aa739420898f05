"""store_svc.evidence: how much of a query each search hit holds, on both backends."""

from __future__ import annotations

import pytest

from mnemo.query import parse
from mnemo.v1 import common_pb2, store_pb2
from store_svc import queries
from store_svc.core import Store
from store_svc.evidence import evidence as evidence_of
from tests.conftest import BOTH_BACKENDS

pytestmark = [pytest.mark.unit, BOTH_BACKENDS]


@pytest.fixture
def store(settings):
    s = Store.from_settings(settings)
    yield s
    s.close()


def add(store: Store, title: str, narrative: str) -> int:
    o = common_pb2.Observation(title=title, narrative=narrative, memory_session_id="mem-1", project="proj",
                               type="discovery")
    return store.add_observations(store_pb2.AddObservationsRequest(observations=[o])).ids[0]


def evidence(store: Store, query: str, operators: bool = False) -> dict[int, float]:
    syntax = store_pb2.QUERY_SYNTAX_OPERATORS if operators else store_pb2.QUERY_SYNTAX_PLAIN
    reply = store.search(store_pb2.StoreSearchRequest(query=query, syntax=syntax))
    return {hit.ref.id: hit.evidence for hit in reply.hits}


def test_a_hit_holding_every_term_has_full_evidence_and_a_partial_one_less(store):
    both = add(store, "Cookie session signing", "SecureCookieSession signs the cookie with the secret key")
    one = add(store, "Session timeout", "the session expires after an hour")
    for filler in range(6):  # "session" becomes common, "cookie" stays rare
        add(store, f"Note {filler}", f"another session note number {filler}")
    found = evidence(store, "cookie session")
    assert found[both] == pytest.approx(1.0)
    assert 0 < found[one] < 0.5  # it lacks the rarer word, which weighs more


def test_stemming_counts_as_the_index_counts_it_and_context_words_never_do(store):
    rid = add(store, "Redirects after login", "the login handler redirects to the dashboard")
    assert evidence(store, "redirect")[rid] == pytest.approx(1.0)


def test_either_alternative_of_or_is_full_evidence(store):
    bazel = add(store, "Bazel build", "bazel caches the build outputs")
    oauth = add(store, "OAuth flow", "oauth tokens refresh hourly")
    for operators in (False, True):
        found = evidence(store, "bazel OR oauth", operators)
        assert found[bazel] == pytest.approx(1.0) and found[oauth] == pytest.approx(1.0)


def test_a_phrase_is_evidence_only_where_its_words_stand_in_order(store):
    exact = add(store, "Payment", "this keeps the payment intent alive")
    scattered = add(store, "Payment retry", "the payment keeps retrying")
    found = evidence(store, '"keeps the payment"', operators=True)
    assert found[exact] == pytest.approx(1.0)
    assert found.get(scattered, 0.0) == 0.0


def ranked(store: Store, query: str) -> list[int]:
    return [hit.ref.id for hit in store.search(store_pb2.StoreSearchRequest(query=query)).hits]


def test_an_identifier_ranks_the_records_holding_it_whole_above_those_holding_its_parts(store):
    apart = [add(store, f"Cookie note {i}", f"sessions keep cookies; py files changed {i}") for i in range(3)]
    exact = add(store, "Moved adapters", "moved the adapters out of sessions.py into adapters.py")
    assert ranked(store, "sessions.py")[0] == exact
    assert set(apart) <= set(ranked(store, "sessions.py"))  # the parts still match: nothing narrows


def test_a_long_camel_case_identifier_matches_as_a_prefix(store):
    whole = add(store, "Cookie signing", "SecureCookieSession signs the cookie")
    assert ranked(store, "SecureCookie") == [whole]
    assert evidence(store, "SecureCookie")[whole] == pytest.approx(1.0)
    assert ranked(store, "SecureCookieSession") == [whole]


@pytest.mark.parametrize("query", ["redirect", "SecureCookie", "title:cookie", '"keeps the payment"', "nowhere"])
def test_a_one_term_search_skips_asking_the_index_again_and_gets_the_same_evidence(store, query):
    for title, narrative in (("Redirects after login", "the login handler redirects to the dashboard"),
                             ("Cookie signing", "SecureCookieSession signs the cookie"),
                             ("Payment", "this keeps the payment intent alive"),
                             ("Cookie jar", "a cookie note whose title holds the word"),
                             ("Session notes", "cookie and redirect both, in the narrative only")):
        add(store, title, narrative)
    parsed = parse(query, operators=True)
    with store.reading() as conn:
        hits = queries.find(conn, common_pb2.Filters(), parsed, common_pb2.ORDER_RELEVANCE, 20, 0).hits
        refs = [(hit.kind, hit.id) for hit in hits]
        asked, known = evidence_of(conn, parsed, refs), evidence_of(conn, parsed, refs, matches=True)
    assert known == asked and all(value == pytest.approx(1.0) for value in known.values())
    assert len(known) == len(refs) and (refs or query == "nowhere")
