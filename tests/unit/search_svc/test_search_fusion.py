"""Rank and score fusion: pure functions over record keys."""

import pytest

from search_svc.fusion import Fused, FusionParams, fuse, with_context, with_question_penalty, with_specificity

pytestmark = pytest.mark.unit


def keys(fused):
    return [f.key for f in fused]


def test_a_record_found_by_both_lists_outranks_records_found_by_one():
    lexical = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    vector = [("d", 0.1), ("c", 0.2)]
    assert keys(fuse(lexical, vector, FusionParams(method="rrf")))[0] == "c"


def test_every_record_of_either_list_appears_once():
    lexical = [("a", 3.0), ("b", 2.0), ("a", 1.0)]
    vector = [("b", 0.3), ("x", 0.4), ("x", 0.5)]
    assert sorted(keys(fuse(lexical, vector))) == ["a", "b", "x"]


def test_ranks_are_reported_per_list():
    fused = {f.key: f for f in fuse([("a", 2.0), ("b", 1.0)], [("b", 0.2)])}
    assert (fused["a"].lexical_rank, fused["a"].vector_rank) == (1, None)
    assert (fused["b"].lexical_rank, fused["b"].vector_rank) == (2, 1)


def test_weights_shift_the_ranking_towards_one_list():
    lexical = [("lex", 5.0)]
    vector = [("vec", 0.1)]
    assert keys(fuse(lexical, vector, FusionParams(lexical_weight=2.0)))[0] == "lex"
    assert keys(fuse(lexical, vector, FusionParams(vector_weight=2.0)))[0] == "vec"


def test_ties_are_broken_deterministically():
    first = keys(fuse([("b", 1.0)], [("a", 0.5)]))
    second = keys(fuse([("b", 1.0)], [("a", 0.5)]))
    assert first == second and len(first) == 2


def test_score_fusion_normalises_both_scales():
    lexical = [("a", 30.0), ("b", 15.0)]
    vector = [("b", 0.1), ("c", 0.9)]
    fused = {f.key: f.score for f in fuse(lexical, vector, FusionParams(method="score"))}
    assert fused["a"] == pytest.approx(1.0)
    assert fused["b"] == pytest.approx(1.5)
    assert fused["c"] == pytest.approx(0.0)


def test_empty_lists_fuse_to_nothing():
    assert fuse([], []) == []


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError):
        fuse([("a", 1.0)], [], FusionParams(method="magic"))


def test_zscore_fusion_lets_an_outlier_of_one_list_beat_the_top_of_an_even_list():
    lexical = [("rare", 9.0)] + [(f"l{i}", 1.0) for i in range(9)]
    vector = [(f"v{i}", 0.30 + 0.01 * i) for i in range(5)] + [("rare", 0.35)] + \
             [(f"w{i}", 0.36 + 0.01 * i) for i in range(4)]
    assert keys(fuse(lexical, vector, FusionParams(method="zscore")))[0] == "rare"
    assert keys(fuse(lexical, vector, FusionParams(method="rrf")))[0] == "rare"


def test_zscore_pads_a_short_lexical_list_so_a_single_hit_stands_out():
    lexical = [("only", 3.0)]
    vector = [("near", 0.1), ("mid", 0.5), ("far", 0.9)]
    padded = fuse(lexical, vector, FusionParams(method="zscore"), lexical_depth=100)
    assert keys(padded)[0] == "only"
    unpadded = {f.key: f.score for f in fuse(lexical, vector, FusionParams(method="zscore"))}
    assert unpadded["only"] == 0.0  # one value alone has no spread: the padding is what carries the signal


def test_context_lifts_a_record_next_to_a_strong_match_in_time_and_project():
    fused = [Fused("question", 3.0, 1, 1), Fused("noise", 1.0, 2, None), Fused("answer", 0.9, None, 2),
             Fused("elsewhere", 0.95, 3, None)]
    placement = {"question": ("p", 1_000), "answer": ("p", 2_000), "noise": ("p", 9_000_000),
                 "elsewhere": ("q", 1_500)}
    ranked = with_context(fused, placement, FusionParams(context_weight=0.5, context_window_ms=60_000))
    assert [f.key for f in ranked][:2] == ["question", "answer"]
    by_key = {f.key: f.score for f in ranked}
    assert by_key["answer"] == pytest.approx(0.9 + 1.5)
    assert by_key["noise"] == 1.0 and by_key["elsewhere"] == 0.95  # too far away / another project


def test_context_off_leaves_the_ranking_alone():
    fused = [Fused("a", 2.0, 1, None), Fused("b", 1.0, None, 1)]
    assert with_context(fused, {"a": ("p", 0), "b": ("p", 1)}, FusionParams(context_weight=0.0)) == fused


