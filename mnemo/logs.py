"""structlog setup: JSON lines to stderr or to a file, never to stdout.

stdout belongs to protocols (MCP JSON-RPC in the gateway, hook replies in hooks). A log
file is private (0600) and rotated past a size cap (`mnemo.logfile`), so no flood of
requests can fill the disk.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
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
                      deferred: bool = False) -> None:
    """Route stdlib logging and structlog to one JSON stream on stderr or in `file`
    (rotated past `max_bytes`, `backups` older files kept). `deferred`: done when the first
    line is logged (structlog is imported then), so a process that must answer fast (`mnemo
    mcp`'s handshake) does not import structlog before; until then only stdlib records of
    WARNING and above from libraries reach stderr."""
    global _deferred
    if deferred and _module is None:
        _deferred = partial(configure_logging, level, file, service, max_bytes=max_bytes, backups=backups)
        return
    stream: TextIO
    if file:
        Path(file).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        stream = RotatingFile(file, max_bytes, backups)  # type: ignore[assignment]
    else:
        stream = _CurrentStderr()  # type: ignore[assignment]
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
    # Libraries that log through stdlib (grpc, chromadb) go to the same stream as JSON too.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processor=structlog.processors.JSONRenderer(),
            foreign_pre_chain=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(max(numeric, logging.INFO) if numeric > logging.DEBUG else numeric)


def get_logger(name: str = "mnemo") -> structlog.stdlib.BoundLogger:
    return cast("structlog.stdlib.BoundLogger", _Logger(name))


class _Logger:
    """A module's logger, resolved on each use: structlog (and rich, which it loads) is imported
    at the first log line or configure_logging, not when a module that logs is imported, so
    `mnemo mcp` answers its handshake and a hook its event without paying for it."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, method: str) -> Any:
        return getattr(_structlog().get_logger(self._name), method)


_module: Any = None  # structlog, once imported
_deferred: Callable[[], None] | None = None  # a configure_logging waiting for the first log line


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

