"""The one mapping from errors to MCP results.

A tool call never ends in a traceback on the client: a MnemoError becomes an `isError`
result reading "<CODE>: <message>. <next step>", and anything unexpected becomes
"INTERNAL: unexpected failure (ref=xxxx)" with the traceback written only to the log,
where the ref finds it.
"""

from __future__ import annotations

import secrets

from gateway.redact import shorten
from gateway.spec import ToolResult, ToolSpec
from mnemo.errors import DeadlineExceeded, MnemoError, Unavailable, is_refusal
from mnemo.logs import get_logger

log = get_logger(__name__)


# A backstop: gateway code quotes values through gateway.redact already, but a message from a
# service or a code tool may quote an argument (a path, a name) whole; an error shown or logged
# must never carry private text nor a whole argument back.
MESSAGE_MAX_CHARS = 1000


def error_message(err: MnemoError) -> str:
    """The error's message as it may be shown or logged: privacy-filtered and bounded."""
    return shorten(err.message, MESSAGE_MAX_CHARS)


# A write whose outcome is unknown: the service may have seen the request and done it after the
# caller stopped waiting (a timeout, a connection reset mid-call). Reads are safe to retry.
UNKNOWN_OUTCOME = "The write may have happened: the service may have finished it after the gateway stopped waiting."
RETRY_READ = "Nothing was changed (a read); retrying is safe, and a narrower request is faster."


def error_text(err: MnemoError, spec: ToolSpec | None = None) -> str:
    """"<CODE>: <message>. <next step>": the message ends its sentence, so the next step reads as
    one of its own. A timeout (or a reset mid-call) says whether the tool may have changed
    anything and whether a retry is safe (the tool's `retry_note`), instead of the generic step."""
    message = error_message(err).rstrip()
    text = f"{err.code}: {message}" + ("" if message.endswith((".", "!", "?")) else ".")
    step = err.next_step
    if spec is not None and _outcome_unknown(err):
        step = RETRY_READ if spec.read_only else f"{UNKNOWN_OUTCOME} {spec.retry_note}".rstrip()
    return f"{text} {step}" if step else text


# How grpc words a connection lost mid-call (a service may have seen the request), as opposed to
# an UNAVAILABLE a service answered on purpose ("vector_svc is not reachable") or a refusal.
_LOST_MID_CALL = ("reset", "socket closed", "connection closed", "stream removed", "broken pipe", "eof")


def _outcome_unknown(err: MnemoError) -> bool:
    """The service may have done the request without answering: a deadline, or a connection
    lost mid-call (a refused one was retried by the client: no service saw it)."""
    if isinstance(err, DeadlineExceeded):
        return True
    lost = isinstance(err, Unavailable) and not is_refusal(err)
    return lost and any(marker in err.message.lower() for marker in _LOST_MID_CALL)


def error_result(err: MnemoError, spec: ToolSpec | None = None) -> ToolResult:
    return ToolResult(error_text(err, spec), is_error=True)


def unexpected_result(tool: str, exc: BaseException) -> ToolResult:
    """A crash in the gateway: log the traceback under a short ref, tell the client only the ref."""
    ref = secrets.token_hex(4)
    log.error("tool_crashed", tool=tool, ref=ref, exc_info=exc)
    text = f"INTERNAL: unexpected failure (ref={ref}). This is a bug in mnemo; see $MNEMO_HOME/logs/gateway.log."
    return ToolResult(text, is_error=True)
