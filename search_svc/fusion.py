"""Fusing a lexical (bm25) ranking and a vector (cosine) ranking into one ranking.

Pure functions over record keys, so they can be tuned offline (`python -m bench.locomo`) and
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
often found through its neighbour. With context_reach 2 the second neighbour on each side
adds half as much again (only when a direct neighbour exists). Only candidates already
retrieved take part; nothing new enters the list.

Named dates (`with_period_bonus`): a candidate written on a day, in a month or a year the query
names ("on 14 February, 2024"; search_svc.periods) gains period_bonus. Like temporal context it only
reorders candidates already retrieved, so a date never filters anything out.

Records that ask (`with_question_penalty`): a candidate whose text ends in a question loses
question_penalty, after temporal context. It shares the query's words, but the record after it
(the answer) holds what the query is after.

Records that say something (`with_specificity`): each candidate gains specificity_weight x the
z-score, over the candidates, of its specificity (the mean inverse document frequency of its
words, computed by the store): of two candidates that match alike, the one with rarer words (a
name, a file, an error) ranks above small talk and boilerplate ("thanks, sounds great").

Adaptive weights (`adaptive=True`): each list's weight is scaled by how peaked it is (the
z-score of its best item, relative to the other list's), so a list whose top stands far out
(a rare-word bm25 hit, a near-duplicate embedding) counts more than a flat one.

Relevance floor (`RelevanceFloor`, `above_floor`): fused scores are relative to their lists,
so they cannot tell whether anything matched. The floor asks for evidence instead. Lexical
evidence (store_svc.evidence: the share of the query's idf-weighted terms a record holds, for its
best `a OR b` alternative) makes a record a match by itself once it reaches `evidence`: a record
holding the query's words, an identifier or a quoted phrase is never hidden. What only the
vector leg found is judged by its similarity (plus weighted bm25), calibrated on questions asked
in the wrong project (the LoCoMo cross-conversation protocol of bench.locomo, chosen by
cross-validation): a query with no evidence and whose best candidate stays under the gate finds
nothing, and only records with evidence or reaching the keep level are matches, so totals count
matches, not the project's size. A record under both is still a match when a time-neighbour of
it (the neighbours temporal context reads) is evidence or reaches the gate and the ranking puts
it above another match: it was ranked through that neighbour, as temporal context intends. A
query the memory holds no word of (no lexical candidate: a paraphrase, or words found nowhere) has
a gate of its own (`wordless_gate`), calibrated on such queries alone: shared words raise a
similarity, so without them unrelated records sit lower and a lower gate tells as much.

Ties are broken by the best rank in either list, then by the record key, so the
fused order is deterministic (pagination never repeats or skips a record).
"""

from __future__ import annotations

from collections.abc import Container, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from search_svc.periods import Period

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
    adaptive: bool = False
    """Scale each list's weight by how peaked its scores are (zscore only)."""
    context_reach: int = 1
    """Time-neighbours on each side that give context; the n-th counts 1/n of the nearest."""
    period_bonus: float = 0.0
    """What a candidate dated in a period the query names gains (search_svc.periods; 0 = off)."""
    question_penalty: float = 0.0
    """What a candidate whose text ends in a question loses (with_question_penalty; 0 = off)."""
    specificity_weight: float = 0.0
    """What a candidate gains per standard deviation of specificity above the candidates' mean
    (with_specificity; 0 = off)."""
    evidence_weight: float = 0.0
    """What a candidate holding every term of one of the query's alternatives gains (with_evidence;
    0 = off)."""


# What a record holding everything the query names gains (with_evidence), about two standard deviations
# of a fused list: known items (bench/known_items.py) with 0 / 2: identifier hit@10 0.980 / 0.990, two
# words 0.965 / 1.000; LoCoMo's service recall@5 0.811 / 0.817 (docs/search.md, "What answers ranks first").
EVIDENCE_WEIGHT = 2.0
# The in-sample choice of bench.locomo's grid (with the store's context words); leave-one-conversation-out
# CV picks context 0.3, reach 2, w_vec 0.7 and a question penalty of 1 in all 5 folds, a named-date
# bonus of 4 and a specificity weight of 0.35 in 4 and 3 of them (docs/search.md has the tables).
DEFAULT_FUSION = FusionParams(method="zscore", lexical_weight=1.0, vector_weight=0.7, context_weight=0.3,
                              context_reach=2, period_bonus=4.0, question_penalty=1.0, specificity_weight=0.35,
                              evidence_weight=EVIDENCE_WEIGHT)


