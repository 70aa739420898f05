"""Fusing a lexical (bm25) ranking and a vector (cosine) ranking into one ranking.

Pure functions over record keys, so they can be tuned offline (bench/locomo.py) and
unit-tested without services. Two methods are implemented:

- "rrf": weighted reciprocal rank fusion, score = w_lex / (k + r_lex) + w_vec / (k + r_vec)
  with 1-based ranks; a record missing from one list gets nothing from it.
- "score": convex combination of normalised scores, score = w_lex * bm25 / max(bm25)
  + w_vec * (sim - floor) / (max(sim) - floor), where sim = 1 - cosine distance and
  floor is the lowest similarity among the vector candidates.
- "zscore": each list's scores standardised over that list, score = w_lex * z(bm25)
  + w_vec * z(sim); a record absent from a list gets 0 from it (the list's mean). Each
  list contributes how far a record stands above that list's average in units of its
  spread, so a record that stands out of one list (a rare-word bm25 hit) can outrank the
  top of a list whose scores are evenly spread. A lexical list shorter
  than the depth asked is padded with zeros for the statistics (records that did not match
  have bm25 0), so one rare-word hit stands far above the mean instead of being the mean.

Then, optionally, temporal context (`with_context`): a record gains context_weight x the
fused score of its better neighbour, where its neighbours are the candidates right before
and after it in time within the same project and at most context_window_ms away. Records
written moments apart are context for each other (a question and the answer that follows
it, an edit and the test run after it), and a record whose own words miss the query is
often found through its neighbour. Only candidates already retrieved take part; nothing
new enters the list.

Ties are broken by the best rank in either list, then by the record key, so the
fused order is deterministic (pagination never repeats or skips a record).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

Key = Hashable
Ranking = list[tuple[Key, float]]


@dataclass(frozen=True)
class FusionParams:
    """How two rankings are combined. Defaults are the values tuned on the LoCoMo dev split."""

    method: str = "rrf"
    """rrf | score | zscore."""
    k: float = 60.0
    """RRF damping constant: larger flattens the difference between ranks."""
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    context_weight: float = 0.0
    """Share of the better time-neighbour's score a record gains (0 = off)."""
    context_window_ms: int = 600_000
    """Neighbours further apart than this are not context."""


# Tuned on the LoCoMo dev split (bench/locomo.py --tune; docs/search.md has the table).
DEFAULT_FUSION = FusionParams(method="zscore", lexical_weight=1.0, vector_weight=0.9, context_weight=0.3)


@dataclass(frozen=True)
class Fused:
    key: Key
    score: float
    lexical_rank: int | None  # 1-based, None when absent from the lexical list
    vector_rank: int | None


def fuse(
    lexical: Sequence[tuple[Key, float]],
    vector: Sequence[tuple[Key, float]],
    params: FusionParams = DEFAULT_FUSION,
    lexical_depth: int = 0,
) -> list[Fused]:
    """One ranking of every key in either list, best first.

    `lexical`: (key, bm25 score, higher is better) best first. `vector`: (key, cosine
    distance, lower is better) closest first. Duplicate keys within a list keep their
    first (best) occurrence.
    """
    lex = _first_occurrences(lexical)
    vec = _first_occurrences(vector)
    if params.method == "rrf":
        contributions = _rrf(lex, vec, params)
    elif params.method == "score":
        contributions = _score(lex, vec, params)
    elif params.method == "zscore":
        contributions = _zscore(lex, vec, params, lexical_depth)
    else:
        raise ValueError(f"unknown fusion method {params.method!r}")
    lex_rank = {key: i + 1 for i, (key, _) in enumerate(lex)}
    vec_rank = {key: i + 1 for i, (key, _) in enumerate(vec)}
    fused = [Fused(key, score, lex_rank.get(key), vec_rank.get(key)) for key, score in contributions.items()]
    _order(fused)
    return fused


def _order(fused: list[Fused]) -> None:
    fused.sort(key=lambda f: (-f.score, min(f.lexical_rank or 1 << 30, f.vector_rank or 1 << 30), repr(f.key)))


def with_context(fused: list[Fused], placement: dict[Key, tuple[str, int]],
                 params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Temporal context propagation (see the module docstring). `placement`: key -> (project,
    created_at_epoch). Returns a new ranking; the input is left as it is."""
    if params.context_weight <= 0 or len(fused) < 2:
        return list(fused)
    base = {f.key: f.score for f in fused}
    timeline = sorted((k for k in base if k in placement), key=lambda k: (placement[k], repr(k)))
    bonus: dict[Key, float] = {}
    for i, key in enumerate(timeline):
        project, epoch = placement[key]
        near = [base[other] for other in (timeline[i - 1] if i else None,
                                          timeline[i + 1] if i + 1 < len(timeline) else None)
                if other is not None and placement[other][0] == project
                and abs(placement[other][1] - epoch) <= params.context_window_ms]
        if near:
            bonus[key] = params.context_weight * max(near)
    out = [Fused(f.key, f.score + bonus.get(f.key, 0.0), f.lexical_rank, f.vector_rank) for f in fused]
    _order(out)
    return out


def _first_occurrences(items: Sequence[tuple[Key, float]]) -> Ranking:
    seen: set[Key] = set()
    kept: Ranking = []
    for key, value in items:
        if key not in seen:
            seen.add(key)
            kept.append((key, value))
    return kept


def _rrf(lex: Ranking, vec: Ranking, params: FusionParams) -> dict[Key, float]:
    scores: dict[Key, float] = {}
    for weight, items in ((params.lexical_weight, lex), (params.vector_weight, vec)):
        for rank, (key, _) in enumerate(items, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (params.k + rank)
    return scores


def _score(lex: Ranking, vec: Ranking, params: FusionParams) -> dict[Key, float]:
    scores: dict[Key, float] = {}
    top_bm25 = max((max(score, 0.0) for _, score in lex), default=0.0)
    for key, score in lex:
        normalised = max(score, 0.0) / top_bm25 if top_bm25 > 0 else 0.0
        scores[key] = params.lexical_weight * normalised
    similarities = [1.0 - distance for _, distance in vec]
    if similarities:
        floor, top = min(similarities), max(similarities)
        span = top - floor
        for (key, _), sim in zip(vec, similarities, strict=True):
            normalised = (sim - floor) / span if span > 0 else 1.0
            scores[key] = scores.get(key, 0.0) + params.vector_weight * normalised
    for key, _ in vec:
        scores.setdefault(key, 0.0)
    return scores


def _standardised(values: list[float], padding: int = 0) -> list[float]:
    """z-scores of `values`, with `padding` extra zeros counted in the mean and spread."""
    population = len(values) + padding
    if population < 2:
        return [0.0 for _ in values]
    mean = sum(values) / population
    spread = ((sum((v - mean) ** 2 for v in values) + padding * mean * mean) / population) ** 0.5
    return [(v - mean) / spread if spread > 0 else 0.0 for v in values]


def _zscore(lex: Ranking, vec: Ranking, params: FusionParams, lexical_depth: int) -> dict[Key, float]:
    scores: dict[Key, float] = {}
    lexical_padding = max(0, lexical_depth - len(lex))
    for weight, keys, values, padding in (
            (params.lexical_weight, [k for k, _ in lex], [max(s, 0.0) for _, s in lex], lexical_padding),
            (params.vector_weight, [k for k, _ in vec], [1.0 - d for _, d in vec], 0)):
        for key, z in zip(keys, _standardised(values, padding), strict=True):
            scores[key] = scores.get(key, 0.0) + weight * z
    return scores
