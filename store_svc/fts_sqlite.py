"""The SQLite dialect: full-text search for the store's queries, FTS5 (porter) for words, a
trigram FTS5 table (or LIKE for runs under 3 characters) for CJK, and the sqlite3 connection
class that carries the dialect. Expressions come from mnemo.query (every token quoted);
user text reaches SQLite only as parameters."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import replace

from mnemo.query import ParsedQuery, Run, exclusion_fts5, like_pattern, table_column, to_fts5, trigram_fts5
from store_svc.dialect import Dialect
from store_svc.queries import Clause, KindSql, union_branches

# A CJK substring hit found by LIKE (runs under 3 characters) scores like a good bm25 hit.
LIKE_SCORE = 1.0
# Most trigrams of one CJK run ORed together (a long pasted run must not build a huge query).
MAX_TRIGRAMS = 48
# Tables whose FTS5 index has a last `context` column (schema._context_migration: the words of the
# observations written just before a record in its session), and that column's bm25 weight next to
# the record's own columns (narrative 1.0, title 8.0). Chosen on LoCoMo's dev split by
# leave-one-conversation-out CV (bench/locomo/lexical.py; docs/search.md, "Context words").
CONTEXT_TABLES = frozenset({"observations"})
CONTEXT_WEIGHT = 0.3


def _like_any(spec: KindSql, fragment: str, alias: str | None = None, column: str = "") -> tuple[str, list]:
    """A LIKE test of `fragment` in any text column, or only in `column` (a table column)."""
    prefix = f"{alias}." if alias else ""
    searched = (column,) if column else spec.text_columns
    tests = " OR ".join(f"{prefix}{c} LIKE ? ESCAPE '\\'" for c in searched)
    return f"({tests})", [like_pattern(fragment)] * len(searched)


def _trigram_expression(run: str, column: str = "") -> str:
    """The trigrams of a CJK run ORed: exact substrings rank first, partial overlaps follow."""
    grams = list(dict.fromkeys(run[i : i + 3] for i in range(len(run) - 2)))[:MAX_TRIGRAMS]
    return " OR ".join(trigram_fts5(g, column) for g in grams)


def _runs_here(spec: KindSql, runs: Iterable[Run]) -> list[tuple[str, str]]:
    """(text, table column or "") of the runs that can match in this kind's table."""
    placed = ((run.text, table_column(run.column, spec.columns)) for run in runs)
    return [(text, column) for text, column in placed if column is not None]


def match_source(spec: KindSql, parsed: ParsedQuery, *, scored: bool = True,
                 conn: object = None) -> tuple[str, list] | None:
    """SQL yielding (id, score) of the rows matching the query's positive terms, or None.
    (`conn` is unused: FTS5's bm25 has its statistics in the index.)

    Unscored (for totals) it yields ids only and skips bm25, which dominates the cost.
    """
    branches: list[tuple[str, list]] = []
    expression = to_fts5(parsed, spec.columns)
    weights = ", ".join(str(w) for w in spec.bm25_weights)

    def fts(table: str, rank: str, match: str) -> tuple[str, list]:
        score = f", {rank} AS score" if scored else ""
        return f"SELECT rowid AS id{score} FROM {table} WHERE {table} MATCH ?", [match]

    if expression and spec.table in CONTEXT_TABLES:
        branches.append(_with_context(spec, parsed, expression, scored))
    elif expression:
        branches.append(fts(spec.fts, f"-bm25({spec.fts}, {weights})", expression))
    for run, column in _runs_here(spec, parsed.cjk):
        if len(run) >= 3:
            branches.append(fts(spec.tri, f"-bm25({spec.tri})", _trigram_expression(run, column)))
        else:
            test, params = _like_any(spec, run, column=column)
            score = f", {LIKE_SCORE} AS score" if scored else ""
            branches.append((f"SELECT id{score} FROM {spec.table} WHERE {test}", params))
    return union_branches(branches, scored)


def _with_context(spec: KindSql, parsed: ParsedQuery, expression: str, scored: bool) -> tuple[str, list]:
    """The rows whose own columns match (context words never make a row match), ranked by bm25
    over their own columns and, at CONTEXT_WEIGHT, their context column: a row matching the
    query's rare word ranks higher when the records just before it speak of its other words."""
    own = own_columns(spec, expression)
    if not scored:
        return f"SELECT rowid AS id FROM {spec.fts} WHERE {spec.fts} MATCH ?", [own]
    ranked = to_fts5(replace(parsed, excluded=()), spec.columns)  # exclusions: own columns only, above
    weights = ", ".join(str(w) for w in (*spec.bm25_weights, CONTEXT_WEIGHT))
    # `+rowid`: without the plus FTS5 is handed the IN list as rowid lookups and runs the ranked
    # MATCH once per row (LoCoMo: 174 ms a query instead of 3 ms).
    return (f"SELECT rowid AS id, -bm25({spec.fts}, {weights}) AS score FROM {spec.fts} WHERE {spec.fts} MATCH ? "
            f"AND +rowid IN (SELECT rowid FROM {spec.fts} WHERE {spec.fts} MATCH ?)", [ranked, own])


def own_columns(spec: KindSql, expression: str) -> str:
    """`expression` restricted to the record's own columns (not its context words): a phrase,
    NOT and column:word are about the record itself. Column names come from code."""
    if spec.table not in CONTEXT_TABLES:
        return expression
    return "{" + " ".join(spec.text_columns) + "} : (" + expression + ")"


def exclusion_clause(spec: KindSql, parsed: ParsedQuery, clause: Clause) -> None:
    expression = exclusion_fts5(parsed, spec.columns)
    if expression:
        expression = own_columns(spec, expression)
        clause.add(f"{spec.alias}.id NOT IN (SELECT rowid FROM {spec.fts} WHERE {spec.fts} MATCH ?)", expression)
    for run, column in _runs_here(spec, parsed.excluded_cjk):
        test, params = _like_any(spec, run, spec.alias, column)
        clause.add(f"NOT {test}", *params)


_FTS_TABLES = [f"{t}_{s}" for t in ("observations", "session_summaries", "user_prompts") for s in ("fts", "tri")]
SQLITE = Dialect("sqlite", match_source, exclusion_clause, "CROSS JOIN",
                 tuple(f"INSERT INTO {t}({t}) VALUES ('optimize')" for t in _FTS_TABLES))


class SqliteConnection(sqlite3.Connection):
    """sqlite3's connection (its C methods unchanged, so no cost) carrying the SQLite dialect."""

    @property
    def dialect(self) -> Dialect:
        return SQLITE


def enter_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """WAL mode, waiting for a store that opens the same fresh file at the same moment: SQLite
    answers "database is locked" at once there, without its busy handler (it would deadlock)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)  # the other store holds the file for one short statement
