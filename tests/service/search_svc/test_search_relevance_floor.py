"""The relevance floor over the real stack (store, vector with the hash embedder): a query with
no relevant record finds nothing and says so, totals count matches, not the project, and a record
ranked through the match written moments before it is a match too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mnemo.v1 import search_pb2
from search_svc.backend import Backend
from search_svc.fusion import RelevanceFloor
from search_svc.retrieval import Retrieval
from tests.conftest import add_observation, sync_vectors

pytestmark = [pytest.mark.service, pytest.mark.chroma]

# For the hash embedder, texts that share no word have similarity ~0 and texts that share a
# few words have 0.2 or more; the floor sits between (it is a test floor, not a calibration).
HASH_FLOOR = {"mnemo-hash-v1": RelevanceFloor(gate=0.2, keep=0.12)}

SHOP = [
    ("Checkout total rounding", "The checkout total rounded cents twice; now rounds once at the end."),
    ("Cart badge count", "The cart badge showed stale item counts after removing a product."),
    ("Coupon expiry", "Expired coupons were still accepted at checkout; added an expiry check."),
    ("Product image sizes", "Product images are now served in three sizes for the catalogue grid."),
]


@pytest.fixture
def floored(settings, store_server, vector_server) -> Iterator[Retrieval]:
    backend = Backend.connect(settings)
    retrieval = Retrieval(backend, settings, floors=HASH_FLOOR)
    try:
        yield retrieval
    finally:
        retrieval.close()
        backend.close()


@pytest.fixture
def shop(store_stub, vector_stub) -> list[int]:
    made = [add_observation(store_stub, project="shop", title=t, narrative=n) for t, n in SHOP]
    add_observation(store_stub, project="infra", title="Helm chart for the kubernetes cluster",
                    narrative="The kubernetes helm chart pins the ingress controller version.")
    sync_vectors(vector_stub)
    return made


def test_a_query_about_nothing_in_the_project_finds_nothing_and_says_so(floored, shop):
    reply = floored.search(search_pb2.SearchRequest(query="kubernetes helm chart", project="shop"))
    assert list(reply.rows) == []
    assert reply.counts.total == 0 and reply.counts.observations == 0
    assert reply.text.startswith('No results found matching "kubernetes helm chart"')


def test_totals_count_matches_not_the_size_of_the_project(floored, shop):
    reply = floored.search(search_pb2.SearchRequest(query="expired coupons at checkout", project="shop"))
    assert reply.rows[0].ref.id == shop[2]
    assert reply.counts.total == len(reply.rows) < len(SHOP)
    assert reply.counts.observations == reply.counts.total


def test_the_other_project_still_finds_its_own_record(floored, shop):
    reply = floored.search(search_pb2.SearchRequest(query="kubernetes helm chart", project="infra"))
    assert reply.counts.total == 1 and reply.rows[0].project == "infra"


def test_pages_of_a_floored_search_add_up_to_its_total(floored, shop):
    first = floored.search(search_pb2.SearchRequest(query="checkout", project="shop", limit=1))
    second = floored.search(search_pb2.SearchRequest(query="checkout", project="shop", limit=1, offset=1))
    assert first.counts.total == second.counts.total == 2
    assert {first.rows[0].ref.id, second.rows[0].ref.id} == {shop[0], shop[2]}


def test_a_record_ranked_through_the_match_written_moments_before_it_is_a_match(floored, store_stub, vector_stub):
    day, start = 86_400_000, 1_767_225_600_000  # 2026-01-01
    older = add_observation(store_stub, project="till", title="Stylesheet",  # a weaker match, a day before
                            narrative="Checkout: moved the button styles into the shared stylesheet.",
                            created_at_epoch=start - day)
    report = add_observation(store_stub, project="till", title="Bug report",
                             narrative="Expired coupons are accepted at checkout.", created_at_epoch=start - 60_000)
    fix = add_observation(store_stub, project="till", title="Coupon expiry",
                          narrative="Expired coupons were still accepted at checkout; added an expiry check.",
                          created_at_epoch=start)
    run = add_observation(store_stub, project="till", title="Test suite", narrative="Ran pytest: 212 passed.",
                          created_at_epoch=start + 60_000)  # shares no word with the query
    add_observation(store_stub, project="till", title="Test suite", narrative="Ran pytest: 180 passed.",
                    created_at_epoch=start + day)  # the same words, a day later: no context of the fix
    sync_vectors(vector_stub)
    reply = floored.search(search_pb2.SearchRequest(query="expired coupons at checkout", project="till"))
    # run is ranked above older (a match on its own) through fix and report, its neighbours in time
    ids = [row.ref.id for row in reply.rows]
    assert sorted(ids[:2]) == sorted([report, fix]) and ids[2:] == [run, older]
    assert reply.counts.total == 4
