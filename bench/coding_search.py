"""Search over a coding memory: what answers a keyword, what a paraphrase finds, what nonsense finds.

The memory: bench/peer/corpus.py's 10k coding corpus (observations "<Verb> <subject> in <place>",
one prompt and one summary per session), written into a claude-mem database from its published
schema and brought in with `mnemo import`, as bench/peer/run.py does, then embedded. Asked through
SearchService.Search (what the MCP `search` and `mem_search` tools answer), 20 rows per query:

- keyword queries (the corpus's 40, one to four words of its titles): the kinds in the first 20
  (observations, summaries, prompts). What answers should come before the prompts that merely
  asked about it (issue 32: mnemo averaged 3.3 observations and 10.3 prompts there).
- paraphrases (the corpus's 30, no word shared with it, each labelled by the "<subject> in <place>"
  of the titles it means): recall@20 (relevant rows found / min(relevant, 20)) and hit@10 (a relevant
  row in the first 10). claude-mem's hybrid search (Chroma on), issue 32: recall@20 0.284, hit@10 8/30.
  The same for the vector leg alone (VectorService.Query, then Hydrate: no fusion, no floor), the
  most a gate on its similarities could let through.
- nonsense ("banana smoothie recipe" and the like, words of no coding memory): nothing found.

    .venv/bin/python -m bench.coding_search [--observations 10000] [--embedder minilm-int8]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.harness import REPO, Stack, print_load_average, print_table, subprocess_env
from bench.peer.corpus import generate_corpus, make_queries, paraphrase_queries
from mnemo.v1 import common_pb2, search_pb2, store_pb2, vector_pb2

TOP = 20
HIT_DEPTH = 10
NONSENSE = [
    "banana smoothie recipe",
    "knitting patterns for winter scarves",
    "best beaches in portugal",
    "sourdough starter feeding schedule",
    "medieval castle architecture",
]
KINDS = {
    common_pb2.DOC_KIND_OBSERVATION: "observations",
    common_pb2.DOC_KIND_SUMMARY: "summaries",
    common_pb2.DOC_KIND_PROMPT: "prompts",
}
CLAUDE_MEM_HYBRID = "claude-mem hybrid (issue 32): recall@20 0.284, hit@10 8/30, answered 30/30"


def claude_mem_database(path: Path, observations: int) -> int:
    """claude-mem's schema (its published DDL) filled with the corpus; rows written."""
    sys.path.insert(0, str(REPO))  # the DDL lives with the tests' claude-mem fixture
    from tests.fixtures.claude_mem_db import DDL

    with sqlite3.connect(path) as conn:
        conn.executescript(DDL)
    return generate_corpus(path, observations)


def caught_up(stack: Stack, timeout_s: float) -> float:
    """Seconds until the vector index holds every record (polled; Sync runs a catch-up pass)."""
    started = time.monotonic()
    while stack.vector.stub.Status(vector_pb2.VectorStatusRequest()).lag > 0:
        if time.monotonic() - started > timeout_s:
            raise RuntimeError(f"the vector index did not catch up within {timeout_s:.0f} s")
        stack.vector.stub.Sync(vector_pb2.VectorSyncRequest(), timeout=timeout_s)
    return time.monotonic() - started


def ask(stack: Stack, query: str) -> tuple[list[common_pb2.IndexRow], float]:
    started = time.perf_counter()
    reply = stack.search.stub.Search(search_pb2.SearchRequest(query=query, limit=TOP))
    return list(reply.rows), (time.perf_counter() - started) * 1000


def kinds_row(stack: Stack) -> list[object]:
    """Mean rows of each kind in the first TOP of the keyword queries."""
    counts: Counter[str] = Counter()
    millis = []
    queries = make_queries()
    for query in queries:
        rows, ms = ask(stack, query)
        counts.update(KINDS.get(row.ref.kind, "other") for row in rows)
        millis.append(ms)
    mean = {kind: counts[kind] / len(queries) for kind in KINDS.values()}
    return [
        f"keyword queries ({len(queries)}): kinds in the first {TOP}",
        f"{mean['observations']:.1f} observations, {mean['summaries']:.1f} summaries, {mean['prompts']:.1f} prompts",
        f"{statistics.median(millis):.0f} ms",
    ]


