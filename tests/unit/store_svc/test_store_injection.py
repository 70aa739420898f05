"""No query text can make a search fail or change its meaning (in process; the gRPC twin is in
tests/service/store_svc). Full-text path and LIKE (files filter) path, plus hypothesis properties."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from mnemo.query import parse, to_fts5
from mnemo.v1 import common_pb2, store_pb2
from store_svc.core import Store
from tests.unit.store_svc.hostile import hostile_queries

pytestmark = pytest.mark.unit

QUERIES = hostile_queries()


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("inj") / "mnemo.db")
    s.add_observations(store_pb2.AddObservationsRequest(observations=[
        common_pb2.Observation(memory_session_id="m", project="p", type="bugfix", title="Login redirect loop",
                               narrative="cache 50% hit_rate \\ path", files_modified=["src/a%b_c\\d.py"]),
        common_pb2.Observation(memory_session_id="m", project="p", type="discovery", title="用户登录失败",
                               narrative="ログイン 한국어", files_read=["docs/登录.md"]),
    ]))
    yield s
    s.close()


def test_the_suite_is_large_enough():
    assert len(QUERIES) >= 300


def test_every_hostile_string_parses_to_a_safe_expression():
    for text in QUERIES:
        for operators in (False, True):
            expression = to_fts5(parse(text, operators=operators))
            assert expression is None or isinstance(expression, str)


def test_every_hostile_string_is_a_normal_full_text_search(store):
    for text in filter(_encodable, QUERIES):
        for syntax in (store_pb2.QUERY_SYNTAX_PLAIN, store_pb2.QUERY_SYNTAX_OPERATORS):
            reply = store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax))
            assert reply.total >= len(reply.hits)


def test_every_hostile_string_is_a_normal_files_filter(store):
    for text in filter(_encodable, QUERIES):
        reply = store.search(store_pb2.StoreSearchRequest(filters=common_pb2.Filters(files=[text])))
        assert reply.total >= len(reply.hits)


def test_like_wildcards_are_literal(store):
    def files(fragment: str) -> int:
        return store.search(store_pb2.StoreSearchRequest(filters=common_pb2.Filters(files=[fragment]))).total

    assert files("a%b_c\\d") == 1 and files("%") == 1 and files("_") == 1 and files("\\") == 1
    assert files("a_b") == 0 and files("登录") == 1


def test_sql_fragments_do_not_change_the_query(store):
    assert store.search(store_pb2.StoreSearchRequest(query="' OR '1'='1")).total == 0
    assert store.search(store_pb2.StoreSearchRequest(query="login' --")).total == 1
    assert store.stats(store_pb2.StatsRequest()).observations == 2


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300), st.booleans())
def test_any_text_is_a_normal_search(store, text, operators):
    syntax = store_pb2.QUERY_SYNTAX_OPERATORS if operators else store_pb2.QUERY_SYNTAX_PLAIN
    reply = store.search(store_pb2.StoreSearchRequest(query=text, syntax=syntax))
    assert reply.total >= len(reply.hits)


@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=3, max_size=12),
       noise=st.text(max_size=40))
def test_a_stored_unique_word_is_found(store, word, noise):
    if parse(word).cjk or len(parse(word).terms) != 1:
        return  # CJK and multi-token words take other paths, tested separately
    unique = f"zq{word}"
    [oid] = store.add_observations(store_pb2.AddObservationsRequest(observations=[common_pb2.Observation(
        memory_session_id="prop", project="p", type="discovery", title=f"note {unique}",
        narrative=noise or "n")])).ids
    found = store.search(store_pb2.StoreSearchRequest(query=f"where is {unique}?", page=common_pb2.Page(limit=500)))
    assert oid in [h.ref.id for h in found.hits]
