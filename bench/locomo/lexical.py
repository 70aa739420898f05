"""Lexical-side levers on LoCoMo, measured offline by leave-one-conversation-out CV.

The lexical leg is rebuilt in a scratch SQLite FTS5 index (the store's tokenizer, 'porter
unicode61', and the store's query builder, mnemo.query), all five conversations in one index
as in bench/locomo/run.py (bm25 statistics over the whole index, project filter afterwards).
The vector lists come from the real stack, gathered once by bench/locomo/lists.py. Each
variant's lexical lists are fused with the same vector lists by bench/locomo/cv.py; the
variant's own parameter is chosen inside each fold, with the fusion parameters and floor.

    .venv/bin/python -m bench.locomo.lists           # once: the vector lists
    .venv/bin/python -m bench.locomo.lexical         # every lever below
    .venv/bin/python -m bench.locomo.lexical --levers base,context

Levers: base (the store's query, checked against the store's own lists), context (a second,
low-weight FTS5 column holding the neighbouring turns of the same session), prf (RM3-like
pseudo-relevance feedback), stop (more question words dropped), dated-list (the store also
asked for the query's matches written on a date the question names), pairs (rows holding
adjacent query words near each other gain their bm25). Every lever's fusion grid
includes the named-date bonus (search_svc.periods) on and off.
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.locomo import cv as locomo_cv
from bench.locomo import lists as locomo_lists
from bench.locomo import run as locomo
from bench.locomo.cv import NO_FACTS, Case, CrossValidation, QKey, TurnFacts
from mnemo.query import STOP_WORDS, parse, to_fts5
from search_svc.fusion import FusionParams
from search_svc.periods import named_periods

DEPTH = 100
LexList = list[tuple[str, float]]


@dataclass
class Doc:
    project: str
    dia: str
    session: int
    text: str
    epoch: int


class Index:
    """A scratch FTS5 index of every turn: column `body` (the turn) and `ctx` (its neighbours)."""

    def __init__(self, docs: list[Doc], before: int = 0, after: int = 0):
        self.docs = docs
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, ctx, tokenize='porter unicode61')")
        self.db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'row')")
        rows = []
        for i, d in enumerate(docs):
            near = [docs[j].text for j in range(i - before, i + after + 1) if j != i and 0 <= j < len(docs)
                    and docs[j].project == d.project and docs[j].session == d.session]
            rows.append((i + 1, d.text, " ".join(near)))
        self.db.executemany("INSERT INTO t(rowid, body, ctx) VALUES (?, ?, ?)", rows)
        self.n = len(docs)
        self.df = {term: doc for term, doc in self.db.execute("SELECT term, doc FROM v")}

    def search(self, expression: str | None, project: str, weights: tuple[float, float],
               depth: int = DEPTH) -> LexList:
        if not expression:
            return []
        rows = self.db.execute(f"SELECT rowid, -bm25(t, {weights[0]}, {weights[1]}) AS s FROM t WHERE t MATCH ? "
                               "ORDER BY s DESC, rowid DESC", (expression,)).fetchall()
        out = []
        for rowid, score in rows:
            doc = self.docs[rowid - 1]
            if doc.project == project and score > 0:
                out.append((doc.dia, score))
                if len(out) >= depth:
                    break
        return out

    def stems(self, text: str) -> list[str]:
        """The index's own tokens of `text` (porter stems), through a throwaway FTS5 row."""
        return _tokenize(self.db, text)


