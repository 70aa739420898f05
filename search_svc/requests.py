"""Validation of the legacy search tools' requests, and the filters they turn into.

The bounds are the MCP schemas' bounds, checked again here so a client that skips the
gateway gets the same answers. Every refusal is InvalidArgument naming the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.errors import InvalidArgument
from mnemo.timefmt import iso_from_ms, parse_instant
from mnemo.v1 import common_pb2, search_pb2
from search_svc.render import inline

MAX_QUERY_CHARS = 10_000
DEFAULT_LIMIT, MAX_LIMIT = 20, 100
MAX_DEPTH, DEFAULT_DEPTH = 20, 3
MAX_OBSERVATION_IDS = 50

CATEGORY_KINDS = {
    "observations": common_pb2.DOC_KIND_OBSERVATION,
    "sessions": common_pb2.DOC_KIND_SUMMARY,
    "prompts": common_pb2.DOC_KIND_PROMPT,
}
ORDERS = {"relevance": common_pb2.ORDER_RELEVANCE, "date_desc": common_pb2.ORDER_DATE_DESC,
          "date_asc": common_pb2.ORDER_DATE_ASC}


@dataclass(frozen=True)
class SearchArgs:
    query: str
    filters: common_pb2.Filters
    limit: int
    offset: int
    order: int
    operators: bool


def _split_list(values) -> list[str]:
    """Repeated string fields also accept comma lists ("bugfix,feature"), as the MCP tools do."""
    out: list[str] = []
    for value in values:
        out += [part.strip() for part in value.split(",") if part.strip()]
    return out


def check_query(query: str, field: str = "query") -> str:
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(field, f"at most {MAX_QUERY_CHARS:,} characters (got {len(query):,}); shorten it")
    return query


def check_limit(limit: int, *, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    if limit == 0:
        return default
    if not 1 <= limit <= maximum:
        raise InvalidArgument("limit", f"must be between 1 and {maximum} (got {limit})")
    return limit


def check_offset(offset: int) -> int:
    if offset < 0:
        raise InvalidArgument("offset", f"must be 0 or more (got {offset})")
    return offset


def parse_order(text: str, allowed: dict[str, int] = ORDERS, field: str = "order_by") -> int:
    key = text.strip().lower() or next(iter(allowed))
    if key not in allowed:
        raise InvalidArgument(field, f"must be one of {', '.join(allowed)} (got {text[:40]!r})")
    return allowed[key]


def date_range(start: str, end: str) -> tuple[int, int]:
    start_ms = parse_instant(start, "date_start") if start.strip() else 0
    end_ms = parse_instant(end, "date_end", end_of_day=True) if end.strip() else 0
    if start_ms and end_ms and start_ms > end_ms:
        raise InvalidArgument("date_start", "must not be after date_end")
    return start_ms, end_ms


def search_args(req: search_pb2.SearchRequest) -> SearchArgs:
    kinds = []
    for category in _split_list(req.categories):
        kind = CATEGORY_KINDS.get(category.lower())
        if kind is None:
            raise InvalidArgument("categories", f"each must be one of {', '.join(CATEGORY_KINDS)} (got {category[:40]!r})")
        if kind not in kinds:
            kinds.append(kind)
    start_ms, end_ms = date_range(req.date_start, req.date_end)
    filters = common_pb2.Filters(
        project=req.project.strip(), platform_source=req.platform_source.strip(), kinds=kinds,
        obs_types=_split_list(req.obs_types), concepts=[c.strip() for c in req.concepts if c.strip()],
        files=[f for f in req.files if f.strip()], date_start_epoch=start_ms, date_end_epoch=end_ms,
    )
    return SearchArgs(query=check_query(req.query), filters=filters, limit=check_limit(req.limit),
                      offset=check_offset(req.offset), order=parse_order(req.order_by), operators=req.operators)


def describe_filters(filters: common_pb2.Filters) -> str:
    """A short, human-readable list of the filters in force (for reply headers)."""
    parts = []
    if filters.project:
        parts.append(f"project={inline(filters.project, 80)}")
    if filters.platform_source:
        parts.append(f"platform={inline(filters.platform_source, 40)}")
    if filters.kinds:
        names = {v: k for k, v in CATEGORY_KINDS.items()}
        parts.append("categories=" + ",".join(names[k] for k in filters.kinds))
    for label, values in (("types", filters.obs_types), ("concepts", filters.concepts), ("files", filters.files)):
        if values:
            parts.append(f"{label}=" + ",".join(inline(v, 80) for v in values))
    if filters.date_start_epoch:
        parts.append(f"from={iso_from_ms(filters.date_start_epoch)}")
    if filters.date_end_epoch:
        parts.append(f"to={iso_from_ms(filters.date_end_epoch)}")
    return " · ".join(parts)


# -- operator syntax -----------------------------------------------------------------------
_NOT_WORD = re.compile(r"(?:^|\s)NOT\s+\S")
_NEGATED = re.compile(r"(?:^|\s)-[^\s-]")
_PHRASE = re.compile(r'"[^"]+"')


def restricting_operators(query: str) -> list[str]:
    """Operators that narrow a match (NOT, -term, "phrase"): a vector neighbour cannot be
    checked against them, so a query using them is answered lexically only."""
    found = []
    if _NOT_WORD.search(query) or _NEGATED.search(query):
        found.append("NOT")
    if _PHRASE.search(query):
        found.append('"phrase"')
    return found


def semantic_text(query: str, operators: bool) -> str:
    """The text to embed: with operators on, their syntax (OR, trailing *) is not content."""
    if not operators:
        return query
    words = [w.rstrip("*") for w in query.split() if w != "OR"]
    return " ".join(w for w in words if w)
