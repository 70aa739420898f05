"""Lexical evidence: how much of what a query names a search hit holds.

bm25 ranks, but its scale depends on the query and the corpus, so it cannot say whether a record
is what the query asks for. Evidence can: the share of the query's term weight the record holds,
each term weighed by its inverse document frequency (log((N + 1) / (df + 1)) from term_stats, so a
rare name or identifier counts more than "fix" or "test"), for the best of the alternatives the
user wrote (`a OR b`: mnemo.query's ParsedQuery.groups). A record holding every term of one
alternative has evidence 1. search_svc's relevance floor counts a record at its evidence threshold
as a match whatever its embedding's similarity (search_svc.fusion.RelevanceFloor).

Which record holds which term is asked of the full-text index itself, one term at a time, over
the hits only (the dialect's unscored match source, restricted to their ids): stemming, columns
and phrases then mean exactly what they mean for the search. A search of one term need not ask:
every row it matched holds that term. A record's context words (the observations written just
before it) never count: they rank, they are not the record.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from mnemo.query import ParsedQuery, Term
from store_svc import terms as term_stats
from store_svc.dialect import Conn
from store_svc.queries import KINDS

Ref = tuple[int, int]


def evidence(conn: Conn, parsed: ParsedQuery, refs: Iterable[Ref], *, matches: bool = False) -> dict[Ref, float]:
    """(kind, id) -> the hit's evidence for `parsed` (see the module docstring); refs absent from
    the result hold none of the query's terms (or the query has no word terms: CJK runs only).
    `matches`: the refs are rows the store's search matched for `parsed` itself."""
    wanted: dict[int, list[int]] = {}
    for kind, rid in refs:
        wanted.setdefault(kind, []).append(rid)
    distinct = list({term: None for group in parsed.groups for term in group})
    if not distinct or not wanted:
        return {}
    held: dict[Term, set[Ref]]
    if matches and len(distinct) == 1 and not parsed.cjk:
        # The search matched these rows on this one term and nothing else (the same unscored
        # match source _holding asks), so each holds it: asking the index again finds them all.
        held = {distinct[0]: {(kind, rid) for kind, ids in wanted.items() for rid in ids}}
    else:
        held = {term: set() for term in distinct}
        for kind, ids in wanted.items():
            for term in distinct:
                held[term].update((kind, rid) for rid in _holding(conn, kind, term, ids))
    weight = term_weights(conn, distinct)
    out: dict[Ref, float] = {}
    for ref in ((k, i) for k, ids in wanted.items() for i in ids):
        holds = {t for t in distinct if ref in held[t]}
        best = max(_share(group, weight, holds) for group in parsed.groups)
        if best > 0:
            out[ref] = best
    return out


def _share(group: tuple[Term, ...], weight: Mapping[Term, float], holds: set[Term]) -> float:
    """The share of the group's weight in the terms a record holds."""
    total = sum(weight[t] for t in group)
    return sum(weight[t] for t in group if t in holds) / total if total > 0 else 0.0


def _holding(conn: Conn, kind: int, term: Term, ids: list[int]) -> list[int]:
    """The ids among `ids` whose own text matches `term` in the full-text index."""
    spec = KINDS[kind]
    source = conn.dialect.match_source(spec, ParsedQuery(text="", terms=(term,)), scored=False)
    if source is None:  # restricted to a column this kind lacks
        return []
    # `+m.id`: a plain rowid test would make FTS5 run the MATCH once per listed id.
    test, values = conn.dialect.one_of("+m.id", ids)
    sql = f"SELECT m.id FROM ({source[0]}) m WHERE {test}"
    return [row[0] for row in conn.execute(sql, [*source[1], values])]


def term_weights(conn: Conn, query_terms: Iterable[Term]) -> dict[Term, float]:
    """Each term's idf from term_stats: a phrase weighs as its rarest word; a prefix, and a word
    the statistics do not count (a title-only word, a stop-word, a digit run), as a word seen
    nowhere: weighing it high keeps a record lacking it from reaching full evidence."""
    query_terms = list(query_terms)
    words = sorted({w.lower() for t in query_terms for w in t.words} | {term_stats.CORPUS_SIZE_TERM})
    test, values = conn.dialect.one_of("term", words)
    docs = {row[0]: int(row[1]) for row in conn.execute(f"SELECT term, docs FROM term_stats WHERE {test}", (values,))}
    size = docs.pop(term_stats.CORPUS_SIZE_TERM, 0)

    def idf(df: int) -> float:
        return math.log((size + 1) / (df + 1)) + 1.0  # +1: a word in every record still weighs something

    return {t: idf(0 if t.prefix else min(docs.get(w.lower(), 0) for w in t.words)) for t in query_terms}