@dataclass(frozen=True)
class Fused:
    key: Key
    score: float
    lexical_rank: int | None  # 1-based, None when absent from the lexical list
    vector_rank: int | None
    bm25: float = 0.0  # the record's lexical score (0 when absent from that list)
    similarity: float | None = None  # 1 - cosine distance; None when absent from the vector list


@dataclass(frozen=True)
class RelevanceFloor:
    """When a fused list holds matches at all, and which of its records are matches.

    A record whose lexical evidence (store_svc.evidence) reaches `evidence` is a match. Otherwise
    relevance = similarity + bm25_weight x bm25 judges it, where a record absent from the vector
    list counts the lowest similarity in that list (its own is lower still). A query with no
    evidence whose best candidate stays under `gate` found nothing; otherwise the records with
    evidence or reaching `keep` are its matches, with the time-neighbours of those (or of records
    reaching `gate`) that rank above one of them (above_floor). Similarities are only comparable
    within one embedding model, so floors are calibrated per model (CALIBRATED_FLOORS)."""

    gate: float
    keep: float
    bm25_weight: float = 0.0
    evidence: float = 1.0
    """Lexical evidence that makes a record a match by itself (above 1: never)."""
    wordless_gate: float | None = None
    """The gate of a query none of whose words the memory holds (no lexical candidate at all; None:
    `gate`). Shared words pull a text's embedding towards the records holding them, so a query that
    shares none reaches lower similarities with unrelated records than one sharing a few: its gate is
    calibrated on such queries alone (bench/locomo/cv.py), and a paraphrase is judged on that scale."""


# Calibrated by `bench.locomo` (docs/search.md has the table): `gate` lets 7% of the questions
# asked in another conversation's project through (held-out conversations: about 8%); `keep`
# keeps 99% of the evidence records the ranking puts in the first ten. Chosen by
# leave-one-conversation-out CV. `evidence` 1: a record holding every term of the query (of one
# of its OR alternatives) is a match (docs/search.md, "Relevance floor", has what was measured).
# `wordless_gate`: the 97th percentile of the best similarity of the wrong-project questions none of
# whose words the other conversation holds (60 of 760), so that words found nowhere stay at 0.95 or
# more ("A gate for queries without a shared word" in docs/search.md).
# bm25_weight 0: a record's raw bm25 depends on how it was saved (save_memory's title is indexed at
# weight 8, a hook's observation or the bench's narrative-only record has none), so it judged the
# same words differently by path; lexical matches are judged by their evidence (a share, the same on
# every path). With 0.01, LoCoMo questions saved through SaveMemory in another conversation's project
# found nothing 0.885 of the time (0.916 at 0); the bench's path 0.926 either way, recall@5 0.817 ->
# 0.814 in-sample (docs/search.md, "The floor's bm25 term").
_MINILM_FLOOR = RelevanceFloor(gate=0.458, keep=0.295, bm25_weight=0.0, evidence=1.0, wordless_gate=0.425)
CALIBRATED_FLOORS: dict[str, RelevanceFloor] = {
    "all-MiniLM-L6-v2-onnx-int8": _MINILM_FLOOR,
    "all-MiniLM-L6-v2": _MINILM_FLOOR,  # the fp32 vectors are within cosine 0.001 of the int8 ones
    # The opt-in int8-MatMul vectors (cosine ~0.99 of fp32): the dev split's cross-validation on
    # them chose gate 0.459, wordless_gate 0.431, keep 0.294 (docs/vector.md, "Int8 MatMuls").
    "all-MiniLM-L6-v2-onnx-int8-qmatmul": _MINILM_FLOOR,
}
# Evidence never short of 1 by rounding: a share of sums of floats.
_EVIDENCE_SLACK = 1e-9


