"""Specificity: how much a record says beyond small talk, from its words' document frequencies.

A record's specificity is the mean inverse document frequency, log(N / df), of its distinct
words, where df counts the store's records (observations and prompts) holding the word and N
counts those records. "ok, thanks, will do" scores low; "grpcio 1.67 segfaults on
musl" or "fixed the NPE in TokenRefresher" scores high. search_svc ranks the more specific of
two otherwise equal candidates higher (docs/search.md, "records that say something").

The counts live in the store's `term_stats` table, kept by triggers in the writer's transaction on
every insert, edit and delete (store_svc.schema migration 9; the PostgreSQL twin splits words in
SQL the same way). The row with the empty term holds N: no word is empty.

Words are runs of letters and digits, lowercased, without mnemo's stop-words, runs of digits
and one-character words. Only the first TERMS_CHARS characters of a record count: every index row
a search returns is split again (docs/search.md has what that costs), and a pasted log must not
make a write slow.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

from mnemo.query import STOP_WORDS

K = TypeVar("K", bound=Hashable)
TERMS_CHARS = 1000
CORPUS_SIZE_TERM = ""  # term_stats row whose `docs` is the number of records counted
_WORD = re.compile(r"[^\W_]+")


def terms(text: str) -> set[str]:
    """The distinct words of a record that count for its specificity. Runs for every index row a
    search returns: one regex pass and set operations."""
    found = set(_WORD.findall(text[:TERMS_CHARS].lower())) - STOP_WORDS
    return {w for w in found if len(w) > 1 and not w.isdigit()}


def terms_json(text: str | None) -> str:
    """terms() as a sorted JSON array: the SQLite function `mnemo_terms` the triggers call."""
    return json.dumps(sorted(terms(text or "")))


def specificities(words: Mapping[K, Iterable[str]], docs: Mapping[str, int], corpus_size: int) -> dict[K, float]:
    """Each record's mean log(N / df) over its words the store has counted (`words`: record -> its
    terms(); `docs`: word -> df); 0.0 for a record with none of them (unknown)."""
    if corpus_size <= 0:
        return {key: 0.0 for key in words}
    idf = {w: math.log(corpus_size / n) for w, n in docs.items() if n > 0}
    out = {}
    for key, record_words in words.items():
        known = [idf[w] for w in record_words if w in idf]
        out[key] = sum(known) / len(known) if known else 0.0
    return out


def _stop_words_sql() -> str:
    """The stop-words as a SQL list of literals (fixed words from code, never user text)."""
    return ", ".join("'" + word.replace("'", "''") + "'" for word in sorted(STOP_WORDS))


# The text whose words count, per table ({r}: the row's alias): an observation's narrative, else
# its text; a prompt's text. Session summaries are not counted (their specificity is unknown).
BODIES = {
    "observations": "coalesce(nullif({r}.narrative, ''), {r}.text, '')",
    "user_prompts": "{r}.prompt_text",
}
_BODY_COLUMNS = {"observations": "narrative, text", "user_prompts": "prompt_text"}


def _backfill(words_of: str, word: str) -> str:
    """Count the rows already there (`words_of`: SQL for the word rows of `b.body`; `word`: a word)."""
    bodies = " UNION ALL ".join(f"SELECT {body.format(r='x')} AS body FROM {table} x" for table, body in BODIES.items())
    total = " + ".join(f"(SELECT count(*) FROM {table})" for table in BODIES)
    return f"""INSERT INTO term_stats(term, docs) SELECT {word}, count(*) FROM ({bodies}) b, {words_of} GROUP BY {word};
