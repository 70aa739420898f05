"""Specificity: how much a record says beyond small talk, from its words' document frequencies.

A record's specificity is the mean inverse document frequency, log(N / df), of its distinct
words, where df counts the store's records (observations and prompts) holding the word and N
counts those records. "ok, thanks, will do" scores low; "grpcio 1.67 segfaults on
musl" or "fixed the NPE in TokenRefresher" scores high. search_svc ranks the more specific of
two otherwise equal candidates higher (docs/search.md, "records that say something").

The counts live in the store's `term_stats` table, kept by triggers in the writer's transaction on
every insert, edit and delete (migration 9 in store_svc/migrations/: SQLite's triggers call
terms_json as `mnemo_terms`, PostgreSQL's twin splits words in SQL the same way). The row with
the empty term holds N: no word is empty.

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

from mnemo.vocab import STOP_WORDS

K = TypeVar("K", bound=Hashable)
TERMS_CHARS = 1000
CORPUS_SIZE_TERM = ""  # term_stats row whose `docs` is the number of records counted
_WORD = re.compile(r"[^\W_]+")
# _WORD on ASCII text (lowercased): its letters and digits are these. About 20% faster per text;
# a hybrid search splits 100-200 index rows' heads.
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def terms(text: str) -> set[str]:
    """The distinct words of a record that count for its specificity. Runs for every index row a
    search returns: one regex pass and set operations."""
    text = text[:TERMS_CHARS].lower()
    found = set((_ASCII_WORD if text.isascii() else _WORD).findall(text)) - STOP_WORDS
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


# The text whose words count, per table ({r}: the row's alias): an observation's narrative, else
# its text; a prompt's text. Session summaries are not counted (their specificity is unknown).
BODIES = {
    "observations": "coalesce(nullif({r}.narrative, ''), {r}.text, '')",
    "user_prompts": "{r}.prompt_text",
}
