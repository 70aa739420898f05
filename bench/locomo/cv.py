"""Leave-one-conversation-out cross-validation of hybrid retrieval on the LoCoMo dev split.

Every parameter (fusion method weights, temporal context, adaptive weights, the named-date
bonus, the penalty of records that ask, the relevance floor) is chosen on four conversations
and scored on the fifth; the cross-validated (CV) figure is the held-out questions of the five
folds pooled. The in-sample figure (parameters chosen on all five) is printed next to it: the
gap between the two is how much tuning fitted the dev split.

The relevance floor is calibrated from questions asked in the wrong project (conversation i's
questions in conversation i+1's project, where nothing is relevant): `gate` makes at least
NOTHING_FOUND_TARGET of them find nothing, and `keep` keeps KEEP_SHARE of the evidence records
the ranking puts in the first ten. Works on candidate lists gathered once from the
real stack (bench/locomo/run.py), so the grid costs no RPC.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from search_svc.fusion import (
    EVIDENCE_WEIGHT,
    Fused,
    FusionParams,
    RelevanceFloor,
    above_floor,
    fuse,
    relevance,
    with_context,
    with_evidence,
    with_period_bonus,
    with_question_penalty,
    with_specificity,
)
from search_svc.periods import Period
from store_svc import terms
from store_svc.convert import asks

# Share of wrong-project questions the gate must leave with nothing. Held-out conversations
# come out 1-2 points under the share the gate is calibrated for (CV), so 0.93 is what keeps
# conversations never tuned on at the 0.90 goal.
NOTHING_FOUND_TARGET = 0.93
# The same for the wrong-project questions none of whose words the other conversation holds (no
# lexical candidate): their own gate (RelevanceFloor.wordless_gate) keeps 97% of them empty, since
# words found nowhere in a memory must find nothing 0.95 of the time or more (issue 32).
WORDLESS_TARGET = 0.97
WORDLESS_MIN_CASES = 20  # fewer such questions than this: they share the gate
KEEP_SHARE = 0.99  # share of the ranked evidence (first ten) the keep level must let through
# The floor's bm25 term: 0 only. A record's raw bm25 depends on how it was saved (save_memory's title
# at weight 8), which the dev split's narrative-only records never show; the folds chose 0.01 here
# while the SaveMemory path lost 0.03 of "nothing found" to it (search_svc.fusion, _MINILM_FLOOR).
BM25_WEIGHTS = (0.0,)
PERIOD_BONUSES = (0.0, 2.0, 4.0, 8.0)
QUESTION_PENALTIES = (0.0, 1.0, 1.5, 2.0)
SPECIFICITY_WEIGHTS = (0.0, 0.25, 0.35, 0.5)
LEXICAL_DEPTH = 100

Lists = tuple[list[tuple[str, float]], list[tuple[str, float]]]  # (lexical (dia, bm25), vector (dia, distance))
QKey = tuple[str, int]


@dataclass(frozen=True)
class Case:
    """One question: its key, project, category, evidence, and its candidate lists in its own
    project and in another conversation's project."""

    key: QKey
    project: str
    category: int
    evidence: frozenset[str]
    own: Lists
    cross: Lists
    cross_project: str
    periods: tuple[Period, ...] = ()  # the dates the question names (search_svc.periods)
    own_evidence: Mapping[str, float] = field(default_factory=dict)  # dia -> IndexRow.evidence, own project
    cross_evidence: Mapping[str, float] = field(default_factory=dict)  # the same in the wrong project


@dataclass(frozen=True)
class TurnFacts:
    """What the store tells search_svc about each turn (by project, then dia id): whether it asks
    (IndexRow.asks) and how specific its words are (IndexRow.specificity)."""

    asking: Mapping[str, frozenset[str]] = field(default_factory=dict)
    specificity: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


NO_FACTS = TurnFacts()


def turn_facts(items: Iterable[tuple[str, str, str]]) -> TurnFacts:
    """(project, dia id, text) of each turn -> what the store says of it, computed as the store does
    for a store holding exactly these turns: whether it asks (store_svc.convert.asks) and its
    specificity (store_svc.terms, word counts over every turn), for bench/locomo/cv.py."""
    items = list(items)
    words = {(project, dia): terms.terms(text) for project, dia, text in items}
    docs = Counter(w for ws in words.values() for w in ws)
    values = terms.specificities(words, docs, len(items))
    asking: dict[str, set[str]] = {}
    specificity: dict[str, dict[str, float]] = {}
    for project, dia, text in items:
        specificity.setdefault(project, {})[dia] = values[(project, dia)]
        if asks(text):
            asking.setdefault(project, set()).add(dia)
    return TurnFacts({project: frozenset(dias) for project, dias in asking.items()}, specificity)


