"""Request validation: bounds and enums are refused with the field named."""

import pytest

from mnemo.errors import InvalidArgument
from mnemo.query import parse
from mnemo.v1 import common_pb2, search_pb2
from search_svc.details import parse_anchor
from search_svc.requests import search_args

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("fields, field", [
    ({"limit": 101}, "limit"), ({"limit": -1}, "limit"), ({"offset": -1}, "offset"),
    ({"categories": ["notes"]}, "categories"), ({"order_by": "newest"}, "order_by"),
    ({"date_start": "yesterday"}, "date_start"), ({"date_end": "2026-13-01"}, "date_end"),
    ({"query": "x" * 10_001}, "query"), ({"date_start": "2026-02-01", "date_end": "2026-01-01"}, "date_start"),
])
def test_bad_arguments_name_their_field(fields, field):
    with pytest.raises(InvalidArgument) as err:
        search_args(search_pb2.SearchRequest(**fields))
    assert err.value.field == field


def test_defaults_and_lists():
    args = search_args(search_pb2.SearchRequest(query="q", categories=["observations,prompts"],
                                                obs_types=["bugfix, feature"], date_end="2026-01-15"))
    assert args.limit == 20 and args.offset == 0 and args.order == common_pb2.ORDER_RELEVANCE
    assert list(args.filters.kinds) == [common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_PROMPT]
    assert list(args.filters.obs_types) == ["bugfix", "feature"]
    assert args.filters.date_end_epoch == 1768521599999  # the whole day is included


def test_limit_bounds_are_inclusive():
    assert search_args(search_pb2.SearchRequest(limit=1)).limit == 1
    assert search_args(search_pb2.SearchRequest(limit=100)).limit == 100


@pytest.mark.parametrize("text, kind, rid", [("123", 1, 123), ("#123", 1, 123), ("S12", 2, 12), ("#S12", 2, 12),
                                             ("P7", 3, 7)])
def test_anchors_name_records(text, kind, rid):
    assert parse_anchor(text) == common_pb2.Ref(kind=kind, id=rid)


def test_a_timestamp_anchor_is_epoch_ms_and_garbage_is_refused():
    assert parse_anchor("2026-01-15T14:00:00Z") == 1768485600000
    with pytest.raises(InvalidArgument) as err:
        parse_anchor("last tuesday")
    assert err.value.field == "anchor"


def restricting_operators(query: str) -> tuple[str, ...]:
    return parse(query, operators=True).restricting_operators


def test_restricting_operators_are_detected_only_where_they_are_syntax():
    """search_svc reads the operators from mnemo.query's parse, the store's parser."""
    assert restricting_operators('login NOT oauth') == ("NOT",)
    assert restricting_operators('login -oauth') == ("NOT",)
    assert restricting_operators('"redirect loop"') == ('"phrase"',)
    assert restricting_operators('login -"redirect loop"') == ("NOT", '"phrase"')
    assert restricting_operators("login-flow OR auth*") == ()
    assert restricting_operators('"login" NOT !!!') == ()  # one quoted word and a NOT of nothing narrow nothing
    assert parse("login OR auth*", operators=True).semantic_text == "login auth"
    assert parse("login OR auth*", operators=False).semantic_text == "login OR auth*"


def test_each_alternative_of_an_or_is_embedded_and_their_neighbours_merged():
    """`a OR b` asks the vector index once per side; a record both find keeps its smaller distance."""
    from mnemo.v1 import vector_pb2
    from search_svc.retrieval import MAX_ALTERNATIVES, _semantic_query
    from search_svc.semantic import _nearest

    assert _semantic_query("bazel OR oauth flow", operators=False) == (("bazel", "oauth flow"), "")
    assert _semantic_query("bazel oauth", operators=False) == (("bazel oauth",), "")
    many, _ = _semantic_query(" OR ".join(f"w{i}" for i in range(10)), operators=False)
    assert len(many) == MAX_ALTERNATIVES and many[-1] == "w7 w8 w9"

    def hit(rid: int, distance: float) -> vector_pb2.VectorHit:
        return vector_pb2.VectorHit(ref=common_pb2.Ref(kind=1, id=rid), distance=distance)

    merged = _nearest([vector_pb2.VectorQueryResponse(hits=[hit(1, 0.2), hit(2, 0.5)]),
                       vector_pb2.VectorQueryResponse(hits=[hit(2, 0.1), hit(3, 0.4)])])
    assert [(h.ref.id, h.distance) for h in merged.hits] == [(2, 0.1), (1, 0.2), (3, 0.4)]