def relevance(fused: Sequence[Fused], floor: RelevanceFloor) -> list[float]:
    """Each item's relevance under `floor` (see RelevanceFloor), in the order given."""
    known = [f.similarity for f in fused if f.similarity is not None]
    missing = min(known, default=0.0)
    return [(f.similarity if f.similarity is not None else missing) + floor.bm25_weight * f.bm25 for f in fused]


def gate_for(fused: Sequence[Fused], floor: RelevanceFloor) -> float:
    """The floor's gate for this list: its wordless_gate when no candidate came from the lexical
    list (the memory holds none of the query's words), else its gate."""
    if floor.wordless_gate is None or any(f.lexical_rank is not None for f in fused):
        return floor.gate
    return floor.wordless_gate


def above_floor(fused: list[Fused], floor: RelevanceFloor | None, unjudged: Container[Key] = frozenset(),
                placement: Mapping[Key, tuple[str, int]] | None = None,
                params: FusionParams = DEFAULT_FUSION, evidence: Mapping[Key, float] | None = None,
                timeline: Timeline | None = None) -> list[Fused]:
    """The matches of a fused list: none when no record has evidence (`evidence`: key -> its
    lexical evidence) and the best stays under the gate, else those with evidence or reaching
    `keep`, in their order, and those the ranking puts above one of them through a neighbour: a
    candidate within params.context_reach steps in time (as for with_context; `placement` as
    there) of one that has evidence or reaches the gate. A record whose own words miss the query
    is found through its neighbour, so its own relevance says little; one ranked below every
    match adds nothing to the answer. No floor: every candidate is a match. `unjudged`
    candidates (lexical matches the vector index has not embedded yet) are matches either way:
    the floor needs their similarity, which nobody knows yet. `timeline`: the candidates' (rank's),
    read instead of placing them in time again."""
    if floor is None:
        return list(fused)
    evidence = evidence or {}
    evident = [evidence.get(item.key, 0.0) >= floor.evidence - _EVIDENCE_SLACK for item in fused]
    values = relevance(fused, floor)
    gate = gate_for(fused, floor)
    strong = [is_evident or value >= gate for is_evident, value in zip(evident, values, strict=True)]
    if not any(strong):
        return [item for item in fused if item.key in unjudged]
    own = [is_evident or value >= floor.keep for is_evident, value in zip(evident, values, strict=True)]
    last_own = max(i for i, is_own in enumerate(own) if is_own)  # a strong one is its own match
    # only a candidate under keep and ranked above a match can be lent match status
    lendable = {item.key for item, is_own in zip(fused[:last_own], own[:last_own], strict=True) if not is_own}
    lent: set[Key] = set()
    if lendable and params.context_weight > 0:
        anchors = {item.key for item, is_strong in zip(fused, strong, strict=True) if is_strong}
        if timeline is None:
            timeline = Timeline(*_timeline([f.key for f in fused], placement or {}))
        lent = lendable & _beside(anchors, timeline, params)
    return [item for item, is_own in zip(fused, own, strict=True) if is_own or item.key in unjudged or item.key in lent]


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
    contributions = _contributions(lex, vec, params, lexical_depth)
    lex_rank = {key: i + 1 for i, (key, _) in enumerate(lex)}
    vec_rank = {key: i + 1 for i, (key, _) in enumerate(vec)}
    bm25 = dict(lex)
    similarity = {key: 1.0 - distance for key, distance in vec}
    fused = [Fused(key, score, lex_rank.get(key), vec_rank.get(key), max(bm25.get(key, 0.0), 0.0),
                   similarity.get(key)) for key, score in contributions.items()]
    _order(fused)
    return fused


def _contributions(lex: Ranking, vec: Ranking, params: FusionParams, lexical_depth: int) -> dict[Key, float]:
    if params.method == "rrf":
        return _rrf(lex, vec, params)
    if params.method == "score":
        return _score(lex, vec, params)
    if params.method == "zscore":
        return _zscore(lex, vec, params, lexical_depth)
    raise ValueError(f"unknown fusion method {params.method!r}")


def _order(fused: list[Fused]) -> None:
    fused.sort(key=lambda f: (-f.score, min(f.lexical_rank or 1 << 30, f.vector_rank or 1 << 30), repr(f.key)))


