"""structlog setup: JSON lines to stderr or to a file, never to stdout.

stdout belongs to protocols (MCP JSON-RPC in the gateway, hook replies in hooks). A log
file is private (0600) and rotated past a size cap (`mnemo.logfile`), so no flood of
requests can fill the disk.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, cast

from mnemo.config import LOG_LEVELS
from mnemo.logfile import RotatingFile
from mnemo.vocab import LOG_BACKUPS_DEFAULT, LOG_MAX_BYTES_DEFAULT

if TYPE_CHECKING:
    import structlog

_LEVELS = {name: logging.getLevelNamesMapping()[name.upper()] for name in LOG_LEVELS}


class _CurrentStderr:
    """sys.stderr as it is at each write, not as it was when logging was configured: a command
    run in-process (tests capture stderr, then close the capture) must not leave every later
    log line aimed at a closed stream ("I/O operation on closed file", an INTERNAL)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(level: str = "info", file: str | Path | None = None, service: str = "",
                      *, max_bytes: int = LOG_MAX_BYTES_DEFAULT, backups: int = LOG_BACKUPS_DEFAULT,
                      deferred: bool = False, lean: bool = False) -> None:
    """Route stdlib logging and structlog to one JSON stream on stderr or in `file`
    (rotated past `max_bytes`, `backups` older files kept). `deferred`: done when the first
    line is logged (structlog is imported then), so a process that must answer fast (`mnemo
    mcp`'s handshake) does not import structlog before; until then only stdlib records of
    WARNING and above from libraries reach stderr. `lean` (the supervisor, which stays up idle
    for as long as the stack does): lines are rendered by `_LeanLogger`, byte for byte as the
    structlog chain below renders them, and structlog is imported only if a logger is asked
    for anything else (`bind`, ...)."""
    global _deferred, _lean, _lean_deferred
    if deferred and lean and _module is None:  # lean, from the first line logged on
        _lean_deferred = partial(configure_logging, level, file, service, max_bytes=max_bytes, backups=backups,
                                 lean=True)
        return
    if (deferred or lean) and _module is None:
        if lean:
            stream = _open_stream(file, max_bytes, backups)
            numeric = _LEVELS.get(level.lower(), logging.INFO)
            _lean = _LeanLogger(stream, numeric, {"service": service} if service else {})
            _route_stdlib(stream, numeric, _LeanRecordFormatter())
            _deferred = partial(_configure, level, stream, service)
        else:
            _deferred = partial(configure_logging, level, file, service, max_bytes=max_bytes, backups=backups)
        return
    _configure(level, _open_stream(file, max_bytes, backups), service)


def _open_stream(file: str | Path | None, max_bytes: int, backups: int) -> TextIO:
    if file:
        Path(file).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return RotatingFile(file, max_bytes, backups)  # type: ignore[return-value]
    return _CurrentStderr()  # type: ignore[return-value]


def _route_stdlib(stream: TextIO, numeric: int, formatter: logging.Formatter) -> None:
    # Libraries that log through stdlib (grpc, chromadb) go to the same stream as JSON too.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.INFO) if numeric > logging.DEBUG else numeric)


def _configure(level: str, stream: TextIO, service: str) -> None:
    global _lean, _lean_deferred
    _lean, _lean_deferred = None, None
    numeric = _LEVELS.get(level.lower(), logging.INFO)
    structlog = _structlog()
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        structlog.processors.JSONRenderer(),
    ]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        # WriteLogger writes each line with its newline in one call: lines from several
        # processes appending to one file never interleave.
        logger_factory=structlog.WriteLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    if service:
        structlog.contextvars.bind_contextvars(service=service)
    _route_stdlib(stream, numeric, structlog.stdlib.ProcessorFormatter(
        processor=structlog.processors.JSONRenderer(),
        foreign_pre_chain=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
        ],
    ))


def get_logger(name: str = "mnemo") -> structlog.stdlib.BoundLogger:
    return cast("structlog.stdlib.BoundLogger", _Logger(name))


