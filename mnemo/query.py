"""Our own query parser: user text in, tokens and an FTS5 expression built by code out.

No user text ever reaches FTS5 syntax: `parse` reduces any input to word tokens
(Unicode letters and digits), CJK runs (for the substring path) and, only when asked,
the operators this parser itself recognises. `to_fts5` then quotes every token and
joins them. A natural-language question becomes a ranked OR of its content words
(bm25 orders the hits), never one literal phrase and never an AND of every word.

Characters that are FTS5 operators elsewhere are read for what the user meant, never
passed on: in plain text too, `Baz*` is a prefix match built here, and an uppercase
`NOT` / `OR` / `AND` is a word to find ("OR gate"), not a stop-word. With operators on,
`title:word` restricts a term to a column named in COLUMNS (the store maps the name to
each table's own column).

Stdlib only: search_svc and hooks import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mnemo.vocab import OBSERVATION_TEXT_FIELDS, STOP_WORDS, SUMMARY_FIELDS

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
# A word ending in '*' (closing punctuation may follow: "(Baz*)"): a prefix match.
_PREFIX_END = re.compile(f"[^\\W_{CJK_CLASS}]\\*+[^\\w*]*$")
# Operator syntax: an optional leading '-', then a [column:]"quoted phrase" or a run of non-space.
_CHUNK = re.compile(r'(-?)(?:([A-Za-z_]+):)?"([^"]*)"|(\S+)')
_COLUMN_CHUNK = re.compile(r"([A-Za-z_]+):(.*\S.*)", re.DOTALL)
# An identifier as code writes it: word parts joined by `_`, `.`, `/` or `::`, no spaces (a hyphen is prose).
_IDENTIFIER = re.compile(r"[^\W_]+(?:(?:_+|\.|/|::)[^\W_]+)+|_+[^\W_]+(?:_+[^\W_]+)*")
_EDGE_PUNCTUATION = "`'\"()[]{}<>,;:!?*"
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_ASCII_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")  # a name as code writes it (both backends split it alike)
LONG_IDENTIFIER = 8
"""camelCase words this long or longer match as prefixes (_long_camel)."""

COLUMNS = frozenset({
    *OBSERVATION_TEXT_FIELDS,  # observations
    *SUMMARY_FIELDS,  # session summaries
    "prompt",  # user prompts
})
"""Column names a term may be restricted to (`title:word`); `title` means each kind's title."""
LITERAL_OPERATOR_WORDS = frozenset({"AND", "OR", "NOT"})
"""Typed in capitals in plain text these are content ("NOT gate"), never stop-words or syntax."""


@dataclass(frozen=True)
class Term:
    """One searchable unit: a word, a phrase (several words in order) or a prefix, in any
    column or only in `column` (a name of COLUMNS)."""

    words: tuple[str, ...]
    prefix: bool = False
    column: str = ""
    joined: bool = False
    """The parts of one identifier as written (`test_login_redirect`, `sessions.py`), in order: it
    ranks the records holding the identifier itself above those holding its parts apart, and
    matches nothing its parts do not (they are terms of their own). It counts in its alternative's
    evidence, so only a record holding the identifier itself is evidence of a match by it."""

    def fts5(self, table_column: str = "") -> str:
        """The quoted term; `table_column` (a name from code, never user text) restricts it."""
        quoted = '"' + " ".join(self.words).replace('"', '""') + '"'
        body = quoted + " *" if self.prefix else quoted
        return f"{{{table_column}}} : {body}" if table_column else body


@dataclass(frozen=True)
class Run:
    """A CJK run, matched as a substring, in any column or only in `column`."""

    text: str
    column: str = ""


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
    cjk: tuple[Run, ...] = ()
    """Positive CJK runs, matched as substrings."""
    excluded_cjk: tuple[Run, ...] = ()
    """Excluded CJK runs."""
    operators: bool = False
    groups: tuple[tuple[Term, ...], ...] = ()
    """The alternatives the user wrote, each the terms of `terms` it holds: `a b OR c` is ((a, b), (c,)),
    a query without OR one group of all its terms. A record holding every term of one group is
    lexical evidence of a match (store_svc.queries.evidence); the FTS expression ORs every term
    anyway, so groups only judge, never match."""
    alternatives: tuple[str, ...] = ()
    """With more than one group, the text of each (as semantic_text reads it), in order: the
    vector leg embeds each alternative on its own, so `a OR b` finds what `a` finds by meaning."""

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
        if any(len(term.words) > 1 and not term.joined for term in (*self.terms, *self.excluded)):
            found.append('"phrase"')
        items: tuple[Term | Run, ...] = (*self.terms, *self.excluded, *self.cjk, *self.excluded_cjk)
        found += sorted({f"{item.column}:" for item in items if item.column})
        return tuple(found)

    @property
    def semantic_text(self) -> str:
        """The text to embed: with operators on, their syntax (OR, AND, column:, a trailing *) is not content."""
        if not self.operators:
            return self.text
        return _semantic_words(self.text.split())


