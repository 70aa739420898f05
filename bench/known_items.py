"""Known-item search: does search find a note by the words it holds, and nothing for words it lacks?

The memory: the 1,000 real commit messages of ../shared/data/known-items (a public project's
history; read here at run time, never copied), each saved as a user saves one: MCP `save_memory`
through the real gateway (`mnemo mcp`, spawned by the MCP SDK's stdio client), into one project,
typed "bugfix" when its subject speaks of a fix and "change" otherwise.

The queries, chosen by rules over the corpus (never by hand), for a seeded sample of notes:
- rare word: the note's rarest word (fewest notes hold it, at most RARE_DF, also as the store's
  index counts it, stemming included; ties: the longer);
- identifier: the note's rarest token written as code (snake_case, camelCase, dotted or a path),
  held as written by at most 10 notes (so a hit in the first 10 is possible);
- two words: the two ordinary words of the note (held by 2..ORDINARY_DF notes each) that the
  fewest notes hold together (at most 10, also as the index counts: hits holding both);
- filtered: the rare-word query with the note's own type as a filter (a filter it satisfies);
- absent: a word of the LoCoMo conversations (../shared/data/locomo) that no note holds; and two
  such words. Those must find nothing.
A query "hits" when its note is among the first 10 rows.

Asked through MCP `mem_search` (every class but filtered, which mem_search has no filter for),
MCP `search` with `obs_type` (filtered), and the CLI `mnemo search [--type]` (a sample per class,
one process each, spread evenly over the class: the first n of a class are not a fair sample when
its few failures sit early). The CLI and MCP ask the same SearchService with the same project
scope and no other filter, so they must answer each query alike: the run prints how many of the
sampled queries they answered alike and MCP's figure on that same sample. Baseline in the same
run: the store's own full-text search (StoreService.Search, bm25 OR of the words, no floor): what
lexical search alone finds, so a ratio under 1 is what the fusion and the relevance floor lose.

    .venv/bin/python -m bench.known_items [--per-class 200] [--cli 25] [--embedder minilm-int8]

bench/locomo/run.py prints these figures beside its own (known_items.run_known_items).
Skips cleanly (exit 0) when the data is absent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import REPO, mcp_session, print_load_average
from mnemo.query import STOP_WORDS, split_words

DATA = REPO.parent / "shared" / "data" / "known-items" / "requests-commits.json"
LOCOMO = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
PROJECT = "requests"
RARE_DF = 3
TRIES = 5  # candidate words or pairs of a note checked against the index
ABSENT_DRAW = 2  # absent candidates drawn per query kept (some are in the index after stemming)
ORDINARY_DF = 100
DEPTH = 10
# A token written as code, whole (not the tail of a longer one: `DecodeError` in `UnicodeDecodeError`).
_IDENTIFIER = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*(?:[._/]\w+)+|[a-z]+[A-Z]\w*|[A-Z]+[a-z]+[A-Z]\w*"
                         r"|[A-Z]{2,}[a-z]\w*|\w+_\w+)(?!\w)")
_FIX = re.compile(r"\bfix", re.IGNORECASE)
CLASSES = ("rare word", "identifier", "two words", "filtered", "absent word", "absent two words")


@dataclass
class Note:
    index: int
    text: str
    type: str
    words: set[str]
    identifiers: list[str]
    id: int = 0

    def written(self, word: str) -> str:
        """`word` (lowercased) as the note writes it."""
        return next((w for w in split_words(self.text)[0] if w.lower() == word), word)


@dataclass
class Query:
    kind: str
    text: str
    note: Note | None  # None: nothing should be found
    obs_type: str = ""


@dataclass
class Tally:
    hits: int = 0
    asked: int = 0
    millis: list[float] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    outcomes: dict[str, bool] = field(default_factory=dict)  # query text -> hit (absent: nothing found)

    def add(self, q: Query, ok: bool, ms: float) -> None:
        self.hits += ok
        self.asked += 1
        self.millis.append(ms)
        self.outcomes[q.text] = ok
        if not ok:
            self.misses.append(q.text)

    @property
    def rate(self) -> float:
        return self.hits / self.asked if self.asked else float("nan")


def words_of(text: str) -> set[str]:
    """Lowercased content words (letters, at least 3, not stop-words, not digit runs)."""
    return {w.lower() for w in split_words(text)[0]
            if len(w) >= 3 and not w.isdigit() and w.lower() not in STOP_WORDS and not w[0].isdigit()}


def load_notes(path: Path = DATA) -> list[Note]:
    commits = json.loads(path.read_text())
    notes = []
    for i, c in enumerate(commits):
        text = c["subject"] + (f"\n\n{c['body']}" if c.get("body") else "")
        identifiers = list(dict.fromkeys(m.group(0).strip("._/") for m in _IDENTIFIER.finditer(text)))
        notes.append(Note(i, text, "bugfix" if _FIX.search(c["subject"]) else "change", words_of(text),
                          [x for x in identifiers if len(x) >= 4]))
    return notes


class IndexCounts:
    """How many notes the store's full-text index finds for a word, and holds every word of a pair
    in (evidence 1): rarity as the index sees it, stemming included ("moving" finds "move")."""

    def __init__(self, store) -> None:
        self.store = store

    def _search(self, text: str, limit: int):
        from mnemo.v1 import common_pb2, store_pb2

        return self.store.Search(store_pb2.StoreSearchRequest(
            query=text, filters=common_pb2.Filters(project=PROJECT), page=common_pb2.Page(limit=limit)), timeout=30)

    def df(self, word: str) -> int:
        return self._search(word, 1).total

    def together(self, text: str) -> int:
        return sum(hit.evidence >= 1 - 1e-9 for hit in self._search(text, 500).hits)


def make_queries(notes: list[Note], per_class: int, index: IndexCounts, seed: int = 32) -> list[Query]:
    """The query classes of the module docstring, per_class each (fewer when too few notes qualify)."""
    rng = random.Random(seed)
    df = Counter(w for n in notes for w in n.words)
    token_df = Counter(x.lower() for n in notes for x in set(n.identifiers))
    order = list(notes)
    rng.shuffle(order)
    queries: list[Query] = []
    rare: list[tuple[Note, str]] = []
    for n in order:
        if len(rare) >= per_class:
            break
        candidates = sorted(n.words, key=lambda w: (df[w], -len(w), w))[:TRIES]
        word = next((w for w in candidates if df[w] <= RARE_DF and index.df(w) <= RARE_DF), None)
        if word:
            rare.append((n, word))
    queries += [Query("rare word", n.written(w), n) for n, w in rare]
    queries += [Query("filtered", n.written(w), n, n.type) for n, w in rare]
    idents = [(n, min(n.identifiers, key=lambda x: (token_df[x.lower()], -len(x), x))) for n in order if n.identifiers]
    queries += [Query("identifier", x, n) for n, x in idents if token_df[x.lower()] <= DEPTH][:per_class]
    queries += pair_queries(notes, order, df, per_class, index)
    queries += absent_queries(set(df) | {w for n in notes for w in words_of(n.text.lower())}, per_class, rng)
    return queries


def pair_queries(notes: list[Note], order: list[Note], df: Counter, per_class: int,
                 index: IndexCounts) -> list[Query]:
    """Per note, its two ordinary words the fewest notes hold together, at most DEPTH as the index
    counts (the first of the TRIES best pairs by exact words that qualifies)."""
    holders: dict[str, set[int]] = {}
    for n in notes:
        for w in n.words:
            holders.setdefault(w, set()).add(n.index)
    pairs = []
    for n in order:
        ordinary = sorted(w for w in n.words if 2 <= df[w] <= ORDINARY_DF)
        ranked = sorted((len(holders[a] & holders[b]), a, b) for i, a in enumerate(ordinary) for b in ordinary[i + 1:])
        for together, a, b in ranked[:TRIES]:
            text = f"{n.written(a)} {n.written(b)}"
            if together <= DEPTH and index.together(text) <= DEPTH:
                pairs.append(Query("two words", text, n))
                break
        if len(pairs) >= per_class:
            break
    return pairs


def absent_queries(vocabulary: set[str], per_class: int, rng: random.Random) -> list[Query]:
    """Words of the LoCoMo conversations (real text) that no note holds, alone and in pairs."""
    if not LOCOMO.is_file():
        return []
    turns = [t.get("text", "") for c in json.loads(LOCOMO.read_text())
             for k, v in c["conversation"].items() if k.startswith("session_") and isinstance(v, list) for t in v]
    candidates = sorted({w for text in turns for w in words_of(text) if len(w) >= 6 and w.isalpha()} - vocabulary)
    rng.shuffle(candidates)
    singles = [Query("absent word", w, None) for w in candidates[:ABSENT_DRAW * per_class]]
    rest = candidates[ABSENT_DRAW * per_class:]
    doubles = [Query("absent two words", f"{a} {b}", None) for a, b in zip(rest[0::2], rest[1::2], strict=False)]
    return singles + doubles[:ABSENT_DRAW * per_class]


def truly_absent(store, queries: list[Query], per_class: int) -> list[Query]:
    """The absent-word queries whose words the store's full-text index finds in no note (a word is
    absent as the index sees it: "successful" stems to a word the notes hold), per_class of each."""
    from mnemo.v1 import common_pb2, store_pb2

    kept: list[Query] = []
    taken: Counter[str] = Counter()
    for q in queries:
        if q.note is not None:
            kept.append(q)
        elif taken[q.kind] < per_class and not store.Search(store_pb2.StoreSearchRequest(
                query=q.text, filters=common_pb2.Filters(project=PROJECT), page=common_pb2.Page(limit=1)),
                timeout=30).total:
            taken[q.kind] += 1
            kept.append(q)
    return kept


def found_ids(structured: dict) -> list[int]:
    """Observation ids of a search/mem_search reply's rows (display ids `#12`)."""
    return [int(m.group(1)) for row in structured.get("rows", []) if (m := re.fullmatch(r"#?(\d+)", str(row["id"])))]