def test_the_floor_finds_nothing_when_the_best_candidate_stays_under_the_gate():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)
    fused = fuse([("lex", 4.0)], [("near", 0.55), ("far", 0.9)])  # similarities 0.45 and 0.1
    assert above_floor(fused, floor) == []


def test_the_floor_keeps_the_records_at_the_keep_level_in_their_order():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)
    fused = fuse([("lex", 4.0)], [("best", 0.3), ("mid", 0.65), ("far", 0.9)])  # 0.7, 0.35, 0.1
    kept = [f.key for f in above_floor(fused, floor)]
    assert kept == [k for k in keys(fused) if k in ("best", "mid")]
    assert above_floor(fused, None) == fused


def test_a_record_ranked_above_a_match_through_its_neighbour_is_a_match_whatever_its_own_relevance():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)

    def candidate(key: str, score: float, similarity: float) -> Fused:
        return Fused(key, score, None, 1, similarity=similarity)

    # in fused order; best reaches the gate, mid only the keep level, the others neither
    fused = [candidate("best", 3.0, 0.7), candidate("answer", 2.0, 0.2), candidate("late", 1.9, 0.15),
             candidate("other", 1.8, 0.15), candidate("mid", 1.5, 0.4), candidate("after-mid", 1.4, 0.1),
             candidate("below", 1.0, 0.1)]
    placement = {"best": ("p", 0), "answer": ("p", 60_000), "below": ("p", 120_000), "late": ("p", 3_600_000),
                 "other": ("q", 60_000), "mid": ("p", 7_200_000), "after-mid": ("p", 7_260_000)}
    # answer sits next to best and ranks above mid; below sits next to best too but ranks under every
    # match; late is an hour away, other in another project; mid reaches only keep, so it lends nothing
    assert keys(above_floor(fused, floor, placement=placement)) == ["best", "answer", "mid"]
    without_context = FusionParams(context_weight=0.0)
    assert keys(above_floor(fused, floor, placement=placement, params=without_context)) == ["best", "mid"]


def test_a_lexical_match_the_index_has_not_embedded_yet_is_a_match_whatever_the_floor():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)
    fused = fuse([("new", 4.0), ("old", 2.0)], [("near", 0.55), ("far", 0.9)])  # nothing reaches the gate
    assert [f.key for f in above_floor(fused, floor, unjudged={"new"})] == ["new"]
    assert above_floor(fused, floor) == []


def test_a_lexical_only_record_counts_the_lowest_similarity_and_its_weighted_bm25():
    from search_svc.fusion import RelevanceFloor, relevance

    fused = fuse([("lex", 10.0)], [("a", 0.4), ("b", 0.8)])
    by_key = dict(zip(keys(fused), relevance(fused, RelevanceFloor(gate=0, keep=0, bm25_weight=0.01)), strict=True))
    assert by_key["lex"] == pytest.approx(0.2 + 0.1)
    assert by_key["a"] == pytest.approx(0.6)


def test_adaptive_weights_favour_the_list_whose_top_stands_out():
    lexical = [("peak", 9.0), ("x", 1.0), ("y", 1.0), ("z", 1.0)]  # one record far above the rest
    vector = [("flat1", 0.50), ("flat2", 0.51), ("flat3", 0.52), ("flat4", 0.53)]  # evenly spread
    plain = fuse(lexical, vector, FusionParams(method="zscore", vector_weight=1.5))
    adaptive = fuse(lexical, vector, FusionParams(method="zscore", vector_weight=1.5, adaptive=True))
    assert keys(plain)[0] == "flat1"
    assert keys(adaptive)[0] == "peak"


def test_a_reach_of_two_lets_the_second_neighbour_lend_half_as_much():
    fused = [Fused("answer", 0.0, None, 5), Fused("between", 0.0, None, 6), Fused("question", 4.0, 1, 1)]
    placement = {"answer": ("p", 0), "between": ("p", 1_000), "question": ("p", 2_000)}
    one = {f.key: f.score for f in with_context(fused, placement, FusionParams(context_weight=0.5))}
    two = {f.key: f.score for f in with_context(fused, placement, FusionParams(context_weight=0.5, context_reach=2))}
    assert one["answer"] == 0.0  # its only direct neighbour scored nothing
    assert two["answer"] == pytest.approx(0.5 * 4.0 / 2)
    assert one["between"] == two["between"] == pytest.approx(0.5 * 4.0)


def test_a_record_that_asks_falls_below_the_record_that_tells():
    fused = [Fused("question", 3.0, 1, 1), Fused("answer", 2.0, 2, 2), Fused("other", 0.5, 3, None)]
    ranked = with_question_penalty(fused, {"question"}, FusionParams(question_penalty=1.5))
    assert keys(ranked) == ["answer", "question", "other"]
    assert {f.key: f.score for f in ranked}["question"] == pytest.approx(1.5)
    assert keys(with_question_penalty(fused, {"question"}, FusionParams(question_penalty=0.0))) == keys(fused)