def _semantic_words(chunks: list[str]) -> str:
    """Chunks of operator syntax as text to embed: OR, AND, column: and a trailing * are not content."""
    words = (_strip_column(chunk).rstrip("*") for chunk in chunks if chunk not in ("OR", "AND"))
    return " ".join(word for word in words if word)


def _strip_column(chunk: str) -> str:
    """`title:word` -> `word`; anything else unchanged."""
    match = _COLUMN_CHUNK.fullmatch(chunk)
    return match.group(2) if match and match.group(1).lower() in COLUMNS else chunk


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
    cjk: list[Run] = field(default_factory=list)
    excluded_cjk: list[Run] = field(default_factory=list)
    groups: list[list[Term]] = field(default_factory=lambda: [[]])
    spans: list[list[str]] = field(default_factory=lambda: [[]])
    """The chunks of text each group was read from (groups[i] from spans[i])."""

    def next_group(self) -> None:
        """An OR between two parts: the terms that follow are another alternative."""
        if self.groups[-1]:
            self.groups.append([])
            self.spans.append([])

    def add(self, text: str, *, negate: bool = False, phrase: bool = False, prefix: bool = False,
            column: str = "") -> None:
        words, runs = split_words(text)
        self.tokens.extend(w.lower() for w in words)
        (self.excluded_cjk if negate else self.cjk).extend(Run(run, column) for run in runs)
        if phrase and len(words) > 1:
            added = [Term(tuple(words), column=column)]
        else:
            added = [Term((word,), prefix=(prefix and position == len(words) - 1) or _long_camel(word), column=column)
                     for position, word in enumerate(words)]
        (self.excluded if negate else self.terms).extend(added)
        if not negate:
            self.groups[-1].extend(added)
            self.spans[-1].append(text)
            if not phrase and len(words) > 1 and _IDENTIFIER.fullmatch(text.strip(_EDGE_PUNCTUATION)):
                # `gmail.com`: a record holding "gmail" and "com" apart is not one that holds it
                whole = Term(tuple(words), column=column, joined=True)
                self.terms.append(whole)
                self.groups[-1].append(whole)


def _identity(item: Term | Run) -> object:
    """What makes two terms the same: their words regardless of case, prefix and column."""
    return (tuple(w.lower() for w in item.words), item.prefix, item.column) if isinstance(item, Term) else item


def _long_camel(word: str) -> bool:
    """A camelCase or PascalCase identifier of LONG_IDENTIFIER characters or more: matched as a
    prefix, so `SecureCookie` finds `SecureCookieSession` (the index keeps such a word whole)."""
    return len(word) >= LONG_IDENTIFIER and _ASCII_NAME.fullmatch(word) is not None and _CAMEL.search(word) is not None


def _unique(items: list) -> tuple:
    """Items without repeats; terms differing only in case count once."""
    seen: dict[object, object] = {}
    for item in items:
        seen.setdefault(_identity(item), item)
    return tuple(seen.values())


def _groups(builder: _Builder, terms: tuple[Term, ...]) -> tuple[tuple[tuple[Term, ...], ...], tuple[str, ...]]:
    """(each alternative reduced to the query's final terms (stop-words dropped, repeats once),
    the text of each when there are several); an alternative left with none of the terms (only
    stop-words) is no alternative."""
    final = {_identity(term): term for term in terms}
    reduced = ((tuple({_identity(t): final[_identity(t)] for t in group if _identity(t) in final}.values()), span)
               for group, span in zip(builder.groups, builder.spans, strict=True))
    kept = [(group, _semantic_words(span)) for group, span in reduced if group]
    texts = tuple(text for _, text in kept) if len(kept) > 1 else ()
    return tuple(group for group, _ in kept), texts


def _is_stop_word(term: Term) -> bool:
    """A single plain word on the stop list, unless written as a capitalised operator word."""
    if len(term.words) > 1 or term.prefix or term.column:
        return False
    word = term.words[0]
    return word.lower() in STOP_WORDS and word not in LITERAL_OPERATOR_WORDS


def _drop_stop_words(terms: list[Term]) -> list[Term]:
    """Stop-words go, unless nothing would be left."""
    kept = [t for t in terms if not _is_stop_word(t)]
    return kept or terms