def judged(q: Query, ids: list[int]) -> bool:
    return (not ids) if q.note is None else q.note.id in ids[:DEPTH]


# -- through MCP ---------------------------------------------------------------------------
async def _save(env: dict[str, str], notes: list[Note]) -> None:
    """Every note through save_memory, as a user saves one; note.id is what it answers."""
    async with mcp_session(env) as session:
        for note in notes:
            saved = await session.call_tool("save_memory", {"text": note.text, "type": note.type, "project": PROJECT})
            assert not saved.is_error, saved.content
            note.id = int(saved.structured_content["id"])


async def _ask(env: dict[str, str], queries: list[Query]) -> dict[str, Tally]:
    """mem_search for every query; MCP `search` with obs_type for the filtered ones."""
    tallies = {kind: Tally() for kind in CLASSES}
    async with mcp_session(env) as session:
        for q in queries:
            arguments: dict[str, object] = {"query": q.text, "project": PROJECT, "limit": DEPTH}
            tool = "search" if q.obs_type else "mem_search"
            if q.obs_type:
                arguments["obs_type"] = q.obs_type
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error, result.content
            tallies[q.kind].add(q, judged(q, found_ids(result.structured_content or {})), took)
    return tallies


def spread_sample(queries: list[Query], per_class: int) -> list[Query]:
    """per_class queries of each class, spread evenly over the class (its first, then every
    len/per_class-th), in the order given."""
    chosen: list[Query] = []
    for kind in CLASSES:
        of_kind = [q for q in queries if q.kind == kind]
        if len(of_kind) <= per_class:
            chosen += of_kind
        else:
            chosen += [of_kind[i * len(of_kind) // per_class] for i in range(per_class)]
    return chosen


def cli(env: dict[str, str], queries: list[Query], per_class: int) -> dict[str, Tally]:
    """`mnemo search --json` for a spread sample of per_class queries of each class (spread_sample)."""
    tallies = {kind: Tally() for kind in CLASSES}
    for q in spread_sample(queries, per_class):
        argv = [sys.executable, "-m", "mnemo.cli", "search", "--json", "--project", PROJECT, "--limit", str(DEPTH)]
        argv += ["--type", q.obs_type] if q.obs_type else []
        started = time.perf_counter()
        done = subprocess.run([*argv, "--", q.text], env=env, cwd=str(REPO), capture_output=True, text=True,
                              timeout=120, check=True)
        took = (time.perf_counter() - started) * 1000
        tallies[q.kind].add(q, judged(q, found_ids(json.loads(done.stdout))), took)
    return tallies


def lexical(stub, queries: list[Query]) -> dict[str, Tally]:
    """Baseline: StoreService.Search alone (bm25 OR of the words, every filter, no floor)."""
    from mnemo.v1 import common_pb2, store_pb2

    tallies = {kind: Tally() for kind in CLASSES}
    for q in queries:
        filters = common_pb2.Filters(project=PROJECT, obs_types=[q.obs_type] if q.obs_type else [])
        started = time.perf_counter()
        reply = stub.Search(store_pb2.StoreSearchRequest(query=q.text, filters=filters,
                                                         page=common_pb2.Page(limit=DEPTH)), timeout=30)
        took = (time.perf_counter() - started) * 1000
        tallies[q.kind].add(q, judged(q, [h.ref.id for h in reply.hits]), took)
    return tallies


def wait_for_vectors(settings, timeout_s: float = 600.0) -> None:
    from mnemo.grpc_client import open_channel
    from mnemo.v1 import vector_pb2, vector_pb2_grpc

    channel = open_channel(settings.address("vector"))
    stub = vector_pb2_grpc.VectorServiceStub(channel)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and stub.Status(vector_pb2.VectorStatusRequest(), timeout=30).lag > 0:
        stub.Sync(vector_pb2.VectorSyncRequest(), timeout=120)
    channel.close()


# -- run and print -------------------------------------------------------------------------
@dataclass
class KnownItems:
    tables: dict[str, dict[str, Tally]]
    notes: int
    seconds: float


def run_known_items(per_class: int = 200, cli_per_class: int = 25, embedder: str = "") -> KnownItems | None:
    """Build the memory in a private stack, ask every class through every path; None without the data."""
    if not DATA.is_file():
        return None
    from mnemo.config import load_settings, with_overrides
    from mnemo.grpc_client import open_channel
    from mnemo.stack import ensure_stack, run_down
    from mnemo.v1 import store_pb2_grpc

    started = time.monotonic()
    notes = load_notes()
    home = Path(tempfile.mkdtemp(prefix="mnemo-known-"))
    settings = load_settings({"home": str(home)}, environ={})
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update(MNEMO_HOME=str(home), MNEMO_LOG_LEVEL="warning", MNEMO_MCP_STRUCTURED_CONTENT="true")
    if embedder:
        settings = with_overrides(settings, embedder=embedder)
        env["MNEMO_EMBEDDER"] = embedder
    settings = with_overrides(settings, log_level="warning")
    try:
        if not ensure_stack(settings, 180):
            raise RuntimeError("the stack did not become healthy")
        asyncio.run(_save(env, notes))
        wait_for_vectors(settings)
        channel = open_channel(settings.address("store"))
        store = store_pb2_grpc.StoreServiceStub(channel)
        queries = truly_absent(store, make_queries(notes, per_class, IndexCounts(store)), per_class)
        tables = {"MCP": asyncio.run(_ask(env, queries)), "mnemo search": cli(env, queries, cli_per_class),
                  "lexical baseline": lexical(store, queries)}
        channel.close()
    finally:
        run_down(settings, None)
        shutil.rmtree(home, ignore_errors=True)
    return KnownItems(tables, len(notes), time.monotonic() - started)


def print_known_items(result: KnownItems | None) -> None:
    if result is None:
        print(f"known items: skipped ({DATA} is absent)")
        return
    names = list(result.tables)
    print(f"\nKnown items: {result.notes} real commit messages saved through MCP save_memory, {result.seconds:.0f}s; "
          "hit@10 (absent: nothing found), p50 ms")
    header = f"{'class':<18} | " + " | ".join(f"{n:<22}" for n in names) + " | ratio MCP/lexical"
    print(header)
    print("-" * len(header))
    for kind in CLASSES:
        cells = []
        for name in names:
            t = result.tables[name][kind]
            p50 = statistics.median(t.millis) if t.millis else float("nan")
            cells.append(f"{t.rate:.3f} n={t.asked:<4} {p50:6.1f}ms".ljust(22))
        mcp, lex = result.tables["MCP"][kind].rate, result.tables["lexical baseline"][kind].rate
        print(f"{kind:<18} | " + " | ".join(cells) + f" | {mcp / lex if lex else float('nan'):.3f}")
    print("goals: rare word and identifier >= 0.99, two words >= 0.97, absent >= 0.95 (issue 32); "
          "absent words are those the store's index finds nowhere, so the baseline's 1.000 there is by construction")
    if "mnemo search" in result.tables:
        print_path_agreement(result.tables["MCP"], result.tables["mnemo search"])
    for kind in CLASSES:
        misses = result.tables["MCP"][kind].misses
        if misses:
            print(f"  MCP misses, {kind}: {', '.join(repr(m) for m in misses[:12])}")


def path_agreement(mcp: dict[str, Tally], other: dict[str, Tally]) -> dict[str, tuple[int, int, float]]:
    """Per class: (queries `other` asked that MCP answered alike, queries `other` asked, MCP's rate on
    exactly those queries), so a sample's figure is read against MCP's on the same queries."""
    out = {}
    for kind in CLASSES:
        asked = other[kind].outcomes
        same = [mcp[kind].outcomes.get(text) for text in asked]
        alike = sum(1 for text, ok in zip(asked, same, strict=True) if ok is not None and ok == asked[text])
        mcp_hits = [ok for ok in same if ok is not None]
        out[kind] = (alike, len(asked), sum(mcp_hits) / len(mcp_hits) if mcp_hits else float("nan"))
    return out


def print_path_agreement(mcp: dict[str, Tally], cli_tallies: dict[str, Tally]) -> None:
    agreement = path_agreement(mcp, cli_tallies)
    print("mnemo search against MCP on the same queries (answered alike / asked; MCP's figure on that sample): "
          + "; ".join(f"{kind} {alike}/{asked} ({rate:.3f})" for kind, (alike, asked, rate) in agreement.items()))
    differing = [text for kind in CLASSES for text, ok in cli_tallies[kind].outcomes.items()
                 if mcp[kind].outcomes.get(text, ok) != ok]
    if differing:
        print(f"  answered differently: {', '.join(repr(t) for t in differing[:12])}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-class", type=int, default=200, help="queries per class (MCP and the baseline)")
    parser.add_argument("--cli", type=int, default=25, help="queries per class through `mnemo search`")
    parser.add_argument("--embedder", default="", help="embedder name (default: the settings default)")
    args = parser.parse_args(argv)
    print_known_items(run_known_items(args.per_class, args.cli, args.embedder))
    print()
    print_load_average()
    return 0


if __name__ == "__main__":
    sys.exit(main())
