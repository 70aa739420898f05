"""Checks of the corpus tools' arguments: the MCP schemas' bounds, again, and the filter to store.

Every refusal is InvalidArgument naming the field, so a client that skips the gateway
gets the answers the gateway would give.
"""

from __future__ import annotations

from collections.abc import Iterable

from mnemo.errors import InvalidArgument
from mnemo.timefmt import parse_instant
from mnemo.v1 import common_pb2, search_pb2, store_pb2
from mnemo.vocab import (
    CORPUS_FILTER_VALUE_MAX_CHARS,
    CORPUS_FILTER_VALUES_MAX,
    CORPUS_LIMIT_DEFAULT,
    CORPUS_LIMIT_MAX,
    CORPUS_NAME_PATTERN,
    CORPUS_NAME_RE,
    CORPUS_PASSAGES_DEFAULT,
    CORPUS_PASSAGES_MAX,
    CORPUS_QUESTION_MAX_CHARS,
    OBSERVATION_TYPES,
    PROJECT_MAX_BYTES,
    SEARCH_QUERY_MAX_CHARS,
    TYPE_NAME_RE,
)


def validate_name(name: str) -> str:
    """The corpus name, or InvalidArgument. It is only ever a key, never a path."""
    if not CORPUS_NAME_RE.fullmatch(name or ""):
        raise InvalidArgument("name", f"must match {CORPUS_NAME_PATTERN} (letters, digits, dot, "
                                      "underscore, hyphen; 1-64 characters)")
    return name


def bounded_text(value: str, field_name: str, max_chars: int) -> str:
    """The value stripped, or InvalidArgument when it is longer than `max_chars`."""
    value = (value or "").strip()
    if len(value) > max_chars:
        raise InvalidArgument(field_name, f"at most {max_chars:,} characters (got {len(value):,})")
    return value


def _values(items: Iterable[str], field_name: str) -> list[str]:
    """A repeated filter field: comma-separated entries split, blanks dropped, order kept, deduped."""
    out: list[str] = []
    for item in items:
        for part in str(item).split(","):
            part = part.strip()
            if not part:
                continue
            if len(part) > CORPUS_FILTER_VALUE_MAX_CHARS:
                raise InvalidArgument(field_name, f"each value at most {CORPUS_FILTER_VALUE_MAX_CHARS} characters")
            if part not in out:
                out.append(part)
    if len(out) > CORPUS_FILTER_VALUES_MAX:
        raise InvalidArgument(field_name, f"at most {CORPUS_FILTER_VALUES_MAX} values")
    return out


def _types(given: store_pb2.CorpusFilter) -> list[str]:
    types = [t.lower() for t in _values(given.types, "types")]
    # Imports may carry types beyond the usual nine, so any well-formed type is accepted.
    malformed = [t for t in types if not TYPE_NAME_RE.fullmatch(t)]
    if malformed:
        raise InvalidArgument("types", f"malformed type(s) {', '.join(malformed)}; types are lower-case "
                                       f"words such as {', '.join(OBSERVATION_TYPES)}")
    return types


def _date_span(req: search_pb2.BuildCorpusRequest) -> tuple[int, int]:
    """(start, end) epoch ms: the ISO strings when given, else the filter's own epochs."""
    start, end = req.filter.date_start_epoch, req.filter.date_end_epoch
    if req.date_start.strip():
        start = parse_instant(req.date_start, "dateStart")
    if req.date_end.strip():
        end = parse_instant(req.date_end, "dateEnd", end_of_day=True)
    if start < 0 or end < 0:
        raise InvalidArgument("dateStart" if start < 0 else "dateEnd", "must not be before 1970")
    if start and end and start > end:
        raise InvalidArgument("dateEnd", "must not be before dateStart")
    return start, end


def normalize_filter(req: search_pb2.BuildCorpusRequest) -> store_pb2.CorpusFilter:
    """The filter to store: every field checked, dates converted, the limit defaulted."""
    given = req.filter
    types = _types(given)
    if given.limit < 0 or given.limit > CORPUS_LIMIT_MAX:
        raise InvalidArgument("limit", f"must be between 1 and {CORPUS_LIMIT_MAX:,} (default {CORPUS_LIMIT_DEFAULT})")
    start, end = _date_span(req)
    return store_pb2.CorpusFilter(
        # Counted in characters here, as this check always has; the store bounds the bytes.
        project=bounded_text(given.project, "project", PROJECT_MAX_BYTES),
        types=types,
        concepts=_values(given.concepts, "concepts"),
        files=_values(given.files, "files"),
        query=bounded_text(given.query, "query", SEARCH_QUERY_MAX_CHARS),
        date_start_epoch=start,
        date_end_epoch=end,
        limit=given.limit or CORPUS_LIMIT_DEFAULT,
    )


def store_filters(flt: store_pb2.CorpusFilter) -> common_pb2.Filters:
    """The store's Filters for a corpus filter: observations only, every field carried over."""
    return common_pb2.Filters(
        project=flt.project,
        kinds=[common_pb2.DOC_KIND_OBSERVATION],
        obs_types=list(flt.types),
        concepts=list(flt.concepts),
        files=list(flt.files),
        date_start_epoch=flt.date_start_epoch,
        date_end_epoch=flt.date_end_epoch,
    )


def validate_question(question: str) -> str:
    question = (question or "").strip()
    if not question:
        raise InvalidArgument("question", "required: the question to answer from the corpus")
    if len(question) > CORPUS_QUESTION_MAX_CHARS:
        raise InvalidArgument("question", f"at most {CORPUS_QUESTION_MAX_CHARS:,} characters "
                                          f"(got {len(question):,})")
    return question


def passage_limit(limit: int) -> int:
    """How many passages query_corpus retrieves: 0 means the default."""
    if limit < 0 or limit > CORPUS_PASSAGES_MAX:
        raise InvalidArgument("limit", f"must be between 1 and {CORPUS_PASSAGES_MAX} "
                                       f"(default {CORPUS_PASSAGES_DEFAULT})")
    return limit or CORPUS_PASSAGES_DEFAULT
