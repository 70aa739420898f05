"""search_svc's fusion path: search_svc.fusion's steps (fuse, then with_context, with_period_bonus,
with_question_penalty, with_specificity and with_evidence) composed on one score per key and sorted
once, with the same ranking and the same scores to the bit. Each step sorting its whole list again
was most of fusion's time (2.5 -> 1.4 ms per hybrid search of 200 candidates; docs/performance.md).
The steps stay in search_svc.fusion, one function each, for bench.locomo and the tests.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from search_svc.fusion import (
    _EVIDENCE_SLACK,
    DEFAULT_FUSION,
    Fused,
    FusionParams,
    Key,
    Timeline,
    _context_bonus,
    _contributions,
    _first_occurrences,
)
from search_svc.periods import Period


def rank(lexical: Sequence[tuple[Key, float]], vector: Sequence[tuple[Key, float]],
         params: FusionParams = DEFAULT_FUSION, *, lexical_depth: int = 0,
         placement: Mapping[Key, tuple[str, int]], periods: Sequence[Period] = (),
         asking: Container[Key] = frozenset(), specificity: Mapping[Key, float] | None = None,
         evidence: Mapping[Key, float] | None = None) -> tuple[list[Fused], Timeline]:
    """fuse, then with_context, with_period_bonus, with_question_penalty, with_specificity and
    with_evidence, in that order: the same ranking and the same scores to the bit, computed on
    one score per key and sorted once at the end (each step sorting its whole list again was
    most of fusion's time). Also the candidates' Timeline, for above_floor."""
    lex = _first_occurrences(lexical)
    vec = _first_occurrences(vector)
    contributions = _contributions(lex, vec, params, lexical_depth)
    lex_rank = {key: i + 1 for i, (key, _) in enumerate(lex)}
    vec_rank = {key: i + 1 for i, (key, _) in enumerate(vec)}
    names = {key: repr(key) for key in contributions}
    # _order's tie-break (best rank in either list, then the key) as one position per key: sorting
    # these by score, descending and stable, is _order.
    tied = sorted(contributions,
                  key=lambda k: (min(lex_rank.get(k) or 1 << 30, vec_rank.get(k) or 1 << 30), names[k]))
    score = dict(contributions)
    placed = sorted((k for k in contributions if k in placement), key=lambda k: (placement[k], names[k]))
    timeline = Timeline(placed, [placement[key] for key in placed])
    if params.context_weight > 0 and len(score) >= 2:
        bonus = _context_bonus(timeline.keys, timeline.places, [score[key] for key in timeline.keys], params)
        score = {key: value + bonus.get(key, 0.0) for key, value in score.items()}
    if params.period_bonus > 0 and periods:
        for key in score:
            if key in placement and any(p.contains(placement[key][1]) for p in periods):
                score[key] = score[key] + params.period_bonus
    if params.question_penalty > 0:
        for key in score:
            if key in asking:
                score[key] = score[key] + -params.question_penalty
    if params.specificity_weight > 0 and specificity:
        _add_specificity(score, sorted(tied, key=score.__getitem__, reverse=True), specificity, params)
    if params.evidence_weight > 0 and evidence:
        for key in score:
            if evidence.get(key, 0.0) >= 1 - _EVIDENCE_SLACK:
                score[key] = score[key] + params.evidence_weight
    bm25 = dict(lex)
    similarity = {key: 1.0 - distance for key, distance in vec}
    fused = [Fused(key, score[key], lex_rank.get(key), vec_rank.get(key), max(bm25.get(key, 0.0), 0.0),
                   similarity.get(key)) for key in sorted(tied, key=score.__getitem__, reverse=True)]
    return fused, timeline


def _add_specificity(score: dict[Key, float], ordered: list[Key], specificity: Mapping[Key, float],
                     params: FusionParams) -> None:
    """with_specificity on `score`, in place; `ordered`: the keys in the current ranking's order,
    in which with_specificity sums (so the mean and the spread are the same to the bit)."""
    values = [v for key in ordered if (v := specificity.get(key, 0.0)) > 0]
    if len(values) < 2:
        return
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if spread <= 0:
        return
    scale = params.specificity_weight / spread
    for key in ordered:
        if (v := specificity.get(key, 0.0)) > 0:
            score[key] = score[key] + scale * (v - mean)
