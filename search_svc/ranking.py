"""search_svc's fusion path: search_svc.fusion's steps (fuse, then with_context, with_period_bonus,
with_question_penalty, with_specificity and with_evidence) composed on one score per key and sorted
once, with the same ranking and the same scores to the bit. Each step sorting its whole list again
was most of fusion's time (2.5 -> 1.4 ms per hybrid search of 200 candidates; docs/performance.md).
The steps stay in search_svc.fusion, one function each, for bench.locomo and the tests; both
paths add the gains of the same functions (period_gains, question_gains, specificity_gains,
evidence_gains, _context_bonus), so no step is written twice.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence

from search_svc.fusion import (
    DEFAULT_FUSION,
    Fused,
    FusionParams,
    Key,
    Timeline,
    _context_bonus,
    _contributions,
    _first_occurrences,
    evidence_gains,
    period_gains,
    question_gains,
    specificity_gains,
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
        _add(score, _context_bonus(timeline.keys, timeline.places, [score[key] for key in timeline.keys], params))
    keys = list(score)
    for gains in (period_gains(keys, placement, periods, params), question_gains(keys, asking, params)):
        _add(score, gains)
    if params.specificity_weight > 0 and specificity:  # summed in the order ranked so far, as with_specificity
        _add(score, specificity_gains(sorted(tied, key=score.__getitem__, reverse=True), specificity, params))
    _add(score, evidence_gains(keys, evidence or {}, params))
    bm25 = dict(lex)
    similarity = {key: 1.0 - distance for key, distance in vec}
    fused = [Fused(key, score[key], lex_rank.get(key), vec_rank.get(key), max(bm25.get(key, 0.0), 0.0),
                   similarity.get(key)) for key in sorted(tied, key=score.__getitem__, reverse=True)]
    return fused, timeline


def _add(score: dict[Key, float], gains: Mapping[Key, float]) -> None:
    for key, gain in gains.items():
        score[key] = score[key] + gain
