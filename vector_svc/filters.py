"""Requests to the vector index, checked: limits, query text, and Filters as a Chroma `where`."""

from __future__ import annotations

from mnemo.errors import InvalidArgument
from mnemo.v1 import common_pb2
from mnemo.vocab import KIND_NAMES

MAX_QUERY_TEXT = 10_000
CANNOT_FILTER = "cannot be applied by the vector index; filter through the store"


def validate_limit(value: int, default: int, maximum: int, field: str) -> int:
    if value < 0 or value > maximum:
        raise InvalidArgument(field, f"must be between 1 and {maximum} (0 = default {default})")
    return value or default


def validate_text(text: str, field: str) -> str:
    if len(text) > MAX_QUERY_TEXT:
        raise InvalidArgument(field, f"at most {MAX_QUERY_TEXT:,} characters")
    if not text.strip():
        raise InvalidArgument(field, "required: give the text to search for")
    return text


def build_where(filters: common_pb2.Filters) -> dict | None:
    """The Chroma `where` of a Filters message; refuses the filters Chroma cannot apply."""
    if filters.concepts:
        raise InvalidArgument("filters.concepts", CANNOT_FILTER)
    if filters.files:
        raise InvalidArgument("filters.files", CANNOT_FILTER)
    clauses: list[dict] = []
    if filters.project:
        clauses.append({"project": filters.project})
    if filters.platform_source:
        clauses.append({"platform_source": filters.platform_source})
    clauses += _kind_clauses(filters)
    clauses += _date_clauses(filters)
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _kind_clauses(filters: common_pb2.Filters) -> list[dict]:
    clauses: list[dict] = []
    kinds = list(filters.kinds)
    unknown = [k for k in kinds if k != common_pb2.DOC_KIND_UNSPECIFIED and k not in KIND_NAMES]
    if unknown:
        raise InvalidArgument("filters.kinds", f"unknown kind {unknown[0]}")
    if kinds and common_pb2.DOC_KIND_UNSPECIFIED not in kinds:  # UNSPECIFIED means every kind
        names = sorted({KIND_NAMES[k] for k in kinds})
        clauses.append({"kind": names[0]} if len(names) == 1 else {"kind": {"$in": names}})
    if filters.obs_types:
        clauses.append({"kind": "observation"})  # types exist only on observations
        clauses.append({"type": {"$in": sorted(set(filters.obs_types))}})
    return clauses


def _date_clauses(filters: common_pb2.Filters) -> list[dict]:
    clauses: list[dict] = []
    start, end = filters.date_start_epoch, filters.date_end_epoch
    if start < 0 or end < 0:
        raise InvalidArgument("filters.date_start_epoch", "epoch milliseconds cannot be negative")
    if start and end and start > end:
        raise InvalidArgument("filters.date_start_epoch", "must not be after date_end_epoch")
    if start:
        clauses.append({"created_at_epoch": {"$gte": int(start)}})
    if end:
        clauses.append({"created_at_epoch": {"$lte": int(end)}})
    return clauses
