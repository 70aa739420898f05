"""Vector-side levers on LoCoMo, measured offline by leave-one-conversation-out CV.

The vector leg is rebuilt in memory: every turn embedded whole (as vector_svc indexes it; the
baseline reproduces the stack's lists), plus, for the `sentences` levers, each sentence of a
turn embedded on its own with the turn's first N words in front of it (a lone sentence loses
who and what it is about; the opening words carry that). A turn's similarity is then its best
document's, as vector_svc ranks a record by its closest chunk. The lexical lists are the
store's, gathered by bench/locomo/lists.py; fusion, floor and CV are bench/locomo/cv.py's,
through bench/locomo/lexical.py's evaluation (each lever's own setting chosen inside each fold).

    .venv/bin/python -m bench.locomo.lists                      # once: the store's lists
    .venv/bin/python -m bench.locomo.vector                     # every lever, small fusion grid
    .venv/bin/python -m bench.locomo.vector --levers sentences --full-grid

Levers: base (whole turns), sentences (one fixed number of opening words per row, then the
number chosen per fold), bare-sentences (sentences without the opening words), content-query
(the query's content words embedded instead of the question, and the two averaged).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.locomo import lexical as locomo_lexical
from bench.locomo import lists as locomo_lists
from bench.locomo import run as locomo
from bench.locomo.cv import Case
from mnemo.config import Settings
from mnemo.query import STOP_WORDS
from search_svc.periods import named_periods
from vector_svc.embedders import Embedder, make_embedder

LEVERS = ("base", "sentences", "bare-sentences", "content-query")
OPENING_WORDS = (3, 4, 5, 6, 8)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[\w'’-]+")


def sentences(text: str, opening_words: int) -> list[str]:
    """The sentences of a text of two or more: the first as it is (it starts with the opening
    words), each later one after the text's first `opening_words` words (0: bare)."""
    parts = [p.strip() for p in _SENTENCE_END.split(text) if p.strip()]
    if len(parts) < 2:
        return []  # the whole text is already a document
    lead = " ".join(text.split()[:opening_words])
    return parts[:1] + [f"{lead} ... {p}" if lead else p for p in parts[1:]]


def content_words(text: str) -> str:
    return " ".join(w for w in _WORD.findall(text) if w.lower() not in STOP_WORDS)


class VectorLists:
    """Similarities of every turn to a query, over whole turns or whole turns and their sentences."""

    def __init__(self, embedder: Embedder, docs: Sequence[locomo_lexical.Doc]):
        self.embedder = embedder
        self.docs = docs
        self.projects = np.array([d.project for d in docs])
        self.whole = embedder.embed([d.text for d in docs])
        self.parts: dict[int | None, tuple[np.ndarray, np.ndarray]] = {}

    def add_sentences(self, opening_words: int) -> int:
        texts, owner = [], []
        for i, doc in enumerate(self.docs):
            for sentence in sentences(doc.text, opening_words):
                texts.append(sentence)
                owner.append(i)
        self.parts[opening_words] = (self.embedder.embed(texts), np.array(owner))
        return len(texts)

    def ranked(self, query: np.ndarray, project: str, opening_words: int | None,
               depth: int = locomo_lexical.DEPTH) -> list[tuple[str, float]]:
        similarity = self.whole @ query
        if opening_words is not None:
            vectors, owner = self.parts[opening_words]
            np.maximum.at(similarity, owner, vectors @ query)  # a turn counts its best document
        rows = np.where(self.projects == project)[0]
        top = rows[np.argsort(-similarity[rows], kind="stable")[:depth]]
        return [(self.docs[i].dia, float(1.0 - similarity[i])) for i in top]


def build_cases(qs: Sequence[locomo.Question], lists: dict, vectors: VectorLists,
                query_vector: Callable[[str], np.ndarray], opening_words: int | None) -> list[Case]:
    cases = []
    for q in qs:
        key = (q.sample_id, q.index)
        own, cross, other = lists[key]
        vector = query_vector(q.text)
        cases.append(Case(key, q.sample_id, q.category, frozenset(q.evidence),
                          (own[0], vectors.ranked(vector, q.sample_id, opening_words)),
                          (cross[0], vectors.ranked(vector, other, opening_words)), other,
                          tuple(named_periods(q.text))))
    return cases


def vector_recall(cases: Sequence[Case], k: int = 5) -> float:
    return sum(1 for c in cases if {d for d, _ in c.own[1][:k]} & c.evidence) / len(cases)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cache", type=Path, default=locomo_lists.DEFAULT_CACHE)
    parser.add_argument("--levers", default=",".join(LEVERS), help=f"comma list of {', '.join(LEVERS)}")
    parser.add_argument("--full-grid", action="store_true", help="bench/locomo/cv.py's whole fusion grid")
    parser.add_argument("--embedder", default=Settings.embedder)
    args = parser.parse_args(argv)
    if not (locomo.DATA_DIR / "locomo-dev.json").is_file() or not args.cache.is_file():
        print(f"skipped: {locomo.DATA_DIR} or {args.cache} is absent (run bench/locomo/lists.py first)")
        return 0
    lists = locomo_lists.load(args.cache)["lists"]
    docs, qs, _ = locomo_lexical.load_docs()
    qs = [q for q in qs if (q.sample_id, q.index) in lists]
    epochs = {(d.project, d.dia): d.epoch for d in docs}
    grid = None if args.full_grid else locomo_lexical.SMALL_GRID
    levers = args.levers.split(",")
    started = time.monotonic()
    embedder = make_embedder(args.embedder)
    vectors = VectorLists(embedder, docs)
    questions = {q.text: embedder.embed([q.text])[0] for q in qs}
    print(f"{len(docs)} turns, {len(questions)} questions embedded in {time.monotonic() - started:.0f}s", flush=True)

    def epoch(project: str, dia: str) -> int:
        return epochs.get((project, dia), 0)

    rows: list[tuple[float, locomo_lexical.Outcome]] = []
    facts = locomo_lexical.facts_of(docs)

    def run(name: str, variants: dict[object, list[Case]]) -> None:
        outcome = locomo_lexical.evaluate(name, variants, epoch, grid, facts=facts)
        rows.append((vector_recall(next(iter(variants.values()))), outcome))
        print(f"  {name}: {time.monotonic() - started:.0f}s", flush=True)

    def cases(opening_words: int | None,
              query_vector: Callable[[str], np.ndarray] = questions.__getitem__) -> list[Case]:
        return build_cases(qs, lists, vectors, query_vector, opening_words)

    if "base" in levers:
        run("whole turns", {None: cases(None)})
    if "bare-sentences" in levers:
        vectors.add_sentences(0)
        run("+ bare sentences", {0: cases(0)})
    if "sentences" in levers:
        per_setting = {}
        for n in OPENING_WORDS:
            count = vectors.add_sentences(n)
            per_setting[n] = cases(n)
            run(f"+ sentences after {n} opening words ({count})", {n: per_setting[n]})
        run("+ sentences, opening words per fold", per_setting)
    if "content-query" in levers:
        content = {text: embedder.embed([content_words(text)])[0] for text in questions}
        averaged = {text: _unit(questions[text] + content[text]) for text in questions}
        run("query: content words", {None: cases(None, content.__getitem__)})
        run("query: question and content words", {None: cases(None, averaged.__getitem__)})
    locomo_lexical.print_outcomes("vecR@5", rows, width=48)
    return 0


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / max(float(np.linalg.norm(vector)), 1e-12)


if __name__ == "__main__":
    sys.exit(main())
