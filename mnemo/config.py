"""Configuration: one typed settings object per process, read at the entry point.

Precedence, highest first: command-line flags > environment (`MNEMO_<FIELD>`) >
`$MNEMO_HOME/config.toml` (flat `field = value` keys) > the defaults below.
`MNEMO_HOME` itself comes from a flag or the environment, default `~/.mnemo`.
"""

from __future__ import annotations

import dataclasses
import math
import os
import stat
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from mnemo.errors import InvalidArgument
from mnemo.vocab import LOG_BACKUPS_DEFAULT, LOG_MAX_BYTES_DEFAULT, MCP_PROFILE_DEFAULT, MCP_PROFILES

SERVICES = ("store", "vector", "search")


@dataclass(frozen=True)
class Settings:
    """Every knob of every mnemo process. Paths default to places under `home`."""

    home: Path = Path("~/.mnemo")
    """Data directory: mnemo.db, chroma/, run/ (sockets, mode 0700), logs/."""
    store_listen: str = ""
    """Where store_svc listens: `unix:PATH` or `HOST:PORT` (default unix socket under run/)."""
    vector_listen: str = ""
    """Where vector_svc listens."""
    search_listen: str = ""
    """Where search_svc listens."""
    store_addr: str = ""
    """Where clients reach store_svc (default: store_listen)."""
    vector_addr: str = ""
    """Where clients reach vector_svc (default: vector_listen)."""
    search_addr: str = ""
    """Where clients reach search_svc (default: search_listen)."""
    db_path: str = ""
    """SQLite file (default home/mnemo.db)."""
    store_backend: str = "sqlite"
    """Where store_svc keeps records: sqlite (db_path, one machine) or postgres (store_dsn, shared by replicas)."""
    store_dsn: str = ""
    """PostgreSQL connection string (libpq URI or key=value) when store_backend is postgres."""
    store_pool_size: int = 8
    """Most PostgreSQL connections one store_svc process holds (its pool's upper bound)."""
    chroma_path: str = ""
    """Embedded Chroma directory (default home/chroma)."""
    chroma_url: str = ""
    """`http://HOST:PORT` of a Chroma server; empty = embedded PersistentClient."""
    embedder: str = "minilm-int8"
    """Embedding model: minilm-int8 (onnxruntime, fast), minilm-fp32 (numpy, exact), hash (tests)."""
    vector: str = "on"
    """on: vector_svc runs and search is hybrid; off: full-text search only (no vector_svc, no model in memory)."""
    vector_idle_release_s: float = 600.0
    """vector_svc lets its embedding model (about 100 MiB) go after this many seconds without
    embedding anything; the next query or new record loads it again (about 0.3 s). 0 = keep it."""
    vector_idle_exit_s: float = 600.0
    """vector_svc exits after this many seconds without a query and with nothing left to follow
    in the store's change feed; the supervisor starts it again on the next need (searches answer
    lexically while it warms up). Local stack only. 0 = never."""
    embed_delay_ms: int = 0
    """Fault injection for tests: extra delay per embedding batch."""
    vector_poll_ms: int = 500
    """How often vector_svc polls the store's change feed."""
    vector_lease_ttl_ms: int = 15000
    """With a Chroma server (chroma_url), vector_svc replicas elect one follower by a lease of this
    TTL kept in the store (a killed follower is replaced within it); 0 = every replica follows."""
    log_level: str = "info"
    """One of debug, info, warning, error."""
    log_file: str = ""
    """Log file path; empty = stderr (never stdout)."""
    log_max_bytes: int = LOG_MAX_BYTES_DEFAULT
    """A log file is rotated past this size (bytes); log_backups older files are kept."""
    log_backups: int = LOG_BACKUPS_DEFAULT
    """Rotated log files kept per log (file.1 ... file.N); older ones are deleted."""
    tls_cert: str = ""
    """PEM certificate (server side); required with tls_key when listening beyond loopback."""
    tls_key: str = ""
    """PEM private key (server side)."""
    tls_ca: str = ""
    """PEM CA bundle clients use to verify servers (empty = system roots)."""
    auth_token: str = field(default="", repr=False)  # a printed Settings (a traceback, a log) must not show it
    """Bearer token required by servers and sent by clients when set (on servers: the service, admin, token)."""
    auth_token_file: str = ""
    """File holding the bearer token (read when auth_token is empty; first line; mode 0600 or stricter)."""
    insecure_no_auth: bool = False
    """UNSAFE: lets a service listen on loopback TCP without a bearer token (`mnemo serve
    --insecure-no-auth`); every user of the machine can then read and write the memory."""
    user_tokens: bool = False
    """store_svc and search_svc also accept per-user tokens (`mnemo server token add`); needs auth_token."""
    token_cache_s: float = 5.0
    """How long a resolved user token is trusted before it is looked up again (revocation delay)."""
    rpc_timeout_s: float = 10.0
    """Default deadline of a gRPC call."""
    tool_uses_cap_bytes: int = 16384
    """Cap on each stored tool input/response."""
    cursor_ttl_s: int = 1800
    """Lifetime of a mem_search continuation token."""
    context_token_budget: int = 1500
    """Token budget of the start-of-session context."""
    context_observations: int = 50
    """Most observations listed in the start-of-session context."""
    context_summaries: int = 5
    """Most summaries listed in the start-of-session context."""
    display_tz: str = "UTC"
    """Time zone for rendered dates (IANA name)."""
    skip_tools: tuple[str, ...] = (
        "TodoWrite",
        "TodoRead",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
        "SlashCommand",
        "Skill",
        "AskUserQuestion",
        "ExitPlanMode",
    )
    """Tools whose uses are noise and are not compiled into observations."""
    anthropic_api_key: str = ""
    """Enables the LLM observer and grounded corpus answers when set."""
    anthropic_base_url: str = ""
    """Override of the Messages API base URL (tests point it at a local fake)."""
    anthropic_model: str = "claude-haiku-4-5"
    """Model for the LLM observer and corpus answers."""
    heartbeat_interval_s: float = 10.0
    """Seconds between MCP progress heartbeats during long jobs."""
    parent_check_interval_s: float = 30.0
    """Seconds between the gateway's checks that its parent is alive."""
    start_timeout_s: float = 60.0
    """How long `mnemo up` waits for the stack to become healthy."""
    project: str = ""
    """Project name override for hooks (default: git root or cwd basename)."""
    mcp_profile: str = MCP_PROFILE_DEFAULT
    """Tools `mnemo mcp` lists: default (memory + code navigation), legacy (the seven older search tools), all."""
    project_root: str = ""
    """Root the code tools (smart_search/outline/unfold) read under; empty = the gateway's working directory."""
    capabilities_check_s: float = 5.0
    """Seconds between the gateway's checks of what the stack can serve (tools/list follows them)."""
    mcp_structured_content: bool = False
    """Tool results also carry structuredContent (and tools/list declares outputSchema) for programs.
    Off by default: Claude Code hands the model JSON.stringify(structuredContent) instead of the text."""
    server_url: str = ""
    """HOST:PORT of a team server's search_svc: set, the gateway and hooks run in the server
    runtime (no local stack; every call goes there with the token of token_file)."""
    token_file: str = ""
    """File holding this user's token for server_url; must be private (mode 0600 or stricter)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Unknown keys from config.toml, kept for diagnostics."""

    # -- derived locations -------------------------------------------------------------
    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def database(self) -> Path:
        return Path(self.db_path).expanduser() if self.db_path else self.home / "mnemo.db"

    @property
    def chroma_dir(self) -> Path:
        return Path(self.chroma_path).expanduser() if self.chroma_path else self.home / "chroma"

    def listen_address(self, service: str) -> str:
        explicit = getattr(self, f"{service}_listen")
        return explicit or f"unix:{self.run_dir / (service + '.sock')}"

    def address(self, service: str) -> str:
        return getattr(self, f"{service}_addr") or self.listen_address(service)


