"""PostgreSQL's full-text search for the store's queries (the twin of store_svc.fts_sqlite).

Words: every term of mnemo.query's ParsedQuery becomes a tsquery built on the server from a
parameter, never from spliced text: `phraseto_tsquery('mnemo', ?)` for a word or phrase,
`to_tsquery('mnemo', quote_literal(?) || ':*')` for a prefix. Terms are ORed. A row scores
like bm25: the sum over the terms it matches of idf(term) x ts_rank(weights, fts, term), with
idf = ln(1 + (N - df + 0.5) / (df + 0.5)) from the term's document frequency in the kind's
table (counted through the GIN index, capped at DF_CAP, and cached until the next write: see
_df_cache) and N from the planner's row count.
ts_rank alone has no idf, so a common word weighed as much as a rare one: on LoCoMo's dev
split lexical recall@5 was 0.486 without idf, 0.617 with it (both with normalisation 1).
A term restricted to a column (`title:word`) must also match that column's own tsvector.

CJK runs: substrings, as on SQLite. Runs of 3 or more characters match rows holding any of
their trigrams and score by the share of trigrams present (an exact substring scores 1, like
SQLite's LIKE hits); shorter runs match as substrings and score 1. Both go through the
pg_trgm index (rows with CJK only).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from mnemo.query import ParsedQuery, Run, Term, like_pattern, table_column
from store_svc.fts_sqlite import CONTEXT_TABLES, CONTEXT_WEIGHT
from store_svc.pg.schema import RANK_WEIGHTS, TS_CONFIG, haystack
from store_svc.queries import Clause, KindSql, union_branches

MAX_TRIGRAMS = 48
# Chosen on LoCoMo's dev split (lexical recall@5, 760 questions): ts_rank without length
# normalisation 0.655; normalisation 1 (1 + log length) 0.617; 2 (length) 0.262; ts_rank_cd
# with 1: 0.612. SQLite's bm25 scored 0.599 there.
RANK_FUNCTION = "ts_rank"
RANK_NORMALIZATION = 0
# Most matches counted for a term's document frequency (idf barely moves beyond it).
DF_CAP = 20000
# Puts the score on SQLite's bm25 scale, which search_svc's calibrated relevance floor adds in
# (0.01 x bm25): the median ratio of SQLite's -bm25 to this score over the top hits of the same
# 302 LoCoMo questions on both backends was 11.5 (quartiles 10.2 and 13.4).
BM25_SCALE = 11.5
_WORDS = "mnemo_words(?)"
# Document frequencies already counted (and each table's N, under term ""), keyed by (server,
# database, change-feed head, table, term): counting a term's matches visits every matching
# row's heap page (~4 us each, 90 ms for a word in a fifth of 100k observations), as much as
# ranking them. Any write moves the head (every insert, update and delete appends to the feed
# in the writer's transaction, and writers commit in seq order), so a cached count is exactly
# what a fresh count in this snapshot would return; entries of older heads just age out. (N
# may lag a re-ANALYZE of unchanged rows until the next write: an estimate either way.)
DF_CACHE_SIZE = 4096
_df_cache: OrderedDict[tuple, float] = OrderedDict()
_df_lock = threading.Lock()


def _tsquery(term: Term) -> tuple[str, list[str]]:
    """A tsquery expression for one term and its parameters."""
    words = list(term.words)
    if not term.prefix:
        return f"phraseto_tsquery('{TS_CONFIG}', {_WORDS})", [" ".join(words)]
    last = words.pop()
    prefix = f"to_tsquery('{TS_CONFIG}', quote_literal(?) || ':*')"
    if not words:
        return prefix, [last]
    return f"tsquery_phrase(phraseto_tsquery('{TS_CONFIG}', {_WORDS}), {prefix})", [" ".join(words), last]


def _term_tests(spec: KindSql, terms: Iterable[Term], alias: str = "") -> tuple[list[str], list, str, list]:
    """(match tests, their params, the bm25-like score expression, its params) of the terms
    that can match in this kind's table. The score reads each term's idf from a one-row `idf`
    relation (_idf_relation) the scoring query must join."""
    prefix = f"{alias}." if alias else ""
    tests: list[str] = []
    params: list = []
    scores: list[str] = []
    score_params: list = []
    weights = RANK_WEIGHTS[spec.table]
    for term in terms:
        column = table_column(term.column, spec.columns)
        if column is None:
            continue
        query, args = _tsquery(term)
        scores.append(f"idf.i{len(scores)} * {RANK_FUNCTION}('{weights}', {prefix}fts, {query}, "
                      f"{RANK_NORMALIZATION})")
        score_params.extend(args)
        if column:
            own = f"to_tsvector('{TS_CONFIG}', mnemo_words({prefix}{column}))"  # the column alone
            tests.append(f"({prefix}fts @@ {query} AND {own} @@ {query})")
            params.extend([*args, *args])
        else:
            tests.append(f"{prefix}fts @@ {query}")
            params.extend(args)
    return tests, params, f"{BM25_SCALE} * ({' + '.join(scores)})", score_params


def _term_statistics(conn: Any, spec: KindSql, terms: list[tuple[str, list]]) -> tuple[float, list[int]]:
    """(N, each term's number of matching rows capped at DF_CAP) in the kind's table, from the
    cache when nothing was written since they were counted, else counted in one statement.
    N is the planner's row count, or a count(*) while the table was never analyzed (a fresh
    bulk load: then a full scan, which must not run again for every search)."""
    head = conn.execute("SELECT coalesce(max(seq), 0), pg_postmaster_start_time()::text, "
                        "current_database() FROM change_feed").fetchone()
    base = (head[1], head[2], head[0], spec.table)
    keys = [(*base, "", ()), *((*base, query, tuple(args)) for query, args in terms)]
    with _df_lock:
        cached: list[float | None] = [_df_cache.get(key) for key in keys]
    missing = [i for i, value in enumerate(cached) if value is None]
    if missing:
        table = spec.table
        rows = (f"(SELECT CASE WHEN reltuples > 0 THEN reltuples ELSE (SELECT count(*) FROM {table}) END "
                f"FROM pg_class WHERE oid = '{table}'::regclass)")
        parts = [f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE fts @@ {terms[i - 1][0]} LIMIT {DF_CAP}) df)"
                 if i else rows for i in missing]
        row = conn.execute(f"SELECT {', '.join(parts)}", [a for i in missing if i for a in terms[i - 1][1]]).fetchone()
        with _df_lock:
            for i, value in zip(missing, row, strict=True):
                cached[i] = _df_cache[keys[i]] = float(value) if i == 0 else int(value)
            while len(_df_cache) > DF_CACHE_SIZE:
                _df_cache.popitem(last=False)
    return float(cached[0] or 0.0), [int(df or 0) for df in cached[1:]]


def _idf_relation(conn: Any, spec: KindSql, terms: Iterable[Term]) -> tuple[str, list]:
    """A one-row relation `idf` with each matchable term's idf (columns i0, i1, ...), and its params.

    N and the document frequencies come in as parameters and OFFSET 0 keeps the relation a
    separate subquery evaluated once. Counted by scalar subqueries inside the score expression
    instead, they became init plans whose cost estimate made the planner sort the matching
    rows' whole tuples (tsvector included) in parallel workers, spilling to disk: 115 ms
    instead of 29 ms for a 4-word query over 100k observations."""
    matchable = [_tsquery(t) for t in terms if table_column(t.column, spec.columns) is not None]
    rows, dfs = _term_statistics(conn, spec, matchable)
    columns = [f"mnemo_idf(?::float8, ?::bigint) AS i{i}" for i in range(len(dfs))]
    return f"(SELECT {', '.join(columns)} OFFSET 0) idf", [v for df in dfs for v in (rows, df)]


def _runs_here(spec: KindSql, runs: Iterable[Run]) -> list[tuple[str, str]]:
    placed = ((run.text, table_column(run.column, spec.columns)) for run in runs)
    return [(text, column) for text, column in placed if column is not None]


def _run_test(spec: KindSql, run: str, column: str, alias: str = "") -> tuple[str, list, str, list]:
    """(match test, params, score expression, params) of one CJK run."""
    prefix = f"{alias}." if alias else ""
    text = f"{prefix}{column}" if column else f"({haystack(spec.table, alias)})"
    cjk_rows = f"coalesce({prefix}has_cjk, 1) <> 0"  # the trigram index covers these rows only
    if len(run) < 3:
        return f"({cjk_rows} AND {text} LIKE ? ESCAPE '\\')", [like_pattern(run)], "1.0", []
    grams = list(dict.fromkeys(run[i : i + 3] for i in range(len(run) - 2)))[:MAX_TRIGRAMS]
    patterns = [like_pattern(g) for g in grams]
    like = f"{text} LIKE ? ESCAPE '\\'"
    test = f"({cjk_rows} AND ({' OR '.join([like] * len(grams))}))"
    share = " + ".join(f"({like})::int" for _ in grams)
    return test, patterns, f"(({share})::float8 / {len(grams)})", patterns


def match_source(spec: KindSql, parsed: ParsedQuery, *, scored: bool = True,
                 conn: Any = None) -> tuple[str, list] | None:
    """SQL yielding (id, score) of the rows matching the query's positive terms, or None.
    Scored, `conn` (the query's transaction) supplies the terms' document frequencies."""
    branches: list[tuple[str, list]] = []
    context = spec.table in CONTEXT_TABLES
    tests, params, score, score_params = _term_tests(spec, parsed.terms, spec.table if context else "")
    if tests:
        where = " OR ".join(tests)
        if scored:
            idf, idf_params = _idf_relation(conn, spec, parsed.terms)
            source = spec.table
            # The twin of SQLite's context column: it scores, never matches (fts_sqlite._with_context);
            # a term restricted to a column (`title:word`) is about the record alone.
            if context and not any(term.column for term in parsed.terms):
                _, _, context_score, context_params = _term_tests(spec, parsed.terms, "c")
                source = f"{spec.table} LEFT JOIN observation_context c USING (id)"
                score = f"{score} + {CONTEXT_WEIGHT} * coalesce({context_score}, 0)"
                score_params = [*score_params, *context_params]
            branches.append((f"SELECT id, {score} AS score FROM {source} CROSS JOIN {idf} WHERE {where}",
                             [*score_params, *idf_params, *params]))
        else:
            branches.append((f"SELECT id FROM {spec.table} WHERE {where}", params))
    for run, column in _runs_here(spec, parsed.cjk):
        test, test_params, score, score_params = _run_test(spec, run, column)
        if scored:
            branches.append((f"SELECT id, {score} AS score FROM {spec.table} WHERE {test}",
                             [*score_params, *test_params]))
        else:
            branches.append((f"SELECT id FROM {spec.table} WHERE {test}", test_params))
    return union_branches(branches, scored)


def exclusion_clause(spec: KindSql, parsed: ParsedQuery, clause: Clause) -> None:
    tests, params, _, _ = _term_tests(spec, parsed.excluded, spec.alias)
    if tests:
        clause.add(f"NOT ({' OR '.join(tests)})", *params)
    for run, column in _runs_here(spec, parsed.excluded_cjk):
        prefix = f"{spec.alias}."
        searched = (column,) if column else spec.text_columns
        # coalesce: a NULL column must not turn NOT (...) into NULL and drop the row
        tests = [f"coalesce({prefix}{c}, '') LIKE ? ESCAPE '\\'" for c in searched]
        clause.add(f"NOT ({' OR '.join(tests)})", *[like_pattern(run)] * len(searched))
