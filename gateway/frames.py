"""The frame guard: every line read from stdin is judged here before the server sees it.

JSON-RPC 2.0 says what to answer to a frame that is no acceptable message, and the guard
answers it: a parse error (-32700) when the line is not JSON, an invalid request (-32600)
when it is JSON but no acceptable message (a batch, two messages on one line, "jsonrpc"
other than "2.0", a method that is not a string, params that are not an object, a lone
surrogate escape, nesting deeper than MAX_DEPTH, neither a method nor a result nor an
error), each reply carrying the frame's id when one can be recovered. Frames without an id
get no reply (JSON-RPC forbids answering a notification); they are logged and dropped. A
valid frame passes on as the object it parsed to. (The MCP SDK's stdio transport drops such
frames in silence, and a client waits for its own timeout; the SDK's message validation is
the oracle of what passes, tests/unit/gateway/test_gateway_frame_guard.py.)

Standard library only, and the replies are plain JSON objects, like everything the gateway's
server (gateway/server.py) writes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gateway.redact import shorten
from mnemo.logs import get_logger

log = get_logger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602

# MCP messages nest a handful of levels (params.arguments.ids[0] is 4); 64 leaves room for
# any real schema while bounding the work, and the recursion, that one frame can cause.
MAX_DEPTH = 64
# Longer than any MCP method; a longer one is not echoed back in full.
METHOD_MAX_CHARS = 128
# Larger than any honest request (a 4 MB argument still reaches validation and gets a
# field-naming error); a longer line is answered and skipped (gateway/stdio.py).
MAX_FRAME_BYTES = 16 * 1024 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
# A top-level id written before the first nested value, for frames that do not parse:
# `{"jsonrpc":"2.0","id":7,"method":...` (what every client writes) gives 7.
_LEADING_ID = r'^\s*\{[^{\[]*?"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\]|\\.){0,256}")'


_LEADING_ID_PATTERN = re.compile(_LEADING_ID)

RequestId = int | str | None
Frame = dict[str, Any]


@dataclass
class Verdict:
    """What to do with one line: pass `message` on, send `replies`, log `dropped` reasons."""

    message: Frame | None = None
    replies: list[Frame] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def log(self) -> None:
        """What was dropped or refused, in the log (bounded: never the whole frame)."""
        for reason in self.dropped:
            log.warning("frame_dropped", reason=shorten(reason, 200))
        for reply in self.replies:
            log.warning("frame_refused", id=shorten(str(reply["id"]), 40), code=reply["error"]["code"],
                        reason=shorten(reply["error"]["message"], 200))


class Rejected(Exception):
    """A frame that is JSON but no acceptable message: its JSON-RPC error code and reason."""

    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code, self.reason = code, reason


def error_reply(request_id: RequestId, code: int, message: str, data: Any = None) -> Frame:
    """A JSON-RPC error response (`data` only when given)."""
    error: Frame = {"code": code, "message": message, **({"data": data} if data is not None else {})}
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def judge_bytes(raw: bytes) -> Verdict:
    """The verdict on one line as read from the wire (without its newline): a line past
    MAX_FRAME_BYTES is refused unread (with its id when it stands near the start)."""
    if len(raw) > MAX_FRAME_BYTES:
        reason = f"Invalid Request: the frame is larger than {MAX_FRAME_BYTES} bytes"
        return Verdict(replies=[error_reply(recover_id(raw[:4096].decode("utf-8", "replace")), INVALID_REQUEST,
                                            reason)])
    return judge(raw.decode("utf-8", "replace"))


def judge(line: str) -> Verdict:
    """The verdict on one stdin line (without its newline)."""
    if not line.strip():
        return Verdict()
    try:
        values = _decode_all(line)
    except (ValueError, RecursionError):  # not JSON, a non-standard constant, or nested past Python's limit
        return Verdict(replies=[error_reply(recover_id(line), PARSE_ERROR, "Parse error: the line is not JSON")])
    if len(values) > 1:
        return _reject_each(values, "two or more messages on one line; send one JSON-RPC message per line")
    value = values[0]
    if isinstance(value, list):
        return _reject_each(value, "batches are not supported; send one JSON-RPC message per line")
    return _judge_message(value)


def recover_id(line: str) -> RequestId:
    """The id of a frame that does not parse, when it stands before any nested value."""
    match = _LEADING_ID_PATTERN.match(line)
    if not match:
        return None
    try:
        found = json.loads(match.group(1))
    except ValueError:
        return None
    return found if isinstance(found, int | str) and not _SURROGATE.search(str(found)) else None


def _decode_all(line: str) -> list[Any]:
    """Every JSON value on the line (normally one); NaN and Infinity are not JSON."""
    decoder = json.JSONDecoder(parse_constant=_no_constants)
    values: list[Any] = []
    position, end = 0, len(line)
    while True:
        while position < end and line[position] in " \t\r\n":
            position += 1
        if position == end:
            return values
        value, position = decoder.raw_decode(line, position)
        values.append(value)


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reject_each(values: list[Any], reason: str) -> Verdict:
    verdict = Verdict()
    for value in values:
        if isinstance(value, dict) and "id" in value:
            verdict.replies.append(error_reply(_usable_id(value["id"]), INVALID_REQUEST, f"Invalid Request: {reason}"))
        else:
            verdict.dropped.append(reason)
    if not values:
        verdict.dropped.append(f"an empty batch: {reason}")
    return verdict


def _judge_message(value: Any) -> Verdict:
    if not isinstance(value, dict):
        return Verdict(dropped=[f"{json_kind(value)}, not a JSON-RPC message object"])
    try:
        _check_structure(value)
    except Rejected as rejected:
        return _refuse(value, rejected.code, rejected.reason)
    if not _is_message(value):
        return _refuse(value, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 request, notification or "
                                               "response (needs jsonrpc, and method or result or error)")
    return Verdict(message=value)


def _is_message(value: Frame) -> bool:
    """A request or notification (a method), or a response: an id with a result object or an
    error object holding a code and a message. Other keys are ignored, as the SDK ignores them."""
    if "method" in value:
        return True
    error = value.get("error")
    if "id" not in value:
        return False
    if isinstance(error, dict):
        return {"code", "message"} <= set(error)
    return isinstance(value.get("result"), dict) and "error" not in value


def _refuse(value: dict[str, Any], code: int, reason: str) -> Verdict:
    if "id" not in value:
        return Verdict(dropped=[reason])
    return Verdict(replies=[error_reply(_usable_id(value["id"]), code, reason)])


def _usable_id(candidate: Any) -> RequestId:
    """The id to answer with: the frame's own when MCP allows it (a string or an integer), else null."""
    if isinstance(candidate, bool) or not isinstance(candidate, int | str):
        return None
    if isinstance(candidate, str) and _SURROGATE.search(candidate):
        return None
    return candidate