INSERT INTO term_stats(term, docs) SELECT '{CORPUS_SIZE_TERM}', {total};"""


def _sqlite_count(body: str, delta: int) -> str:
    """SQLite trigger statements adding (1) or removing (-1) one record's words and the record."""
    each = f"json_each(mnemo_terms({body}))"
    if delta > 0:
        return f"""INSERT INTO term_stats(term, docs) SELECT value, 1 FROM {each} WHERE true
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;
  INSERT INTO term_stats(term, docs) VALUES ('{CORPUS_SIZE_TERM}', 1)
    ON CONFLICT(term) DO UPDATE SET docs = docs + 1;"""
    return f"""UPDATE term_stats SET docs = docs - 1
    WHERE term = '{CORPUS_SIZE_TERM}' OR term IN (SELECT value FROM {each});
  DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT value FROM {each});"""


def sqlite_migration() -> str:
    """Migration 9 on SQLite: the table, its backfill and the triggers. `mnemo_terms` is terms_json,
    registered on every connection (store_svc.schema.connect)."""
    triggers = []
    for table, body in BODIES.items():
        old, new = body.format(r="old"), body.format(r="new")
        triggers.append(f"""CREATE TRIGGER {table}_terms_ai AFTER INSERT ON {table} BEGIN
  {_sqlite_count(new, 1)}
END;
CREATE TRIGGER {table}_terms_ad AFTER DELETE ON {table} BEGIN
  {_sqlite_count(old, -1)}
END;
CREATE TRIGGER {table}_terms_au AFTER UPDATE OF {_BODY_COLUMNS[table]} ON {table} WHEN {old} IS NOT {new} BEGIN
  {_sqlite_count(old, -1)}
  {_sqlite_count(new, 1)}
END;""")
    return f"""
CREATE TABLE term_stats (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
{_backfill("json_each(mnemo_terms(b.body)) j", "j.value")}
{chr(10).join(triggers)}
"""


def pg_migration() -> str:
    """Migration 9 on PostgreSQL: terms() written in SQL (`mnemo_terms`), the table, its backfill,
    and one trigger function for both tables."""
    per_table = "\n  ".join(
        f"""{'IF' if i == 0 else 'ELSIF'} TG_TABLE_NAME = '{table}' THEN
    IF TG_OP <> 'INSERT' THEN old_body := {body.format(r='OLD')}; END IF;
    IF TG_OP <> 'DELETE' THEN new_body := {body.format(r='NEW')}; END IF;"""
        for i, (table, body) in enumerate(BODIES.items()))
    triggers = "\n".join(
        f"CREATE TRIGGER {table}_terms AFTER INSERT OR DELETE OR UPDATE OF {_BODY_COLUMNS[table]} ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION mnemo_term_stats();" for table in BODIES)
    size = f"'{CORPUS_SIZE_TERM}'"
    return f"""
CREATE TABLE term_stats (term TEXT PRIMARY KEY, docs BIGINT NOT NULL);
CREATE FUNCTION mnemo_terms(body text) RETURNS SETOF text LANGUAGE sql IMMUTABLE AS $$
  SELECT DISTINCT w FROM regexp_split_to_table(lower(left(coalesce(body, ''), {TERMS_CHARS})), '[^[:alnum:]]+') AS w
  WHERE length(w) > 1 AND w !~ '^[0-9]+$' AND w NOT IN ({_stop_words_sql()})
$$;
{_backfill("mnemo_terms(b.body) AS w", "w")}
CREATE FUNCTION mnemo_term_stats() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_body text;
  new_body text;
BEGIN
  {per_table}
  END IF;
  IF TG_OP = 'UPDATE' AND old_body IS NOT DISTINCT FROM new_body THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    UPDATE term_stats SET docs = docs - 1 WHERE term = {size} OR term IN (SELECT mnemo_terms(old_body));
    DELETE FROM term_stats WHERE docs <= 0 AND term IN (SELECT mnemo_terms(old_body));
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO term_stats(term, docs) SELECT w, 1 FROM mnemo_terms(new_body) AS w
      ON CONFLICT (term) DO UPDATE SET docs = term_stats.docs + 1;
    INSERT INTO term_stats(term, docs) VALUES ({size}, 1) ON CONFLICT (term) DO UPDATE SET docs = term_stats.docs + 1;
  END IF;
  RETURN NULL;
END $$;
{triggers}
"""
