"""Input rules of the store. Each failure names the field and the rule (InvalidArgument)."""

from __future__ import annotations

import json
from collections.abc import Sequence, Sized

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from mnemo.errors import InvalidArgument
from mnemo.timefmt import check_epoch
from mnemo.v1 import common_pb2
from mnemo.vocab import KIND_NAMES, PROJECT_MAX_BYTES, SESSION_ID_MAX_CHARS, TYPE_NAME_RE

MAX_ID_CHARS = SESSION_ID_MAX_CHARS  # every key the store takes (external ids too) has the session id's bound
MAX_TEXT_CHARS = 100_000
MAX_PROMPT_CHARS = 10_000
MAX_LIST_ITEMS = 200
MAX_WORK_STATE_BYTES = 64 * 1024
MAX_CURSOR_STATE_BYTES = 1024 * 1024
PRIMING_STATES = ("unprimed", "priming", "primed", "stale", "failed")
SESSION_END_STATES = ("completed", "failed")
_INTEGER_TYPES = frozenset({FieldDescriptor.CPPTYPE_INT32, FieldDescriptor.CPPTYPE_INT64,
                            FieldDescriptor.CPPTYPE_UINT32, FieldDescriptor.CPPTYPE_UINT64})


def required(field: str, value: str) -> str:
    if not value or not value.strip():
        raise InvalidArgument(field, "required")
    return value


def identifier(field: str, value: str, *, needed: bool = True) -> str:
    """A session id or similar key: required (unless not needed), at most 256 characters."""
    if needed:
        required(field, value)
    if len(value) > MAX_ID_CHARS:
        raise InvalidArgument(field, f"at most {MAX_ID_CHARS} characters")
    return value


def project(field: str, value: str, *, needed: bool = True) -> str:
    if needed:
        required(field, value)
    if len(value.encode("utf-8", "surrogatepass")) > PROJECT_MAX_BYTES:
        raise InvalidArgument(field, f"at most {PROJECT_MAX_BYTES} bytes")
    return value


def max_chars(field: str, value: str, limit: int) -> str:
    if len(value) > limit:
        raise InvalidArgument(field, f"at most {limit:,} characters")
    return value


def epoch(field: str, value: int) -> int:
    """An epoch-ms field: within the instants an ISO date can write (0 = unset, the caller's default)."""
    return check_epoch(field, value)


def epochs(message: Message, path: str = "") -> None:
    """Every epoch-ms field of a request (any integer field named `*epoch`, nested and repeated
    ones too) within check_epoch's range, checked once where requests enter the store: a
    value no date can write (2^63-1, year 10000) is the caller's error, never an INTERNAL later."""
    for field, value in message.ListFields():
        where = f"{path}{field.name}"
        items = list(enumerate(value)) if field.is_repeated else [(None, value)]
        for i, item in items:
            name = where if i is None else f"{where}[{i}]"
            if isinstance(item, Message):  # maps of scalars carry no epochs
                epochs(item, f"{name}.")
            elif field.name.endswith("epoch") and field.cpp_type in _INTEGER_TYPES:
                check_epoch(name, item)


def non_negative(field: str, value: int) -> int:
    if value < 0:
        raise InvalidArgument(field, "must not be negative")
    return value


def count(field: str, items: Sized, limit: int, *, needed: bool = True) -> None:
    if needed and not items:
        raise InvalidArgument(field, "at least one item is required")
    if len(items) > limit:
        raise InvalidArgument(field, f"at most {limit:,} items per request")


def bounded(field: str, value: int, default: int, maximum: int, minimum: int = 0) -> int:
    """A count such as a limit: 0 means the default; outside [minimum, maximum] is refused."""
    if value == 0:
        return default
    if value < minimum or value > maximum:
        raise InvalidArgument(field, f"must be between {minimum} and {maximum}")
    return value


def obs_type(field: str, value: str) -> str:
    required(field, value)
    if not TYPE_NAME_RE.fullmatch(value):
        raise InvalidArgument(field, "lowercase letters, digits, '_' or '-', at most 32 characters "
                                     "(e.g. decision, bugfix, feature, refactor, discovery, change)")
    return value


def json_text(field: str, value: str, limit: int) -> str:
    if len(value.encode("utf-8")) > limit:
        raise InvalidArgument(field, f"at most {limit:,} bytes")
    try:
        json.loads(value)
    except ValueError:
        raise InvalidArgument(field, "must be valid JSON text") from None
    return value


def one_of(field: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise InvalidArgument(field, f"must be one of {', '.join(allowed)}")
    return value


def check_page(page: common_pb2.Page, default: int = 20, maximum: int = 500) -> tuple[int, int]:
    limit = bounded("page.limit", page.limit, default, maximum, minimum=1)
    non_negative("page.offset", page.offset)
    return limit, page.offset


def check_refs(refs: Sequence[common_pb2.Ref], limit: int) -> list[tuple[int, int]]:
    count("refs", refs, limit)
    out = []
    for i, ref in enumerate(refs):
        if ref.kind not in KIND_NAMES:
            raise InvalidArgument(
                f"refs[{i}].kind", "must be DOC_KIND_OBSERVATION, DOC_KIND_SUMMARY or DOC_KIND_PROMPT"
            )
        if ref.id <= 0:
            raise InvalidArgument(f"refs[{i}].id", "must be a positive row id")
        out.append((ref.kind, ref.id))
    return list(dict.fromkeys(out))