def with_context(fused: list[Fused], placement: Mapping[Key, tuple[str, int]],
                 params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Temporal context propagation (see the module docstring). `placement`: key -> (project,
    created_at_epoch). Returns a new ranking; the input is left as it is."""
    if params.context_weight <= 0 or len(fused) < 2:
        return list(fused)
    base = {f.key: f.score for f in fused}
    timeline, places = _timeline(base, placement)
    bonus = _context_bonus(timeline, places, [base[key] for key in timeline], params)
    return _with_gains(fused, bonus)


def _context_bonus(timeline: list[Key], places: list[tuple[str, int]], scores: list[float],
                   params: FusionParams) -> dict[Key, float]:
    """What each record of `timeline` (its `places`, its `scores`) gains from its time-neighbours."""
    window, reach, count = params.context_window_ms, params.context_reach, len(timeline)
    bonus: dict[Key, float] = {}
    for i, key in enumerate(timeline):
        project, epoch = places[i]
        gained = 0.0
        for step in range(1, reach + 1):
            near = []
            for j in (i - step, i + step):  # _near, inlined: this runs for every candidate of every search
                if 0 <= j < count:
                    other_project, other_epoch = places[j]
                    if other_project == project and abs(other_epoch - epoch) <= window:
                        near.append(scores[j])
            if step == 1 and not near:
                break  # no direct neighbour: the record stands alone in time
            gained += max(near, default=0.0) / step  # a neighbour further away counts less
        if gained:
            bonus[key] = params.context_weight * gained
    return bonus


@dataclass(frozen=True)
class Timeline:
    """Candidates placed in time (project, then epoch; ties by key) and their places: what
    with_context and above_floor's neighbours read, computed once by `rank`."""

    keys: list[Key]
    places: list[tuple[str, int]]


def with_period_bonus(fused: list[Fused], placement: Mapping[Key, tuple[str, int]], periods: Sequence[Period],
                      params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Candidates written in a period the query names ("on 14 February, 2024") gain params.period_bonus.
    `placement`: key -> (project, created_at epoch ms), as for with_context. Returns a new ranking;
    the input is left as it is."""
    return _with_gains(fused, period_gains([f.key for f in fused], placement, periods, params))


def period_gains(keys: Iterable[Key], placement: Mapping[Key, tuple[str, int]], periods: Sequence[Period],
                 params: FusionParams) -> dict[Key, float]:
    if params.period_bonus <= 0 or not periods:
        return {}
    return {key: params.period_bonus for key in keys
            if key in placement and any(p.contains(placement[key][1]) for p in periods)}


def with_question_penalty(fused: list[Fused], asking: Container[Key],
                          params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Candidates that ask (`asking`: their text ends in a question) lose params.question_penalty.
    A question shares the words of a query about it, but the record that answers it holds what
    the query is after. Applied after temporal context, so a question still lifts its
    neighbours (the answer that follows it) by its full score. Returns a new ranking."""
    return _with_gains(fused, question_gains([f.key for f in fused], asking, params))


def question_gains(keys: Iterable[Key], asking: Container[Key], params: FusionParams) -> dict[Key, float]:
    if params.question_penalty <= 0:
        return {}
    return {key: -params.question_penalty for key in keys if key in asking}


def with_specificity(fused: list[Fused], specificity: Mapping[Key, float],
                     params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Each candidate gains specificity_weight x the z-score of its specificity among the candidates
    that have one (`specificity`: key -> value, 0 or absent = unknown, which gains nothing).
    Standardised over the candidates, so the store's corpus size does not matter. Returns a new ranking."""
    return _with_gains(fused, specificity_gains([f.key for f in fused], specificity, params))


def specificity_gains(ranked: list[Key], specificity: Mapping[Key, float], params: FusionParams) -> dict[Key, float]:
    """`ranked`: the keys in the current ranking's order, the order the mean and spread are summed in
    (so every path that ranks gets the same floats to the bit)."""
    values = [v for key in ranked if (v := specificity.get(key, 0.0)) > 0]
    if params.specificity_weight <= 0 or len(values) < 2:
        return {}
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if spread <= 0:
        return {}
    scale = params.specificity_weight / spread
    return {key: scale * (v - mean) for key in ranked if (v := specificity.get(key, 0.0)) > 0}


def with_evidence(fused: list[Fused], evidence: Mapping[Key, float],
                  params: FusionParams = DEFAULT_FUSION) -> list[Fused]:
    """Each candidate holding every term of one of the query's alternatives (`evidence`: key -> its
    lexical evidence, store_svc.evidence; 1 = all of them) gains params.evidence_weight, so they
    rank ahead of those holding only some of them unless the fused lists say much more
    (coordination): two common words a note holds together used to rank below ten records holding
    one of them and sitting closer in meaning. A share short of 1 gains nothing: holding the common
    half of a query says little. Returns a new ranking."""
    return _with_gains(fused, evidence_gains([f.key for f in fused], evidence, params))


def evidence_gains(keys: Iterable[Key], evidence: Mapping[Key, float], params: FusionParams) -> dict[Key, float]:
    if params.evidence_weight <= 0 or not evidence:
        return {}
    return {key: params.evidence_weight for key in keys if evidence.get(key, 0.0) >= 1 - _EVIDENCE_SLACK}


def _with_gains(fused: list[Fused], gains: Mapping[Key, float]) -> list[Fused]:
    """A new ranking: each candidate raised by its gain, if it has one, and ordered again."""
    if not gains:
        return list(fused)
    out = [_raised(f, gains[f.key]) if f.key in gains else f for f in fused]
    _order(out)
    return out


def _raised(item: Fused, amount: float) -> Fused:
    """`item` with `amount` added to its score. Fused(...) rather than dataclasses.replace: this
    runs for every candidate of every search."""
    return Fused(item.key, item.score + amount, item.lexical_rank, item.vector_rank, item.bm25, item.similarity)


def _timeline(keys: Iterable[Key], placement: Mapping[Key, tuple[str, int]]) -> tuple[list[Key], list[tuple[str, int]]]:
    """The placed keys in time order (project, then epoch; ties by key), and their places."""
    timeline = sorted((k for k in keys if k in placement), key=lambda k: (placement[k], repr(k)))
    return timeline, [placement[key] for key in timeline]


def _beside(anchors: set[Key], timeline: Timeline, params: FusionParams) -> set[Key]:
    """The keys of `timeline` within params.context_reach steps in time of an anchor (same project,
    at most params.context_window_ms apart), as with_context sees them."""
    keys, places = timeline.keys, timeline.places
    near: set[Key] = set()
    for i, key in enumerate(keys):
        if key in anchors:
            near.update(keys[j] for j in range(i - params.context_reach, i + params.context_reach + 1)
                        if j != i and _near(places, i, j, params.context_window_ms))
    return near


def _near(places: list[tuple[str, int]], i: int, j: int, window_ms: int) -> bool:
    """Whether the j-th record in time exists and is context for the i-th: same project, close in time."""
    if not 0 <= j < len(places):
        return False
    (project, epoch), (other_project, other_epoch) = places[i], places[j]
    return other_project == project and abs(other_epoch - epoch) <= window_ms


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
    lexical_z = _standardised([max(s, 0.0) for _, s in lex], max(0, lexical_depth - len(lex)))
    vector_z = _standardised([1.0 - d for _, d in vec])
    lexical_weight, vector_weight = params.lexical_weight, params.vector_weight
    if params.adaptive:
        lexical_weight, vector_weight = _peak_weights(lexical_z, vector_z, params)
    scores: dict[Key, float] = {}
    for weight, keys, zs in ((lexical_weight, [k for k, _ in lex], lexical_z),
                             (vector_weight, [k for k, _ in vec], vector_z)):
        for key, z in zip(keys, zs, strict=True):
            scores[key] = scores.get(key, 0.0) + weight * z
    return scores


def _peak_weights(lexical_z: list[float], vector_z: list[float], params: FusionParams) -> tuple[float, float]:
    """Each weight times its list's peak (its best z-score) over the mean of both peaks; an
    empty or flat list keeps its weight, so one list alone is never scaled to nothing."""
    lexical_peak, vector_peak = max(lexical_z, default=0.0), max(vector_z, default=0.0)
    if lexical_peak <= 0 or vector_peak <= 0:
        return params.lexical_weight, params.vector_weight
    mean_peak = (lexical_peak + vector_peak) / 2
    return params.lexical_weight * lexical_peak / mean_peak, params.vector_weight * vector_peak / mean_peak
