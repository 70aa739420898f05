"""The relevance floor calibrated for the default model (minilm-int8), over the real stack and
SearchService: an off-topic query finds nothing, an on-topic one finds its record."""

from __future__ import annotations

import pytest

from mnemo.config import Settings, with_overrides
from mnemo.v1 import search_pb2
from tests.conftest import add_observation, sync_vectors
from tests.service.search_svc.test_search_relevance_floor import SHOP

pytestmark = [pytest.mark.service, pytest.mark.chroma]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return with_overrides(settings, embedder="minilm-int8")


@pytest.fixture
def shop(store_stub, vector_stub) -> list[int]:
    made = [add_observation(store_stub, project="shop", title=t, narrative=n) for t, n in SHOP]
    sync_vectors(vector_stub)
    return made


def test_an_off_topic_query_finds_nothing_under_the_calibrated_floor(search_stub, shop):
    reply = search_stub.Search(search_pb2.SearchRequest(query="kubernetes helm chart", project="shop"))
    assert reply.strategy == "hybrid"
    assert list(reply.rows) == [] and reply.counts.total == 0
    assert reply.text.startswith('No results found matching "kubernetes helm chart"')


def test_an_on_topic_query_finds_its_record_and_counts_only_matches(search_stub, shop):
    reply = search_stub.Search(search_pb2.SearchRequest(query="were expired coupons accepted?", project="shop"))
    assert reply.rows[0].ref.id == shop[2]
    assert 1 <= reply.counts.total == len(reply.rows) < len(SHOP)


def test_a_record_just_written_is_found_lexically_before_the_index_embeds_it(search_stub, store_stub, shop):
    """The floor needs a similarity; a record the vector index has not embedded yet has none,
    and must still be found at once by its words (issue 13: 'findable at once lexically')."""
    fresh = add_observation(store_stub, project="shop", title="Quokka mascot on the checkout page",
                            narrative="the quokka mascot replaced the old banner")
    reply = search_stub.Search(search_pb2.SearchRequest(query="quokka mascot", project="shop"))
    assert fresh in [row.ref.id for row in reply.rows]


def test_a_paraphrase_sharing_no_word_finds_its_record_and_nonsense_still_finds_nothing(search_stub, shop):
    """No lexical candidate: the wordless gate judges the vector leg (issue 32). 'lapsed promo codes'
    reaches similarity 0.44 with the coupon record, under the gate of queries sharing words (0.458)."""
    reply = search_stub.Search(search_pb2.SearchRequest(query="lapsed promo codes", project="shop"))
    assert [row.ref.id for row in reply.rows][:1] == [shop[2]]
    for nonsense in ("banana smoothie recipe", "kubernetes helm chart"):
        assert list(search_stub.Search(search_pb2.SearchRequest(query=nonsense, project="shop")).rows) == []


@pytest.mark.parametrize("query", ["were expired coupons accepted?", "kubernetes helm chart", "lapsed promo codes",
                                   "banana smoothie recipe", "coupon", "quokka wombat"])
def test_mnemo_search_and_mem_search_answer_a_query_alike(search_stub, shop, query):
    """`mnemo search --project P` (the viewer's SearchQuery, what the CLI sends) and MCP mem_search
    ask the same hybrid search with the same project scope, under the same floor: the same rows in
    the same order, or nothing for both (bench/known_items.py measures both paths; issue 32)."""
    from viewer.client import SearchQuery

    cli = search_stub.Search(SearchQuery(text=query, project="shop", limit=10).request())
    mcp = search_stub.MemSearch(search_pb2.MemSearchRequest(query=query, project="shop", limit=10))
    assert [row.ref.id for row in cli.rows] == [row.ref.id for row in mcp.rows]
    assert cli.strategy == mcp.strategy == "hybrid"