_FIELD_TYPES = {f.name: f for f in fields(Settings)}


# Settings with a closed set of values; any other value is refused, naming the choices.
LOG_LEVELS = ("debug", "info", "warning", "error")
STORE_BACKENDS = ("sqlite", "postgres")
CHOICES: dict[str, tuple[str, ...]] = {
    "store_backend": STORE_BACKENDS,
    "log_level": LOG_LEVELS,
    "vector": ("on", "off"),
    "mcp_profile": MCP_PROFILES,
}
# Settings that no longer exist, and why. In config.toml or the environment one is ignored with a
# warning on stderr (a file left by an older version must not stop the gateway a host starts);
# given as a flag it is refused, naming why.
RETIRED: dict[str, str] = {
    "mcp_fast_start": "the gateway generates its handshake from the tool table and always answers it itself",
}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
# Numbers where 0 means nothing sensible (every other number may be 0: "off" or "no delay").
POSITIVE = frozenset({"store_pool_size", "vector_poll_ms", "log_max_bytes", "rpc_timeout_s", "cursor_ttl_s",
                      "heartbeat_interval_s", "parent_check_interval_s", "start_timeout_s"})


def _coerce(name: str, value: Any) -> Any:
    """Turn a flag, environment or TOML value into the field's type, or refuse it: a typo
    (`ture`, `postgress`, `verbose`) names the setting and what it accepts, never a silent default."""
    default = _FIELD_TYPES[name].default
    try:
        if name == "home":
            return Path(str(value)).expanduser()
        if isinstance(default, bool):
            return _boolean(name, value)
        if isinstance(default, int | float):
            return _number(name, value, type(default))
        if isinstance(default, tuple):
            items = value if isinstance(value, (list, tuple)) else str(value).split(",")
            return tuple(str(v).strip() for v in items if str(v).strip())
        text = str(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument(name, f"cannot read {str(value)[:40]!r} as {type(default).__name__}") from None
    if name in CHOICES:
        text = text.strip().lower()  # INFO and info alike
    if name in CHOICES and text not in CHOICES[name]:
        raise InvalidArgument(name, f"must be one of {', '.join(CHOICES[name])}, got {text[:40]!r}")
    return text


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in _TRUE or word in _FALSE:
        return word in _TRUE
    raise InvalidArgument(name, f"must be true or false (also 1/0, yes/no, on/off), got {str(value)[:40]!r}")


def _number(name: str, value: Any, kind: type) -> int | float:
    if isinstance(value, bool):  # TOML true is not 1
        raise ValueError(value)
    number = kind(value)
    least = "greater than 0" if name in POSITIVE else "0 or more"
    if not math.isfinite(number) or number < 0 or (name in POSITIVE and number == 0):
        raise InvalidArgument(name, f"must be a finite number {least}, got {str(value)[:40]!r}")
    return number


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise InvalidArgument(str(path), f"invalid TOML: {err}") from None


def load_settings(
    flags: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Build the settings of this process. `flags` holds only options given on the command line."""
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    environ = os.environ if environ is None else environ
    home = Path(str(flags.get("home") or environ.get("MNEMO_HOME") or "~/.mnemo")).expanduser().resolve()
    check_owned(home)  # before its config.toml is read: another user's file must not configure us
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in _without_retired(_read_toml(home / "config.toml"), home / "config.toml", environ, flags).items():
        if key in _FIELD_TYPES and key not in ("home", "extra"):
            values[key] = _coerce(key, value)
        else:
            extra[key] = value
    for name in _FIELD_TYPES:
        env_value = environ.get(f"MNEMO_{name.upper()}")
        if env_value is not None and name not in ("home", "extra"):
            values[name] = _coerce(name, env_value)
    for name, value in flags.items():
        if name not in _FIELD_TYPES:
            raise InvalidArgument(name, "unknown setting")
        values[name] = _coerce(name, value)
    values["home"] = home
    for name in ("store_addr", "vector_addr", "search_addr"):
        if "," in str(values.get(name, "")):  # a list of replicas: checked here, so every client names the setting
            from mnemo.addresses import check

            check(values[name], name)
    if values.get("auth_token_file") and not values.get("auth_token"):
        values["auth_token"] = _read_token_file(str(values["auth_token_file"]))
    return Settings(**values, extra=extra)


def _without_retired(toml: dict[str, Any], path: Path, environ: Mapping[str, str],
                     flags: Mapping[str, Any]) -> dict[str, Any]:
    """`toml` without the retired settings; each one found in the file or the environment is
    named on stderr, and one given as a flag is refused."""
    for name, why in RETIRED.items():
        if name in flags:
            raise InvalidArgument(name, f"retired: {why}")
        variable = f"MNEMO_{name.upper()}"
        found = [str(path)] * (name in toml) + [variable] * (variable in environ)
        for source in found:
            print(f"mnemo: warning: {name} (in {source}) is retired and ignored: {why}", file=sys.stderr)
    return {key: value for key, value in toml.items() if key not in RETIRED}


def _read_token_file(path: str) -> str:
    """The token in `path`, refused when others may read the file (a token is a password)."""
    file = Path(path).expanduser()
    try:
        mode = file.stat().st_mode & 0o777
        lines = file.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise InvalidArgument("auth_token_file", f"cannot read {path}: {err.strerror}") from None
    if mode & 0o077:
        raise InvalidArgument("auth_token_file", f"{path} is accessible by others (mode {mode:04o}); "
                                                 f"run chmod 600 on it")
    token = lines[0].strip() if lines else ""
    if not token:
        raise InvalidArgument("auth_token_file", f"{path} is empty")
    return token


def local_services(settings: Settings) -> tuple[str, ...]:
    """The services a local stack runs, in start order: vector_svc only while `vector` is on."""
    if settings.vector not in ("on", "off"):
        raise InvalidArgument("vector", f'must be "on" or "off", got {settings.vector!r}')
    return SERVICES if settings.vector == "on" else tuple(s for s in SERVICES if s != "vector")


def with_overrides(settings: Settings, **changes: Any) -> Settings:
    """A copy with some fields replaced (tests and composition roots)."""
    return dataclasses.replace(settings, **changes)


def check_owned(directory: Path, setting: str = "home") -> None:
    """`directory` (when it exists) is the user's own real directory, else InvalidArgument: a
    home another user created (or a symlink planted there) would let them read the memory,
    plant records, or point its logs at a file of their choosing. Never chmodded into ours."""
    try:
        info = directory.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise InvalidArgument(setting, f"{directory} is not a directory (a symbolic link or a file); "
                                       "remove it or set MNEMO_HOME to a directory of your own")
    if info.st_uid != os.getuid():
        raise InvalidArgument(setting, f"{directory} belongs to another user (uid {info.st_uid}, you are "
                                       f"{os.getuid()}); set MNEMO_HOME to a directory of your own")


def ensure_private_dirs(settings: Settings) -> None:
    """Create home, run/ and logs/, each 0700 and the user's own: the memory is readable by
    its user alone. (`mnemo.home.tighten` also fixes the files below them when a service starts.)"""
    for directory in (settings.home, settings.logs_dir, settings.run_dir):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_owned(directory)
        os.chmod(directory, 0o700, follow_symlinks=False)