def json_kind(value: Any) -> str:
    """A value's JSON type with its article ("an array", "a string"), as a client would call it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    names = {str: "a string", int: "an integer", float: "a number", list: "an array", dict: "an object"}
    return names.get(type(value), "a value")


def _check_structure(value: dict[str, Any]) -> None:
    """The rules the SDK's own validation enforces by dropping the frame, as errors to answer."""
    if value.get("jsonrpc") != "2.0":
        raise Rejected(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if "id" in value and _usable_id(value["id"]) is None:
        raise Rejected(INVALID_REQUEST, "Invalid Request: id must be a string or an integer")
    method = value.get("method")
    if "method" in value and not isinstance(method, str):
        raise Rejected(INVALID_REQUEST, "Invalid Request: method must be a string")
    if isinstance(method, str) and len(method) > METHOD_MAX_CHARS:
        raise Rejected(METHOD_NOT_FOUND, f"Method not found: {shorten(method, 40)!r}")
    params = value.get("params")
    if "params" in value and not isinstance(params, dict):
        kind = json_kind(params)
        code = INVALID_PARAMS if isinstance(params, list) else INVALID_REQUEST
        raise Rejected(code, f"Invalid params: params must be an object, not {kind}")
    problem = _deep_problem(value)
    if problem:
        raise Rejected(INVALID_REQUEST, f"Invalid Request: {problem}")


def _deep_problem(value: Any) -> str | None:
    """Nesting past MAX_DEPTH, or a string (key or value) holding a lone surrogate escape,
    which no UTF-8 text can carry: found without recursion, stopping at the first."""
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        node, depth = pending.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                return "a string holds a lone surrogate escape (\\ud800-\\udfff), which is not valid Unicode text"
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        pending.extend((child, depth + 1) for child in children)
    return None