class _Logger:
    """A module's logger, resolved on each use: structlog (and rich, which it loads) is imported
    at the first log line or configure_logging, not when a module that logs is imported, so
    `mnemo mcp` answers its handshake and a hook its event without paying for it."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, method: str) -> Any:
        global _lean_deferred
        configure, _lean_deferred = _lean_deferred, None
        if configure is not None:
            configure()
        lean = _lean
        if lean is not None and method in _METHOD_LEVELS:
            return partial(lean.log, method)
        return getattr(_structlog().get_logger(self._name), method)


_module: Any = None  # structlog, once imported
_deferred: Callable[[], None] | None = None  # a configure_logging waiting for the first log line
# The log methods of structlog's filtering logger (make_filtering_bound_logger) and their levels.
_METHOD_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING,
                  "warn": logging.WARNING, "error": logging.ERROR, "exception": logging.ERROR,
                  "critical": logging.CRITICAL, "fatal": logging.CRITICAL}


def _now_iso() -> str:
    """structlog's TimeStamper(fmt="iso", utc=True)."""
    from datetime import UTC, datetime  # here: hooks import this module and need no datetime

    return datetime.now(tz=UTC).isoformat().replace("+00:00", "Z")


def _fallback(value: Any) -> Any:
    """structlog's JSONRenderer default: a value's __structlog__(), else its repr."""
    try:
        return value.__structlog__()
    except AttributeError:
        return repr(value)


class _LeanLogger:
    """What configure_logging's structlog chain writes (merge_contextvars of the service,
    add_log_level, TimeStamper iso UTC, format_exc_info, JSONRenderer, one write per line),
    without importing structlog: in the supervisor, structlog and what it loads (asyncio, ssl
    and OpenSSL's libcrypto) were a quarter of the process (docs/performance.md, "Memory")."""

    def __init__(self, stream: TextIO, numeric: int, context: dict[str, Any]):
        self._stream, self._numeric, self._context = stream, numeric, context
        self._lock = threading.Lock()

    def log(self, method: str, event: Any = None, *args: Any, **kw: Any) -> None:
        if _METHOD_LEVELS[method] < self._numeric:
            return
        if method == "exception":
            kw.setdefault("exc_info", True)
        if args:
            event = event % args
        event_dict = dict(kw)
        if event is not None:
            event_dict["event"] = event
        for key, value in self._context.items():
            event_dict.setdefault(key, value)
        event_dict["level"] = {"warn": "warning", "exception": "error"}.get(method, method)
        event_dict["timestamp"] = _now_iso()
        _format_exc_info(event_dict)
        line = json.dumps(event_dict, default=_fallback) + "\n"
        with self._lock:
            self._stream.write(line)
            self._stream.flush()


def _format_exc_info(event_dict: dict[str, Any]) -> None:
    """structlog's format_exc_info: an `exc_info` field (True, an exception or a sys.exc_info()
    triple) becomes `exception`, the traceback as text."""
    value = event_dict.pop("exc_info", None)
    exc_info: Any = None
    if isinstance(value, BaseException):
        exc_info = (value.__class__, value, value.__traceback__)
    elif (isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], type)
          and issubclass(value[0], BaseException) and isinstance(value[1], BaseException)
          and (value[2] is None or isinstance(value[2], TracebackType))):
        exc_info = value
    elif value and sys.exc_info() != (None, None, None):
        exc_info = sys.exc_info()
    if exc_info:
        event_dict["exception"] = "".join(traceback.format_exception(*exc_info)).removesuffix("\n")


class _LeanRecordFormatter(logging.Formatter):
    """structlog's ProcessorFormatter over a stdlib record, as configure_logging sets it up."""

    def format(self, record: logging.LogRecord) -> str:
        event_dict: dict[str, Any] = {"event": record.getMessage()}
        if record.exc_info:
            event_dict["exc_info"] = record.exc_info
        if record.stack_info:
            event_dict["stack_info"] = record.stack_info
        event_dict["level"] = record.levelname.lower()
        event_dict["timestamp"] = _now_iso()
        return json.dumps(event_dict, default=_fallback)


_lean: _LeanLogger | None = None  # configure_logging(lean=True) until structlog takes over
_lean_deferred: Callable[[], None] | None = None  # a lean configure_logging waiting for the first log line


def _structlog() -> Any:
    """structlog, imported on first use and then configured: as a deferred configure_logging
    asked, or to stderr."""
    global _module, _deferred
    if _module is None:
        import structlog

        _module = structlog
        configure, _deferred = _deferred, None
        if configure is not None:
            configure()
        else:
            _default_to_stderr(structlog)
    return _module


def _default_to_stderr(structlog: Any) -> None:
    # structlog's unconfigured default prints to stdout, which is the protocol channel of
    # the gateway and of hooks. Until configure_logging runs, log JSON to stderr instead.
    if not structlog.is_configured():
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
            logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        )

