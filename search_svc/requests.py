"""Validation of the legacy search tools' requests, and the filters they turn into.

The bounds are the MCP schemas' bounds, checked again here so a client that skips the
gateway gets the same answers. Every refusal is InvalidArgument naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from google.protobuf.message import Message

from mnemo.errors import InvalidArgument
from mnemo.timefmt import iso_from_ms, parse_instant
from mnemo.v1 import common_pb2, search_pb2
from mnemo.vocab import PROJECT_MAX_BYTES, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SEARCH_QUERY_MAX_CHARS
from search_svc.render import inline

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
    order: common_pb2.Order
    operators: bool


def _split_list(values: Iterable[str]) -> list[str]:
    """Repeated string fields also accept comma lists ("bugfix,feature"), as the MCP tools do."""
    out: list[str] = []
    for value in values:
        out += [part.strip() for part in value.split(",") if part.strip()]
    return out


def check_query(query: str, field: str = "query") -> str:
    if len(query) > SEARCH_QUERY_MAX_CHARS:
        raise InvalidArgument(field, f"at most {SEARCH_QUERY_MAX_CHARS:,} characters (got {len(query):,}); "
                              "shorten it")
    return query


def check_project(project: str, field: str = "project") -> str:
    if len(project.encode("utf-8")) > PROJECT_MAX_BYTES:
        raise InvalidArgument(field, f"at most {PROJECT_MAX_BYTES} UTF-8 bytes")
    return project


def check_limit(limit: int, *, default: int = SEARCH_LIMIT_DEFAULT, maximum: int = SEARCH_LIMIT_MAX) -> int:
    if limit == 0:
        return default
    if not 1 <= limit <= maximum:
        raise InvalidArgument("limit", f"must be between 1 and {maximum} (got {limit})")
    return limit


def optional_bounded(req: Message, name: str, *, default: int, maximum: int, field: str = "") -> int:
    """An optional integer field (proto3 `optional`): `default` when unset, else within 0..maximum."""
    if not req.HasField(name):
        return default
    value: int = getattr(req, name)
    if not 0 <= value <= maximum:
        raise InvalidArgument(field or name, f"must be between 0 and {maximum} (got {value})")
    return value


def check_offset(offset: int) -> int:
    if offset < 0:
        raise InvalidArgument("offset", f"must be 0 or more (got {offset})")
    return offset


def parse_order(text: str, allowed: Mapping[str, common_pb2.Order] = ORDERS,
                field: str = "order_by") -> common_pb2.Order:
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
            raise InvalidArgument("categories", f"each must be one of {', '.join(CATEGORY_KINDS)} "
                                                f"(got {category[:40]!r})")
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