def parse(text: str, operators: bool = False) -> ParsedQuery:
    """Split text into tokens and terms. Never raises, whatever the input."""
    cleaned = clean_text(text)
    builder = _Builder()
    if operators:
        _parse_operators(cleaned, builder)
    else:
        _parse_plain(cleaned, builder)
    terms = _unique(_drop_stop_words(builder.terms))[:MAX_TERMS]
    groups, alternatives = _groups(builder, terms)
    return ParsedQuery(
        text=cleaned,
        tokens=tuple(builder.tokens),
        terms=terms,
        groups=groups,
        alternatives=alternatives,
        excluded=_unique(builder.excluded)[:MAX_TERMS],
        cjk=_unique(builder.cjk)[:MAX_TERMS],
        excluded_cjk=_unique(builder.excluded_cjk)[:MAX_TERMS],
        operators=operators,
    )


def _parse_plain(text: str, builder: _Builder) -> None:
    """Every word is a term; a word typed with a trailing '*' is a prefix match. An OR in capitals
    between two words is still a word to find, and it also separates alternatives (`a OR b`: a
    record holding either is evidence of a match, ParsedQuery.groups)."""
    chunks = text.split()
    for i, chunk in enumerate(chunks):
        if chunk == "OR" and builder.groups[-1] and i + 1 < len(chunks):
            builder.terms.append(Term((chunk,)))  # matched and ranked as before, part of no alternative
            builder.tokens.append(chunk.lower())
            builder.next_group()
            continue
        builder.add(chunk, prefix=bool(_PREFIX_END.search(chunk)))


def _column_of(name: str | None) -> str:
    """The column a `name:` prefix restricts to, or "" when it names none of COLUMNS."""
    return name.lower() if name and name.lower() in COLUMNS else ""


def _parse_operators(text: str, builder: _Builder) -> None:
    """OR and AND (separators: terms are ORed and ranked), NOT / leading '-', [column:]"phrases",
    column:word and prefix*."""
    negate_next = False
    for match in _CHUNK.finditer(text):
        dash, name, phrase, chunk = match.groups()
        if phrase is not None:
            column = _column_of(name)
            if name and not column:
                builder.add(name, negate=negate_next or dash == "-")  # `col:"x"`: an unknown name is a word
            builder.add(phrase, negate=negate_next or dash == "-", phrase=True, column=column)
            negate_next = False
            continue
        if chunk == "OR":
            builder.next_group()
            continue
        if chunk == "AND":
            continue
        if chunk == "NOT":
            negate_next = True
            continue
        negate = negate_next or (chunk.startswith("-") and len(chunk) > 1)
        _add_chunk(builder, chunk[1:] if chunk.startswith("-") else chunk, negate)
        negate_next = False


def _add_chunk(builder: _Builder, body: str, negate: bool) -> None:
    """One unquoted chunk: `column:word`, `word*` or plain words."""
    column_match = _COLUMN_CHUNK.fullmatch(body)
    column = _column_of(column_match.group(1)) if column_match else ""
    if column_match and column:
        body = column_match.group(2)
    builder.add(body, negate=negate, prefix=bool(_PREFIX_END.search(body)), column=column)


ColumnMap = dict[str, str]
"""A name of COLUMNS -> the column of one FTS5 table (names absent: no such column there)."""


def table_column(column: str, columns: ColumnMap | None) -> str | None:
    """The table column a restricted term or run uses ("" when unrestricted, None when the
    table has no such column, so the term cannot match there). `columns` None: same names."""
    if not column:
        return ""
    return column if columns is None else columns.get(column)


def _joined(terms: tuple[Term, ...], columns: ColumnMap | None) -> str | None:
    rendered = [term.fts5(name) for term in terms if (name := table_column(term.column, columns)) is not None]
    return " OR ".join(rendered) or None


def to_fts5(parsed: ParsedQuery, columns: ColumnMap | None = None) -> str | None:
    """The FTS5 MATCH expression for the positive word terms, or None when there are none.

    Terms are ORed (bm25 ranks rows matching more and rarer terms first); excluded terms
    follow a NOT. Every token is double-quoted and every column name comes from `columns`
    (code), so no input can become syntax.
    """
    positive = _joined(parsed.terms, columns)
    if positive is None:
        return None
    excluded = exclusion_fts5(parsed, columns)
    return f"({positive}) NOT ({excluded})" if excluded else positive


def exclusion_fts5(parsed: ParsedQuery, columns: ColumnMap | None = None) -> str | None:
    """An FTS5 expression matching any excluded term (None when nothing is excluded)."""
    return _joined(parsed.excluded, columns)


def trigram_fts5(run: str, table_column: str = "") -> str:
    """A trigram-table expression matching `run` as a substring (needs >= 3 characters)."""
    return Term((run,)).fts5(table_column)


def like_pattern(fragment: str) -> str:
    """A LIKE pattern matching `fragment` literally anywhere (use with ESCAPE '\\')."""
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