def _tokenize(db: sqlite3.Connection, text: str) -> list[str]:
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS tok USING fts5(x, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS tokv USING fts5vocab(tok, 'instance')")
    db.execute("DELETE FROM tok")
    db.execute("INSERT INTO tok(rowid, x) VALUES (1, ?)", (text,))
    return [term for (term,) in db.execute("SELECT term FROM tokv ORDER BY offset")]


def load_docs() -> tuple[list[Doc], list[locomo.Question], list[str]]:
    dev = locomo.load_dev()
    corrections, _ = locomo.audit_corrections(dev)
    docs, qs = [], []
    for conv in dev:
        sid = conv["sample_id"]
        docs += [Doc(sid, t.dia_id, t.session, t.text, t.epoch) for t in locomo.turns(conv)]
        qs += [q for q in locomo.questions(conv, corrections) if q.category in (1, 2, 3, 4)]
    return docs, qs, [c["sample_id"] for c in dev]


def facts_of(docs: Sequence[Doc]) -> TurnFacts:
    """What the store says of each turn (bench/locomo/cv.py, turn_facts)."""
    return locomo_cv.turn_facts((d.project, d.dia, d.text) for d in docs)


def quoted(words: Sequence[str]) -> str | None:
    """An OR of quoted words (the form mnemo.query builds; the words come from the index)."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words) or None


# -- levers: each maps (index, question text, project, setting) -> lexical list ---------------
def base_list(index: Index, text: str, project: str, setting: float) -> LexList:
    return index.search(to_fts5(parse(text)), project, (1.0, 0.0))


def context_list(index: Index, text: str, project: str, setting: float) -> LexList:
    return index.search(to_fts5(parse(text)), project, (1.0, setting))


def own_context_list(index: Index, text: str, project: str, setting: float, depth: int = DEPTH) -> LexList:
    """The product's form: the rows matching in their own text, scored with their context column too."""
    expression = to_fts5(parse(text))
    if not expression:
        return []
    own = {d for d, _ in index.search("{body} : (" + expression + ")", project, (1.0, 0.0), 1 << 30)}
    return [(d, s) for d, s in index.search(expression, project, (1.0, setting), 1 << 30) if d in own][:depth]


def pairs_list(index: Index, text: str, project: str, setting: tuple[int, float]) -> LexList:
    """Proximity: the shipped list (own matches, 3 earlier records as context at 0.3), plus w x
    the bm25 of the rows holding adjacent content words of the query within `near` tokens of
    each other (0: as a phrase)."""
    near, weight = setting
    base = own_context_list(index, text, project, 0.3)
    words = [t.words[0] for t in parse(text).terms if len(t.words) == 1]
    pairs = [(a, b) for a, b in zip(words, words[1:], strict=False) if a.lower() != b.lower()]
    if not weight or not pairs:
        return base
    if near:
        expression = " OR ".join(f"NEAR({quoted([a])} {quoted([b])}, {near})" for a, b in pairs)
    else:
        expression = " OR ".join(quoted([f"{a} {b}"]) or "" for a, b in pairs)
    merged = dict(base)
    for dia, score in index.search("{body} : (" + expression + ")", project, (1.0, 0.0), 1 << 30):
        merged[dia] = merged.get(dia, 0.0) + weight * score
    return sorted(merged.items(), key=lambda kv: -kv[1])[:DEPTH]


_EXTRA_STOP_TEXT = ("kind type many much likely would might describe recently like say said way sort thing things "
                    "one ones")
EXTRA_STOP = frozenset(_EXTRA_STOP_TEXT.split())


def stop_list(index: Index, text: str, project: str, setting: float) -> LexList:
    parsed = parse(text)
    words = [t.words[0] for t in parsed.terms if len(t.words) == 1 and (not setting or t.words[0].lower()
                                                                       not in EXTRA_STOP)]
    return index.search(quoted(words) if words else to_fts5(parsed), project, (1.0, 0.0))


def prf_list(index: Index, text: str, project: str, setting: tuple) -> LexList:
    """RM3-like: the first k hits' terms weighted by P(t|d) x the hit's normalised score, the top m
    (not stop-words, not already asked) searched on their own and blended in with weight w."""
    k, m, w = setting
    first = base_list(index, text, project, 0.0)
    if not first or w == 0:
        return first
    asked = set(index.stems(" ".join(t.words[0] for t in parse(text).terms)))
    top = first[:k]
    total = sum(s for _, s in top)
    weights: Counter[str] = Counter()
    for dia, score in top:
        tokens = [t for t in index.stems(_text_of(index, project, dia)) if t not in asked and t not in STOP_STEMS
                  and not t.isdigit() and len(t) > 2]
        for term, count in Counter(tokens).items():
            idf = math.log(index.n / index.df.get(term, 1))
            weights[term] += (count / len(tokens)) * (score / total) * idf
    expansion = [t for t, _ in weights.most_common(m)]
    second = dict(index.search(quoted(expansion), project, (1.0, 0.0))) if expansion else {}
    merged = dict(first)
    for dia, s in second.items():
        merged[dia] = merged.get(dia, 0.0) + w * s
    return sorted(merged.items(), key=lambda kv: -kv[1])[:DEPTH]


STOP_STEMS: frozenset[str] = frozenset()
_TEXTS: dict[tuple[str, str], str] = {}


def _text_of(index: Index, project: str, dia: str) -> str:
    if not _TEXTS:
        _TEXTS.update({(d.project, d.dia): d.text for d in index.docs})
    return _TEXTS[(project, dia)]


# -- cross-validation over a lever's settings ----------------------------------------------
SMALL_GRID = [FusionParams("zscore", 0, 1.0, w, c, context_reach=2, period_bonus=b, question_penalty=q,
                          specificity_weight=s)
              for w in (0.5, 0.7, 0.9) for c in (0.3, 0.5, 0.8) for b in (0.0, 4.0) for q in (0.0, 1.5)
              for s in (0.0, 0.35)]


@dataclass
class Outcome:
    name: str
    in_sample: float
    cv: float
    cv_floor: float
    r1_cv: float
    mrr_cv: float
    nothing_cv: float
    lexical_r5: float
    chosen: list


def evaluate(name: str, variants: dict[object, list[Case]], epoch: Callable[[str, str], int],
             grid: list[FusionParams] | None, make_cv: Callable | None = None,
             facts: TurnFacts = NO_FACTS) -> Outcome:
    """For each fold: the setting, fusion parameters and floor with the best floored recall@5 on
    the other four conversations; the held-out questions scored with them, pooled."""
    cvs = {}
    for setting, cases in variants.items():
        cv = make_cv(setting, cases) if make_cv else CrossValidation(cases, epoch, facts)
        if grid is not None:
            cv.grid = grid
        cvs[setting] = cv
    any_cases = next(iter(cvs.values())).cases
    projects = sorted({c.project for c in any_cases})

    def pick(train_filter: Callable[[Case], bool]):
        best = None
        for setting, cv in cvs.items():
            train = [c for c in cv.cases if train_filter(c)]
            params, floor = cv.choose(train)
            score = locomo_cv.recall_at(train, cv.floored(train, params, floor))
            if best is None or score > best[0]:
                best = (score, setting, params, floor)
        return best

    _, s_in, p_in, f_in = pick(lambda c: True)
    cv_in = cvs[s_in]
    in_sample = locomo_cv.recall_at(cv_in.cases, cv_in.floored(cv_in.cases, p_in, f_in))
    ranked, floored, empty, chosen = {}, {}, 0, []
    for held in projects:
        _, setting, params, floor = pick(lambda c, h=held: c.project != h)
        cv = cvs[setting]
        chosen.append(setting)
        test = [c for c in cv.cases if c.project == held]
        ranked.update({c.key: locomo_cv.dias(cv.own(params)[c.key]) for c in test})
        floored.update(cv.floored(test, params, floor))
        empty += cv._nothing_found(test, params, floor)
    n = len(any_cases)
    lex = {c.key: [d for d, _ in c.own[0]] for c in cvs[s_in].cases}
    return Outcome(name, in_sample, locomo_cv.recall_at(any_cases, ranked), locomo_cv.recall_at(any_cases, floored),
                   locomo_cv.recall_at(any_cases, floored, 1), _mrr(any_cases, floored), empty / n,
                   locomo_cv.recall_at(cvs[s_in].cases, lex), chosen)


def _mrr(cases: Sequence[Case], ranked: dict[QKey, list[str]]) -> float:
    total = 0.0
    for c in cases:
        i = locomo_cv.first_hit(ranked[c.key], c.evidence)
        total += 1.0 / (i + 1) if i is not None else 0.0
    return total / len(cases)


def build_cases(qs, lists, lexical: Callable[[str, str], LexList]) -> list[Case]:
    cases = []
    for q in qs:
        key = (q.sample_id, q.index)
        own, cross, other = lists[key]
        cases.append(Case(key, q.sample_id, q.category, frozenset(q.evidence), (lexical(q.text, q.sample_id), own[1]),
                          (lexical(q.text, other), cross[1]), other, tuple(named_periods(q.text))))
    return cases


def neighbour_lexical(lex: LexList, vec: LexList, project: str, epoch: Callable[[str, str], int], weight: float,
                      reach: int = 2, window_ms: int = 600_000) -> LexList:
    """Fusion-time lexical context: every candidate (either list) gains weight x the bm25 of its
    time-neighbours among the candidates (the n-th on each side counts 1/n), before fusion."""
    if not weight:
        return lex
    bm25 = dict(lex)
    keys = sorted({k for k, _ in lex} | {k for k, _ in vec}, key=lambda k: (epoch(project, k), k))
    out = {}
    for i, key in enumerate(keys):
        gained = 0.0
        for j in range(max(0, i - reach), min(len(keys), i + reach + 1)):
            if j != i and abs(epoch(project, keys[j]) - epoch(project, key)) <= window_ms:
                gained += bm25.get(keys[j], 0.0) / abs(j - i)
        score = bm25.get(key, 0.0) + weight * gained
        if score > 0:
            out[key] = score
    return sorted(out.items(), key=lambda kv: -kv[1])


class NeighbourCV(CrossValidation):
    def __init__(self, cases, epoch, weight: float, facts: TurnFacts):
        super().__init__([replace_lists(c, epoch, weight) for c in cases], epoch, facts)


def replace_lists(c: Case, epoch, weight: float) -> Case:
    from dataclasses import replace

    own = (neighbour_lexical(c.own[0], c.own[1], c.project, epoch, weight), c.own[1])
    cross = (neighbour_lexical(c.cross[0], c.cross[1], c.cross_project, epoch, weight), c.cross[1])
    return replace(c, own=own, cross=cross)


def dated_list(index: Index, text: str, project: str, scoped: bool, epoch: Callable[[str, str], int]) -> LexList:
    """The product's lexical candidates: the query's matches, plus (scoped) its matches written in
    an anchored period the query names, merged by score."""
    matches = own_context_list(index, text, project, 0.3, depth=1 << 30)
    first = matches[:DEPTH]
    spans = [p.span_ms() for p in named_periods(text) if p.anchored] if scoped else []
    if not spans:
        return first
    dated = [(d, s) for d, s in matches if any(a <= epoch(project, d) < b for a, b in spans)][:DEPTH]
    merged = dict(first) | dict(dated)
    return sorted(merged.items(), key=lambda item: -item[1])


LEVERS = ("base", "context", "own-context", "own-context-nested", "neighbours", "stop", "prf", "dated-list",
          "pairs")


def register(levers: Sequence[str], run: Callable, index: Index, docs: list[Doc], qs: list, lists: dict,
             epoch: Callable[[str, str], int], facts: TurnFacts) -> None:
    """Queue each lever asked for: run(name, settings, lexical list maker, CV maker or None)."""
    def plain(text: str, project: str, s: object) -> LexList:
        return base_list(index, text, project, 0.0)

    if "base" in levers:
        run("base (store's lists)", [0], lambda text, project, s: lists_lookup(lists, qs, text, project))
        run("base (scratch index)", [0], plain)
    register_context(levers, run, docs, epoch)
    if "neighbours" in levers:
        run("neighbours' bm25 at fusion time", [0.0, 0.1, 0.2, 0.3, 0.5], plain,
            lambda s, cases: NeighbourCV(cases, epoch, s, facts))
    if "stop" in levers:
        run("extra question stop-words", [0.0, 1.0], lambda text, project, s: stop_list(index, text, project, s))
    if "prf" in levers:
        # lexical-only recall@5 fell for every k 3/5/10 x m 5/10/20 x w 0.1/0.3/0.5 (0.514-0.600, base 0.599)
        settings = [(3, 5, 0.1), (5, 20, 0.1), (3, 5, 0.3), (1, 1, 0)]
        run("RM3 feedback", settings, lambda text, project, s: prf_list(index, text, project, s))


def register_context(levers: Sequence[str], run: Callable, docs: list[Doc], epoch: Callable[[str, str], int]) -> None:
    """The levers that index each turn with its neighbours (the context column)."""
    if "context" in levers:  # every row matching in its own words or its context's
        for before, after in ((2, 2), (2, 0), (4, 0)):
            ctx_index = Index(docs, before, after)
            run(f"context column {before} before, {after} after", [0.2, 0.3, 0.5],
                lambda text, project, s, ix=ctx_index: context_list(ix, text, project, s))
    if "own-context" in levers:  # the product's form: own matches, ranked with their context
        for before in (2, 3, 4):
            ctx_index = Index(docs, before, 0)
            run(f"own matches, context of {before} before", [0.2, 0.3, 0.5],
                lambda text, project, s, ix=ctx_index: own_context_list(ix, text, project, s))
    if "own-context-nested" in levers:  # the number of earlier records chosen per fold too
        indexes = {before: Index(docs, before, 0) for before in (2, 3, 4)}
        run("own matches, context 2-4 before (nested)", [(b, w) for b in (2, 3, 4) for w in (0.2, 0.3, 0.5)],
            lambda text, project, s: own_context_list(indexes[s[0]], text, project, s[1]))
    if "pairs" in levers:  # proximity of adjacent query words, on top of the shipped context words
        ctx_index = Index(docs, 3, 0)
        for near in (0, 2, 5):
            run(f"adjacent query words, near {near}", [(near, w) for w in (0.0, 0.3, 0.6, 1.0)],
                lambda text, project, s, ix=ctx_index: pairs_list(ix, text, project, s))
    if "dated-list" in levers:  # the bonus is in every lever's grid (PERIOD_BONUSES); this adds candidates
        ctx_index = Index(docs, 3, 0)
        run("named dates: also the matches dated then", [False, True],
            lambda text, project, s: dated_list(ctx_index, text, project, bool(s), epoch))


def main(argv=None) -> int:
    global STOP_STEMS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, default=locomo_lists.DEFAULT_CACHE)
    parser.add_argument("--levers", default=",".join(LEVERS), help=f"comma list of {', '.join(LEVERS)}")
    parser.add_argument("--full-grid", action="store_true", help="bench/locomo/cv.py's whole fusion grid")
    args = parser.parse_args(argv)
    if not (locomo.DATA_DIR / "locomo-dev.json").is_file() or not args.cache.is_file():
        print(f"skipped: {locomo.DATA_DIR} or {args.cache} is absent (run bench/locomo/lists.py first)")
        return 0
    lists = locomo_lists.load(args.cache)["lists"]
    docs, qs, _ = load_docs()
    qs = [q for q in qs if (q.sample_id, q.index) in lists]
    epochs = {(d.project, d.dia): d.epoch for d in docs}
    epoch = lambda project, dia: epochs.get((project, dia), 0)  # noqa: E731
    grid = None if args.full_grid else SMALL_GRID
    index = Index(docs)
    STOP_STEMS = frozenset(index.stems(" ".join(sorted(STOP_WORDS))))
    outcomes = []
    facts = facts_of(docs)

    def run(name: str, settings: Sequence, make: Callable, make_cv: Callable | None = None) -> None:
        started = time.monotonic()
        variants = {s: build_cases(qs, lists, lambda text, project, s=s: make(text, project, s)) for s in settings}
        outcomes.append(evaluate(name, variants, epoch, grid, make_cv, facts))
        print(f"  {name}: {time.monotonic() - started:.0f}s", flush=True)

    register(args.levers.split(","), run, index, docs, qs, lists, epoch, facts)
    print_outcomes("lexR@5", [(o.lexical_r5, o) for o in outcomes], width=40)
    return 0


def print_outcomes(leg: str, rows: Sequence[tuple[float, Outcome]], width: int) -> None:
    """The levers' table: each row's one-leg recall@5 (column `leg`), then the CV figures."""
    columns = (leg, "in+fl", "CV", "CV+fl", "R@1", "MRR", "none")
    print(f"\n{'lever':<{width}} " + " ".join(f"{c:>6}" for c in columns) + "  chosen")
    for leg_r5, o in rows:
        print(f"{o.name:<{width}} {leg_r5:6.3f} {o.in_sample:6.3f} {o.cv:6.3f} {o.cv_floor:6.3f} {o.r1_cv:6.3f} "
              f"{o.mrr_cv:6.3f} {o.nothing_cv:6.3f}  {o.chosen}")
    print(f"load average (1, 5, 15 min): {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


def lists_lookup(lists: dict, qs: list, text: str, project: str) -> LexList:
    """The store's own lexical list of the question asked in `project` (own or cross)."""
    for q in qs:
        if q.text == text:
            own, cross, other = lists[(q.sample_id, q.index)]
            if project == q.sample_id:
                return own[0]
            if project == other:
                return cross[0]
    return []


if __name__ == "__main__":
    sys.exit(main())