def test_a_question_still_lends_its_whole_score_to_its_answer_as_context():
    """The penalty comes after temporal context, as search_svc.retrieval applies them."""
    fused = [Fused("question", 4.0, 1, 1), Fused("answer", 0.0, None, 5)]
    params = FusionParams(context_weight=0.5, question_penalty=1.5)
    placement = {"question": ("p", 0), "answer": ("p", 1_000)}
    ranked = with_question_penalty(with_context(fused, placement, params), {"question"}, params)
    assert {f.key: f.score for f in ranked}["answer"] == pytest.approx(2.0)


def test_the_more_specific_of_two_close_candidates_ranks_first():
    fused = [Fused("small talk", 2.0, 1, 1), Fused("specific", 1.8, 2, 2), Fused("summary", 1.0, 3, None)]
    specificity = {"small talk": 1.0, "specific": 3.0, "summary": 0.0}  # 0: unknown, gains nothing
    ranked = with_specificity(fused, specificity, FusionParams(specificity_weight=0.35))
    assert keys(ranked) == ["specific", "small talk", "summary"]
    scores = {f.key: f.score for f in ranked}
    # z-scores over the two known values are +1 and -1
    assert (scores["specific"], scores["small talk"], scores["summary"]) == pytest.approx((2.15, 1.65, 1.0))
    assert keys(with_specificity(fused, specificity, FusionParams(specificity_weight=0.0))) == keys(fused)


def test_specificity_needs_two_different_known_values():
    fused = [Fused("a", 2.0, 1, 1), Fused("b", 1.0, 2, 2)]
    params = FusionParams(specificity_weight=0.5)
    assert with_specificity(fused, {"a": 2.0}, params) == fused
    assert with_specificity(fused, {"a": 2.0, "b": 2.0}, params) == fused


def test_a_record_holding_every_query_term_is_a_match_whatever_its_similarity():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)
    fused = fuse([("all-words", 4.0), ("some-words", 6.0)], [("near", 0.75), ("far", 0.9)])  # none reaches keep
    assert above_floor(fused, floor) == []
    evidence = {"all-words": 1.0, "some-words": 0.6}
    assert keys(above_floor(fused, floor, evidence=evidence)) == ["all-words"]
    assert keys(above_floor(fused, RelevanceFloor(gate=0.5, keep=0.3, evidence=0.5), evidence=evidence)) == [
        k for k in keys(fused) if k in ("all-words", "some-words")]
    # once the query has a match, a vector neighbour reaching keep is one too, as before
    nearer = fuse([("all-words", 4.0)], [("near", 0.6), ("far", 0.9)])  # similarities 0.4 and 0.1
    assert sorted(keys(above_floor(nearer, floor, evidence=evidence))) == ["all-words", "near"]


def test_evidence_makes_a_match_beside_it_as_a_gate_does():
    from search_svc.fusion import RelevanceFloor, above_floor

    floor = RelevanceFloor(gate=0.5, keep=0.3)
    fused = [Fused("words", 3.0, 1, None), Fused("answer", 2.0, None, 1, similarity=0.1),
             Fused("later", 1.5, None, 2, similarity=0.35)]
    placement = {"words": ("p", 0), "answer": ("p", 60_000), "later": ("p", 7_200_000)}
    assert keys(above_floor(fused, floor, placement=placement, evidence={"words": 1.0})) == ["words", "answer", "later"]


def test_evidence_weight_ranks_the_candidate_holding_every_word_of_the_query_first():
    from search_svc.fusion import DEFAULT_FUSION, with_evidence

    fused = [Fused("some", 2.0, 1, 1), Fused("all", 1.5, 2, 2)]
    assert keys(with_evidence(fused, {"some": 0.4, "all": 1.0}, FusionParams(evidence_weight=1.0))) == ["all", "some"]
    assert keys(with_evidence(fused, {"some": 0.4, "all": 0.99}, FusionParams(evidence_weight=1.0))) == ["some", "all"]
    assert with_evidence(fused, {"some": 0.4, "all": 1.0}, FusionParams()) == fused  # off unless asked
    assert DEFAULT_FUSION.evidence_weight > 0  # the product asks


