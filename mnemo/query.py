"""Our own query parser: user text in, tokens and an FTS5 expression built by code out.

No user text ever reaches FTS5 syntax: `parse` reduces any input to word tokens
(Unicode letters and digits), CJK runs (for the substring path) and, only when asked,
the operators this parser itself recognises. `to_fts5` then quotes every token and
joins them. A natural-language question becomes a ranked OR of its content words
(bm25 orders the hits), never one literal phrase and never an AND of every word.

Stdlib only: search_svc and hooks import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_QUERY_CHARS = 10_000
"""Longer input is cut, never refused."""
MAX_TERMS = 64
"""At most this many distinct terms reach FTS5 (a pasted file must not build a huge OR)."""

# Scripts written without spaces between words: they take the substring path (trigram / LIKE).
# Han (+ radicals, symbols, kana, bopomofo), Hangul, compatibility ideographs, half-width forms,
# Thai, Lao, Khmer, Myanmar. `CJK_CLASS` is a regex class body; schema.py reuses it for GLOB.
CJK_RANGES = (
    ("\u2e80", "\u9fff"),
    ("\uac00", "\ud7af"),
    ("\uf900", "\ufaff"),
    ("\uff66", "\uff9f"),
    ("\u0e00", "\u0eff"),
    ("\u1000", "\u109f"),
    ("\u1780", "\u17ff"),
)
CJK_CLASS = "".join(f"{lo}-{hi}" for lo, hi in CJK_RANGES)
_CJK_RUN = re.compile(f"[{CJK_CLASS}]+")
# A word: letters/digits that are not CJK; underscores and punctuation split words.
_WORD = re.compile(f"[^\\W_{CJK_CLASS}]+")
_PIECE = re.compile(f"([{CJK_CLASS}]+)|([^\\W_{CJK_CLASS}]+)")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\ufeff]")
_PREFIX_END = re.compile(f"[^\\W_{CJK_CLASS}]\\*+$")
# Operator syntax: an optional leading '-', then a "quoted phrase" or a run of non-space.
_CHUNK = re.compile(r'(-?)"([^"]*)"|(\S+)')

_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just let
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves s t d ll m re ve don doesn didn isn
    wasn weren won wouldn shouldn couldn ever also please tell show find give any anything something
    get got
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())


@dataclass(frozen=True)
class Term:
    """One searchable unit: a word, a phrase (several words in order) or a prefix."""

    words: tuple[str, ...]
    prefix: bool = False

    def fts5(self) -> str:
        quoted = '"' + " ".join(self.words).replace('"', '""') + '"'
        return quoted + " *" if self.prefix else quoted


@dataclass(frozen=True)
class ParsedQuery:
    text: str
    """The cleaned input (cut, control characters removed)."""
    tokens: tuple[str, ...] = ()
    """Every word token, lowercased, in order, stop-words included."""
    terms: tuple[Term, ...] = ()
    """Positive terms to match (ranked OR)."""
    excluded: tuple[Term, ...] = ()
    """Terms whose matches are removed (NOT / leading '-')."""
    cjk: tuple[str, ...] = ()
    """Positive CJK runs, matched as substrings."""
    excluded_cjk: tuple[str, ...] = ()
    """Excluded CJK runs."""
    operators: bool = False

    @property
    def content_words(self) -> tuple[str, ...]:
        """Tokens that are not stop-words (may be empty: the caller decides)."""
        return tuple(t for t in self.tokens if t not in STOP_WORDS)

    @property
    def is_empty(self) -> bool:
        """True when nothing positive is left to match."""
        return not self.terms and not self.cjk

    @property
    def has_exclusions(self) -> bool:
        return bool(self.excluded or self.excluded_cjk)

    @property
    def restricting_operators(self) -> tuple[str, ...]:
        """Operators that narrow a match (NOT / -term, a "phrase" of several words), by name.

        A vector neighbour cannot be checked against them, so search_svc answers a query
        using them lexically only. Only a phrase parses to a term of several words.
        """
        found: list[str] = []
        if self.has_exclusions:
            found.append("NOT")
        if any(len(term.words) > 1 for term in (*self.terms, *self.excluded)):
            found.append('"phrase"')
        return tuple(found)

    @property
    def semantic_text(self) -> str:
        """The text to embed: with operators on, their syntax (OR, a trailing *) is not content."""
        if not self.operators:
            return self.text
        words = (word.rstrip("*") for word in self.text.split() if word != "OR")
        return " ".join(word for word in words if word)


def has_cjk(*texts: str | None) -> bool:
    """True when any text contains a character of an unsegmented script (substring path)."""
    return any(text and not text.isascii() and _CJK_RUN.search(text) for text in texts)


def clean_text(text: str) -> str:
    """Cut to MAX_QUERY_CHARS, replace lone surrogates, turn control chars into spaces.

    No case folding or normalization here: FTS5's tokenizer folds query terms exactly as
    it folded the indexed text, which Python's rules would not always match.
    """
    text = (text or "")[:MAX_QUERY_CHARS]
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return _CONTROL.sub(" ", text)


def split_words(text: str) -> tuple[list[str], list[str]]:
    """(word tokens as written, CJK runs) of a piece of text."""
    words: list[str] = []
    runs: list[str] = []
    for match in _PIECE.finditer(text):
        if match.group(1):
            runs.append(match.group(1))
        else:
            words.append(match.group(2))
    return words, runs


@dataclass
class _Builder:
    tokens: list[str] = field(default_factory=list)
    terms: list[Term] = field(default_factory=list)
    excluded: list[Term] = field(default_factory=list)
    cjk: list[str] = field(default_factory=list)
    excluded_cjk: list[str] = field(default_factory=list)

    def add(self, text: str, *, negate: bool = False, phrase: bool = False, prefix: bool = False) -> None:
        words, runs = split_words(text)
        self.tokens.extend(w.lower() for w in words)
        (self.excluded_cjk if negate else self.cjk).extend(runs)
        target = self.excluded if negate else self.terms
        if phrase and len(words) > 1:
            target.append(Term(tuple(words)))
            return
        for position, word in enumerate(words):
            target.append(Term((word,), prefix=prefix and position == len(words) - 1))


def _unique(items: list) -> tuple:
    """Items without repeats; terms differing only in case count once."""
    seen: dict[object, object] = {}
    for item in items:
        key = (tuple(w.lower() for w in item.words), item.prefix) if isinstance(item, Term) else item
        seen.setdefault(key, item)
    return tuple(seen.values())


def _drop_stop_words(terms: list[Term]) -> list[Term]:
    """Single plain words that are stop-words go, unless nothing would be left."""
    kept = [t for t in terms if len(t.words) > 1 or t.prefix or t.words[0].lower() not in STOP_WORDS]
    return kept or terms


def parse(text: str, operators: bool = False) -> ParsedQuery:
    """Split text into tokens and terms. Never raises, whatever the input."""
    cleaned = clean_text(text)
    builder = _Builder()
    if operators:
        _parse_operators(cleaned, builder)
    else:
        builder.add(cleaned)
    return ParsedQuery(
        text=cleaned,
        tokens=tuple(builder.tokens),
        terms=_unique(_drop_stop_words(builder.terms))[:MAX_TERMS],
        excluded=_unique(builder.excluded)[:MAX_TERMS],
        cjk=_unique(builder.cjk)[:MAX_TERMS],
        excluded_cjk=_unique(builder.excluded_cjk)[:MAX_TERMS],
        operators=operators,
    )


def _parse_operators(text: str, builder: _Builder) -> None:
    """OR (a separator: terms are ORed anyway), NOT / leading '-', "phrases", prefix*."""
    negate_next = False
    for match in _CHUNK.finditer(text):
        dash, phrase, chunk = match.group(1), match.group(2), match.group(3)
        if phrase is not None:
            builder.add(phrase, negate=negate_next or dash == "-", phrase=True)
            negate_next = False
            continue
        if chunk == "OR":
            continue
        if chunk == "NOT":
            negate_next = True
            continue
        negate = negate_next or (chunk.startswith("-") and len(chunk) > 1)
        body = chunk[1:] if chunk.startswith("-") else chunk
        builder.add(body, negate=negate, prefix=bool(_PREFIX_END.search(body)))
        negate_next = False


def to_fts5(parsed: ParsedQuery) -> str | None:
    """The FTS5 MATCH expression for the positive word terms, or None when there are none.

    Terms are ORed (bm25 ranks rows matching more and rarer terms first); excluded terms
    follow a NOT. Every token is double-quoted, so no input can become syntax.
    """
    if not parsed.terms:
        return None
    positive = " OR ".join(term.fts5() for term in parsed.terms)
    if not parsed.excluded:
        return positive
    return f"({positive}) NOT ({exclusion_fts5(parsed)})"


def exclusion_fts5(parsed: ParsedQuery) -> str | None:
    """An FTS5 expression matching any excluded term (None when nothing is excluded)."""
    if not parsed.excluded:
        return None
    return " OR ".join(term.fts5() for term in parsed.excluded)


def trigram_fts5(run: str) -> str:
    """A trigram-table expression matching `run` as a substring (needs >= 3 characters)."""
    return '"' + run.replace('"', '""') + '"'


def like_pattern(fragment: str) -> str:
    """A LIKE pattern matching `fragment` literally anywhere (use with ESCAPE '\\')."""
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
