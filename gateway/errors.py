"""The one mapping from errors to MCP results.

A tool call never ends in a traceback on the client: a MnemoError becomes an `isError`
result reading "<CODE>: <message> <next step>", and anything unexpected becomes
"INTERNAL: unexpected failure (ref=xxxx)" with the traceback written only to the log,
where the ref finds it.
"""

from __future__ import annotations

import secrets

from gateway.redact import shorten
from gateway.spec import ToolResult
from mnemo.errors import MnemoError
from mnemo.logs import get_logger

log = get_logger(__name__)


# A backstop: gateway code quotes values through gateway.redact already, but a message from a
# service or a code tool may quote an argument (a path, a name) whole; an error shown or logged
# must never carry private text nor a whole argument back.
MESSAGE_MAX_CHARS = 1000


def error_message(err: MnemoError) -> str:
    """The error's message as it may be shown or logged: privacy-filtered and bounded."""
    return shorten(err.message, MESSAGE_MAX_CHARS)


def error_text(err: MnemoError) -> str:
    """"<CODE>: <message> <next step>" (the next step only when the error has one)."""
    text = f"{err.code}: {error_message(err)}"
    return f"{text} {err.next_step}" if err.next_step else text


def error_result(err: MnemoError) -> ToolResult:
    return ToolResult(error_text(err), is_error=True)


def unexpected_result(tool: str, exc: BaseException) -> ToolResult:
    """A crash in the gateway: log the traceback under a short ref, tell the client only the ref."""
    ref = secrets.token_hex(4)
    log.error("tool_crashed", tool=tool, ref=ref, exc_info=exc)
    text = f"INTERNAL: unexpected failure (ref={ref}). This is a bug in mnemo; see $MNEMO_HOME/logs/gateway.log."
    return ToolResult(text, is_error=True)
