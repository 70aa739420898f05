"""One error taxonomy for every process.

Codes are gRPC status code names, so the core of a service raises these without
importing grpc. They are mapped exactly once per boundary:
- to gRPC status codes by the server interceptor (`mnemo.grpc_server`),
- back from gRPC status codes by the client helpers (`mnemo.grpc_client.error_from_rpc`),
- to MCP `isError` results by the gateway (`gateway.errors`).
"""

from __future__ import annotations

from typing import ClassVar


class MnemoError(Exception):
    """Base class. `code` is a grpc.StatusCode name; `next_step` tells an agent what to do."""

    code: ClassVar[str] = "INTERNAL"
    next_step: ClassVar[str] = ""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidArgument(MnemoError):
    """The request broke a rule; the message names the field and the rule."""

    code = "INVALID_ARGUMENT"
    next_step = "Fix the argument and call again."

    def __init__(self, field: str, rule: str):
        super().__init__(f"{field}: {rule}")
        self.field = field
        self.rule = rule


class NotFound(MnemoError):
    code = "NOT_FOUND"
    next_step = "Check the id or name; search first to find valid ones."


class AlreadyExists(MnemoError):
    code = "ALREADY_EXISTS"


class Aborted(MnemoError):
    """A concurrent writer got there first (optimistic concurrency)."""

    code = "ABORTED"
    next_step = "Read the current version and retry with it."


class FailedPrecondition(MnemoError):
    """The system is not in a state that allows this yet (e.g. corpus not primed)."""

    code = "FAILED_PRECONDITION"


class Unavailable(MnemoError):
    code = "UNAVAILABLE"
    next_step = "The memory service is not reachable; retry in a moment or run `mnemo status`."


class DeadlineExceeded(MnemoError):
    code = "DEADLINE_EXCEEDED"
    next_step = "The request took too long; narrow it (smaller limit, more filters)."


class Cancelled(MnemoError):
    code = "CANCELLED"


class ResourceExhausted(MnemoError):
    code = "RESOURCE_EXHAUSTED"


class Unauthenticated(MnemoError):
    code = "UNAUTHENTICATED"
    next_step = "Configure the bearer token (MNEMO_AUTH_TOKEN)."


class Internal(MnemoError):
    code = "INTERNAL"
    next_step = "This is a bug in mnemo; retrying will not help. See the logs under $MNEMO_HOME/logs/."


ALL_ERRORS: tuple[type[MnemoError], ...] = (
    InvalidArgument,
    NotFound,
    AlreadyExists,
    Aborted,
    FailedPrecondition,
    Unavailable,
    DeadlineExceeded,
    Cancelled,
    ResourceExhausted,
    Unauthenticated,
    Internal,
)

BY_CODE: dict[str, type[MnemoError]] = {cls.code: cls for cls in ALL_ERRORS}


def from_code(code: str, message: str) -> MnemoError:
    """Rebuild a typed error from a status code name and its message."""
    cls = BY_CODE.get(code, Internal)
    if cls is InvalidArgument:
        field, _, rule = message.partition(": ")
        return InvalidArgument(field, rule) if rule else InvalidArgument("request", message)
    return cls(message)