def nearest(stack: Stack, query: str) -> tuple[list[common_pb2.IndexRow], float]:
    """The vector leg alone, before fusion and the floor: the TOP nearest records, hydrated."""
    started = time.perf_counter()
    hits = stack.vector.stub.Query(vector_pb2.VectorQueryRequest(text=query, limit=TOP)).hits
    rows = stack.store.stub.Hydrate(store_pb2.HydrateRequest(refs=[hit.ref for hit in hits])).rows
    return list(rows), (time.perf_counter() - started) * 1000


def paraphrase_row(stack: Stack, db: Path, vector_only: bool = False) -> list[object]:
    """recall@TOP, hit@HIT_DEPTH and answered over the labelled paraphrases (`vector_only`: of the
    vector leg's own nearest records, the ceiling any floor on it can reach)."""
    queries = paraphrase_queries()
    recalls, hits, answered, millis = [], 0, 0, []
    with sqlite3.connect(db) as conn:
        for q in queries:
            relevant = conn.execute(
                "SELECT COUNT(*) FROM observations WHERE title LIKE ?", (f"% {q.means}",)
            ).fetchone()[0]
            rows, ms = nearest(stack, q.query) if vector_only else ask(stack, q.query)
            found = [q.means.lower() in row.title.lower() for row in rows]
            recalls.append(min(sum(found), TOP) / max(1, min(relevant, TOP)))
            hits += any(found[:HIT_DEPTH])
            answered += bool(rows)
            millis.append(ms)
    label = "vector leg alone, no fusion, no floor" if vector_only else "no shared word"
    return [
        f"paraphrases ({len(queries)}, {label}): recall@{TOP} / hit@{HIT_DEPTH} / answered",
        f"{statistics.mean(recalls):.3f} / {hits}/{len(queries)} / {answered}/{len(queries)}",
        f"{statistics.median(millis):.0f} ms",
    ]


def nonsense_row(stack: Stack) -> list[object]:
    empty = sum(not ask(stack, query)[0] for query in NONSENSE)
    return [f"nonsense ({len(NONSENSE)}, e.g. {NONSENSE[0]!r}): nothing found", f"{empty}/{len(NONSENSE)}", "-"]


def run_coding_search(observations: int = 10_000, embedder: str = "minilm-int8", index_timeout: float = 3600) -> None:
    """Build the coding memory in a private stack and print the table (bench/locomo/run.py calls it
    too, so the known-item, paraphrase and LoCoMo figures come from one run)."""
    stack = Stack(embedder)
    try:
        with tempfile.TemporaryDirectory(prefix="mnemo-coding-") as tmp:
            db = Path(tmp) / "claude-mem.db"
            written = claude_mem_database(db, observations)
            started = time.monotonic()
            subprocess.run(
                [sys.executable, "-m", "mnemo.cli", "import", str(db)],
                env=subprocess_env(stack.settings),
                cwd=str(REPO),
                check=True,
                capture_output=True,
                timeout=3600,
            )
            imported, indexed = time.monotonic() - started, caught_up(stack, index_timeout)
            print(
                f"\nCoding memory: {written:,} records (bench/peer/corpus.py) imported in {imported:.0f} s, "
                f"embedded {indexed:.0f} s later; SearchService.Search, {TOP} rows, embedder {embedder}"
            )
            rows = [kinds_row(stack), paraphrase_row(stack, db), paraphrase_row(stack, db, vector_only=True),
                    nonsense_row(stack)]
            print_table(["query set", "mnemo", "p50"], rows)
            print(CLAUDE_MEM_HYBRID)
    finally:
        stack.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--observations", type=int, default=10_000, help="observations in the corpus")
    parser.add_argument("--embedder", default="minilm-int8", help="embedder name")
    parser.add_argument("--index-timeout", type=float, default=3600, help="seconds the vector index may take")
    args = parser.parse_args(argv)
    run_coding_search(args.observations, args.embedder, args.index_timeout)
    print_load_average()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