def test_a_query_the_memory_holds_no_word_of_is_judged_by_the_wordless_gate():
    """A paraphrase shares no word with the memory: no lexical candidate, so its best neighbour is
    judged by the wordless gate; a query with a lexical candidate keeps the gate."""
    from search_svc.fusion import RelevanceFloor, above_floor, gate_for

    floor = RelevanceFloor(gate=0.5, keep=0.3, wordless_gate=0.4)
    paraphrase = fuse([], [("near", 0.55), ("far", 0.9)])  # similarities 0.45 and 0.1
    assert gate_for(paraphrase, floor) == 0.4
    assert keys(above_floor(paraphrase, floor)) == ["near"]
    nonsense = fuse([], [("near", 0.65), ("far", 0.9)])  # 0.35: under the wordless gate too
    assert above_floor(nonsense, floor) == []
    with_a_word = fuse([("lex", 4.0)], [("near", 0.55), ("far", 0.9)])
    assert gate_for(with_a_word, floor) == 0.5
    assert above_floor(with_a_word, floor) == []
    assert above_floor(paraphrase, RelevanceFloor(gate=0.5, keep=0.3)) == []  # None: the gate


def test_the_calibrated_floor_judges_a_record_alike_however_it_was_saved():
    """A title indexed at bm25 weight 8 (save_memory) multiplies a record's bm25; the calibrated
    floor's relevance is its similarity alone, so the path a record was saved by does not move it
    over the gate (issue 32: 0.885 -> 0.916 'nothing found' on the SaveMemory path)."""
    from search_svc.fusion import CALIBRATED_FLOORS, relevance

    for floor in CALIBRATED_FLOORS.values():
        narrative_only = fuse([("a", 3.0)], [("a", 0.6)])
        with_a_title = fuse([("a", 24.0)], [("a", 0.6)])
        assert relevance(narrative_only, floor) == relevance(with_a_title, floor)


def _chained(lexical, vector, params, depth, placement, periods, asking, specificity, evidence, floor):
    from search_svc.fusion import above_floor, with_evidence, with_period_bonus

    fused = fuse(lexical, vector, params, lexical_depth=depth)
    fused = with_context(fused, placement, params)
    fused = with_period_bonus(fused, placement, periods, params)
    fused = with_question_penalty(fused, asking, params)
    fused = with_specificity(fused, specificity, params)
    fused = with_evidence(fused, evidence, params)
    return above_floor(fused, floor, frozenset(), placement, params, evidence=evidence)


@pytest.mark.parametrize("seed", range(60))
def test_rank_is_the_chain_of_steps_to_the_bit(seed):
    """rank (search_svc's path: one score per key, one sort) gives what fuse and the with_* steps
    give one after the other: the same keys in the same order with the same scores, ties included."""
    import random

    from search_svc.fusion import DEFAULT_FUSION, RelevanceFloor, above_floor
    from search_svc.periods import named_periods
    from search_svc.ranking import rank

    rng = random.Random(seed)
    pool = [(rng.choice((0, 1, 2)), i) for i in range(rng.randrange(0, 80))]
    lexical = [(k, rng.choice((0.0, 1.0, rng.random() * 20)))
               for k in rng.sample(pool, rng.randrange(0, len(pool) + 1))]
    lexical.sort(key=lambda kv: -kv[1])
    vector = sorted(((k, rng.choice((0.5, rng.random()))) for k in rng.sample(pool, rng.randrange(0, len(pool) + 1))),
                    key=lambda kv: kv[1])
    day = 1_707_868_800_000  # 14 February 2024, UTC
    placement = {k: (rng.choice(("p", "q")), day + rng.randrange(0, 3) * 86_400_000 + rng.randrange(0, 900_000))
                 for k in pool if rng.random() < 0.9}
    periods = named_periods("what happened on 14 February, 2024") if seed % 2 else []
    asking = {k for k in pool if rng.random() < 0.2}
    specificity = {k: rng.choice((0.0, 2.0, rng.random() * 5)) for k in pool}
    evidence = {k: rng.choice((0.0, 0.5, 1.0)) for k, _ in lexical}
    params = DEFAULT_FUSION if seed % 3 else FusionParams(method="rrf", context_weight=0.2, question_penalty=0.5)
    floor = RelevanceFloor(gate=0.6, keep=0.4, evidence=1.0, wordless_gate=0.5) if seed % 4 else None
    want = _chained(lexical, vector, params, 100, placement, periods, asking, specificity, evidence, floor)
    fused, timeline = rank(lexical, vector, params, lexical_depth=100, placement=placement, periods=periods,
                           asking=asking, specificity=specificity, evidence=evidence)
    got = above_floor(fused, floor, frozenset(), placement, params, evidence=evidence, timeline=timeline)
    assert got == want


def test_every_model_embedder_has_a_calibrated_floor():
    """An embedder whose model has no floor would make every candidate a match ("nothing found"
    never again); only the hash embedder, which answers no paraphrase, goes without one."""
    from search_svc.fusion import CALIBRATED_FLOORS
    from vector_svc.embedders import EMBEDDERS, HashEmbedder

    models = {factory.model for key, factory in EMBEDDERS.items() if key != HashEmbedder.key}
    assert models and models <= set(CALIBRATED_FLOORS)