def fusion_grid() -> list[FusionParams]:
    grid = [FusionParams("zscore", 0, 1.0, w, c, adaptive=a)
            for w in (0.5, 0.7, 0.9, 1.2) for c in (0.0, 0.3, 0.5, 0.8) for a in (False, True)]
    grid += [FusionParams("zscore", 0, 1.0, w, c, context_reach=2, period_bonus=b, question_penalty=q,
                          specificity_weight=s)
             for w in (0.7, 0.9) for c in (0.3, 0.5, 0.8) for b in PERIOD_BONUSES for q in QUESTION_PENALTIES
             for s in SPECIFICITY_WEIGHTS]
    grid += [FusionParams("rrf", k, 1.0, w, c) for k in (5, 60) for w in (0.7, 1.0) for c in (0.0, 0.3)]
    # The product's gain for a record holding every word of the query, not tuned here (known items chose it).
    return [replace(params, evidence_weight=EVIDENCE_WEIGHT) for params in grid]


def rank(lists: Lists, project: str, epoch: Callable[[str, str], int], params: FusionParams,
         periods: Sequence[Period] = (), facts: TurnFacts = NO_FACTS,
         evidence: Mapping[str, float] | None = None) -> list[Fused]:
    """What search_svc.retrieval does with the two lists: fusion, temporal context, named dates,
    the penalty of the records that ask, the gain of specific ones (`facts`) and of those holding
    every word of the question (`evidence`: dia -> IndexRow.evidence)."""
    fused = fuse(lists[0], lists[1], params, lexical_depth=LEXICAL_DEPTH)
    placement = placement_of(fused, project, epoch)
    fused = with_period_bonus(with_context(fused, placement, params), placement, periods, params)
    fused = with_question_penalty(fused, facts.asking.get(project, frozenset()), params)
    fused = with_specificity(fused, facts.specificity.get(project, {}), params)
    return with_evidence(fused, evidence or {}, params)


def placement_of(fused: Sequence[Fused], project: str, epoch: Callable[[str, str], int]) -> dict[str, tuple[str, int]]:
    """Where each candidate sits in time (search_svc.retrieval's placement: project, epoch)."""
    return {str(f.key): (project, epoch(project, str(f.key))) for f in fused}


def dias(fused: Sequence[Fused]) -> list[str]:
    return [str(f.key) for f in fused]


def first_hit(ranked: Sequence[str], evidence: frozenset[str], depth: int = 10) -> int | None:
    return next((i for i, dia in enumerate(ranked[:depth]) if dia in evidence), None)


def recall_at(cases: Sequence[Case], ranked: dict[QKey, list[str]], k: int = 5) -> float:
    hits = sum(1 for c in cases if (i := first_hit(ranked[c.key], c.evidence)) is not None and i < k)
    return hits / len(cases) if cases else 0.0


def calibrate_floor(cases: Sequence[Case], own: dict[QKey, list[Fused]], cross: dict[QKey, list[Fused]],
                    bm25_weight: float) -> RelevanceFloor:
    """gate: the NOTHING_FOUND_TARGET quantile of the best relevance of wrong-project questions;
    wordless_gate: the WORDLESS_TARGET quantile of those among them with no lexical candidate;
    keep: the (1 - KEEP_SHARE) quantile of the relevance of evidence ranked in the first ten."""
    probe = RelevanceFloor(gate=0.0, keep=0.0, bm25_weight=bm25_weight)
    tops = [max(relevance(cross[c.key], probe), default=0.0) for c in cases]
    gate = float(np.quantile(tops, NOTHING_FOUND_TARGET)) + 1e-9
    wordless = [top for c, top in zip(cases, tops, strict=True) if not c.cross[0]]
    wordless_gate = (float(np.quantile(wordless, WORDLESS_TARGET)) + 1e-9
                     if len(wordless) >= WORDLESS_MIN_CASES else None)
    found = []
    for c in cases:
        values = relevance(own[c.key], probe)
        found += [v for f, v in zip(own[c.key][:10], values[:10], strict=False) if f.key in c.evidence]
    keep = float(np.quantile(found, 1 - KEEP_SHARE)) if found else gate
    return RelevanceFloor(gate=gate, keep=min(keep, gate), bm25_weight=bm25_weight, wordless_gate=wordless_gate)


@dataclass
class Fold:
    held_out: str
    params: FusionParams
    floor: RelevanceFloor


@dataclass
class CVResult:
    folds: list[Fold]
    in_sample: Fold
    ranked_in_sample: dict[QKey, list[str]]  # best in-sample parameters, no floor
    ranked_cv: dict[QKey, list[str]]  # each question ranked with its fold's parameters, no floor
    floored_in_sample: dict[QKey, list[str]]
    floored_cv: dict[QKey, list[str]]
    nothing_found_in_sample: float  # share of wrong-project questions answered with no result
    nothing_found_cv: float


