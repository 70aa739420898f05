"""Which lexical matches the relevance floor cannot judge yet: those changed after the vector
index's watermark (search_svc.semantic.not_yet_embedded), not those missing from the neighbours."""

from __future__ import annotations

import pytest

from mnemo.v1 import common_pb2, store_pb2
from search_svc.semantic import Semantic, _Pending, not_yet_embedded

pytestmark = pytest.mark.unit

OBS, PROMPT = common_pb2.DOC_KIND_OBSERVATION, common_pb2.DOC_KIND_PROMPT


def hits(*refs: tuple[int, int], epoch: int = 0) -> store_pb2.StoreSearchResponse:
    return store_pb2.StoreSearchResponse(hits=[common_pb2.IndexRow(ref=common_pb2.Ref(kind=k, id=i),
                                                                   created_at_epoch=epoch) for k, i in refs])


def test_a_record_past_the_watermark_is_unjudged_and_an_embedded_one_is_judged_however_young():
    lexical = hits((OBS, 1), (OBS, 2), (PROMPT, 3), epoch=1 << 50)  # written "now": young
    semantic = Semantic(pending=_Pending(frozenset({(OBS, 2)}), {}))  # no neighbours at all
    assert not_yet_embedded(lexical, semantic) == {(OBS, 2)}


def test_past_what_was_read_of_the_feed_newer_records_of_a_kind_are_unjudged():
    lexical = hits((OBS, 5), (OBS, 9), (OBS, 12), (PROMPT, 40))
    semantic = Semantic(pending=_Pending(frozenset({(OBS, 9)}), {OBS: 9}))
    assert not_yet_embedded(lexical, semantic) == {(OBS, 9), (OBS, 12)}


def test_without_the_feed_the_old_guess_stands():
    lexical = hits((OBS, 1), epoch=1 << 50)
    assert not_yet_embedded(lexical, Semantic()) == {(OBS, 1)}
    assert not_yet_embedded(hits((OBS, 1), epoch=0), Semantic()) == set()
