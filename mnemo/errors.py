"""One error taxonomy for every process.

Codes are gRPC status code names, so the core of a service raises these without
importing grpc. They are mapped exactly once per boundary:
- to gRPC status codes by the server interceptor (`mnemo.grpc_server`),
- back from gRPC status codes for every client by `error_from_rpc` below (it reads only
  `code()` and `details()`, so the hooks' lean path uses it without importing grpc),
- to MCP `isError` results by the gateway (`gateway.errors`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol


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
    """No record with this id or name exists."""

    code = "NOT_FOUND"
    next_step = "Check the id or name; search first to find valid ones."


class AlreadyExists(MnemoError):
    """A record with this key exists already (an id or a name given twice)."""

    code = "ALREADY_EXISTS"


class Aborted(MnemoError):
    """A concurrent writer got there first (optimistic concurrency)."""

    code = "ABORTED"
    next_step = "Read the current version and retry with it."


class FailedPrecondition(MnemoError):
    """The system is not in a state that allows this yet (e.g. corpus not primed)."""

    code = "FAILED_PRECONDITION"


class Unavailable(MnemoError):
    """A service cannot be reached, or is shutting down; the call may be retried."""

    code = "UNAVAILABLE"
    next_step = "The memory service is not reachable; retry in a moment or run `mnemo status`."


class DeadlineExceeded(MnemoError):
    """The call ran out of its deadline before an answer."""

    code = "DEADLINE_EXCEEDED"
    next_step = "The request took too long; narrow it (smaller limit, more filters)."


class Cancelled(MnemoError):
    """The caller gave up on the call (a cancelled prime job, a closed client)."""

    code = "CANCELLED"


class ResourceExhausted(MnemoError):
    """A size limit was hit (message size, too many items at once)."""

    code = "RESOURCE_EXHAUSTED"


class Unauthenticated(MnemoError):
    """The bearer token is missing or wrong."""

    code = "UNAUTHENTICATED"
    next_step = "Configure the bearer token (MNEMO_AUTH_TOKEN)."


class PermissionDenied(MnemoError):
    """The token is valid but may not do this (another project, or an administration RPC)."""

    code = "PERMISSION_DENIED"
    next_step = "Use a token that includes this project, or ask an administrator (`mnemo server token add`)."


class Internal(MnemoError):
    """A bug: the server logged the traceback and sent only a reference."""

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
    PermissionDenied,
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


class RpcFailure(Protocol):
    """What a failed call tells a client: grpc.RpcError has this shape."""

    def code(self) -> Any: ...  # a grpc.StatusCode; only its `name` is read

    def details(self) -> str | None: ...


# What grpc says when nothing listened at the address: no server can have seen the call.
_REFUSED_MARKERS = ("connection refused", "no such file or directory", "failed to connect to all addresses")


def error_from_rpc(err: RpcFailure) -> MnemoError:
    """The inverse of the server mapping: a typed error with the server's message."""
    code = err.code() if callable(getattr(err, "code", None)) else None
    name = getattr(code, "name", "UNKNOWN")
    details = (err.details() if callable(getattr(err, "details", None)) else "") or name
    return from_code(name, details)


def is_connection_refused(err: RpcFailure) -> bool:
    """True only when no server could have seen the failed call (see `is_refusal`)."""
    return is_refusal(error_from_rpc(err))


def is_refusal(error: MnemoError) -> bool:
    """True only when nothing listened at the address, so no server saw the request.

    UNAVAILABLE also covers resets and server shutdowns mid-call, which must not be
    retried; those carry other details.
    """
    if not isinstance(error, Unavailable):
        return False
    details = error.message.lower()
    return any(marker in details for marker in _REFUSED_MARKERS) and "reset" not in details


def downstream_unavailable(exc: MnemoError, service: str) -> MnemoError:
    """A refusal this service met calling ANOTHER service, restated so that its caller cannot
    take it for a refusal of its own connection: that caller retries (and restarts the
    stack) only when no service saw its request, and this service did see it."""
    if not is_refusal(exc):
        return exc
    return Unavailable(f"{service or 'the service'} could not reach a service it depends on "
                       f"(it is down or restarting)")