class CrossValidation:
    def __init__(self, cases: Sequence[Case], epoch: Callable[[str, str], int], facts: TurnFacts = NO_FACTS):
        """`facts`: what the store says about each turn (turn_facts)."""
        self.cases = [c for c in cases if c.category in (1, 2, 3, 4)]
        self.epoch = epoch
        self.facts = facts
        self.grid = fusion_grid()
        self._own: dict[FusionParams, dict[QKey, list[Fused]]] = {}
        self._cross: dict[FusionParams, dict[QKey, list[Fused]]] = {}

    def own(self, params: FusionParams) -> dict[QKey, list[Fused]]:
        if params not in self._own:
            self._own[params] = {c.key: rank(c.own, c.project, self.epoch, params, c.periods, self.facts,
                                             c.own_evidence)
                                 for c in self.cases}
        return self._own[params]

    def cross(self, params: FusionParams) -> dict[QKey, list[Fused]]:
        if params not in self._cross:
            self._cross[params] = {c.key: rank(c.cross, c.cross_project, self.epoch, params, c.periods, self.facts,
                                               c.cross_evidence)
                                   for c in self.cases}
        return self._cross[params]

    def choose(self, train: Sequence[Case]) -> tuple[FusionParams, RelevanceFloor]:
        """The fusion parameters with the best recall@5 on `train`, then the floor (its bm25
        weight chosen by recall@5 with the floor applied) calibrated on `train`."""
        def keys_of(ranked: dict[QKey, list[Fused]]) -> dict[QKey, list[str]]:
            return {c.key: dias(ranked[c.key]) for c in train}

        params = max(self.grid, key=lambda p: recall_at(train, keys_of(self.own(p))))
        own, cross = self.own(params), self.cross(params)
        floors = [calibrate_floor(train, own, cross, w) for w in BM25_WEIGHTS]
        floor = max(floors, key=lambda f: recall_at(train, self.floored(train, params, f)))
        return params, floor

    def floored(self, cases: Sequence[Case], params: FusionParams, floor: RelevanceFloor) -> dict[QKey, list[str]]:
        """Each case's ranking under `params`, cut to its matches by `floor` (as search_svc does)."""
        own = self.own(params)
        return {c.key: dias(above_floor(own[c.key], floor, placement=placement_of(own[c.key], c.project, self.epoch),
                                        params=params, evidence=c.own_evidence)) for c in cases}

    def _nothing_found(self, cases: Sequence[Case], params: FusionParams, floor: RelevanceFloor) -> int:
        cross = self.cross(params)
        return sum(1 for c in cases if not above_floor(cross[c.key], floor, evidence=c.cross_evidence))

    def run(self) -> CVResult:
        projects = sorted({c.project for c in self.cases})
        params, floor = self.choose(self.cases)
        in_sample = Fold("", params, floor)
        ranked_in = {c.key: dias(self.own(params)[c.key]) for c in self.cases}
        floored_in = self.floored(self.cases, params, floor)
        empty_in = self._nothing_found(self.cases, params, floor)
        folds, ranked_cv, floored_cv, empty_cv = [], {}, {}, 0
        for held in projects:
            train = [c for c in self.cases if c.project != held]
            test = [c for c in self.cases if c.project == held]
            params, floor = self.choose(train)
            folds.append(Fold(held, params, floor))
            ranked_cv.update({c.key: dias(self.own(params)[c.key]) for c in test})
            floored_cv.update(self.floored(test, params, floor))
            empty_cv += self._nothing_found(test, params, floor)
        n = len(self.cases) or 1
        return CVResult(folds, in_sample, ranked_in, ranked_cv, floored_in, floored_cv, empty_in / n, empty_cv / n)


def describe(params: FusionParams) -> str:
    if params.method == "rrf":
        return f"rrf k={params.k:g} w_vec={params.vector_weight:g} ctx={params.context_weight:g}"
    return (f"zscore w_vec={params.vector_weight:g} ctx={params.context_weight:g}"
            + (f" reach={params.context_reach}" if params.context_reach > 1 else "")
            + (" adaptive" if params.adaptive else "")
            + (f" dates={params.period_bonus:g}" if params.period_bonus else "")
            + (f" asks=-{params.question_penalty:g}" if params.question_penalty else "")
            + (f" specific={params.specificity_weight:g}" if params.specificity_weight else ""))


def describe_floor(floor: RelevanceFloor) -> str:
    wordless = f" wordless_gate={floor.wordless_gate:.3f}" if floor.wordless_gate is not None else ""
    return f"gate={floor.gate:.3f}{wordless} keep={floor.keep:.3f} bm25_weight={floor.bm25_weight:g}"
