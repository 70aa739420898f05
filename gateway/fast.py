"""Cold start: the MCP handshake answered before the SDK is imported.

A host times how long its MCP servers take to list their tools, and importing the MCP SDK
(pydantic models of every protocol version) is most of the gateway's start. So `mnemo mcp`
first serves the handshake with the standard library and one gRPC call: `initialize`,
`notifications/initialized`, `ping` and `tools/list`, answered from what the SDK itself
answered to the same requests, recorded in home/cache by gateway/handshake.py and keyed by the
gateway's and mnemo's sources (path, size, modification time) and the SDK's version (any change
makes the record unusable until a gateway that imported the SDK records it again). tools/list is filtered by
the capabilities search_svc reports, as the SDK path filters it.

The fast phase ends at the first frame it does not serve exactly as the SDK would (any other
method, unexpected params, a malformed frame, a second initialize), when nothing arrives for
IDLE_S, or at EOF. The gateway's own session then serves the rest of the streams without the
SDK (gateway/session.py), starting with the unanswered frames; every request gets exactly one
reply. Without a record (fast start switched off, the server runtime) the SDK serves the whole
session instead (gateway/stdio.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from gateway.frames import plain_message
from mnemo.config import Settings
from mnemo.remote import is_server_runtime

CACHE_FORMAT = 1
CACHE_NAME = "mcp-handshake.json"
# The fast phase hands over when nothing arrives for this long, and at the latest this long
# after the start, so the work that waits for a running event loop (the stack check, the parent
# watch, list_changed) is never held up for long.
IDLE_S = 1.0
FAST_PHASE_MAX_S = 3.0
# Handshake frames are small; a longer line is the guard's to judge.
FAST_LINE_MAX = 64 * 1024
# tools/list waits this long for search_svc's capabilities before the SDK path takes over
# (which may start the stack and allows the full RPC deadline).
CAPABILITIES_TIMEOUT_S = 2.0
# Where the key reads sources: everything that can change a recorded answer.
_PACKAGES = ("gateway", "mnemo")
_SDK_DISTRIBUTIONS = ("mcp-", "mcp_types-", "pydantic-", "pydantic_core-")
_REPO = Path(__file__).resolve().parents[1]
_KEY: str | None = None


class Claim:
    """fd 0 and fd 1 diverted while the gateway serves: the wire is read and written through
    private duplicates, fd 0 points at the null device and fd 1 at stderr, so a child process
    or a stray print can neither eat a frame nor corrupt one. Restored on release."""

    def __init__(self) -> None:
        self.wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        self.wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)

    def release(self) -> None:
        # The descriptors stay open: a worker thread may still block reading wire_in, and
        # closing it would let the number be reused under that thread.
        os.dup2(self.wire_in, 0)
        os.dup2(self.wire_out, 1)


# -- the record ------------------------------------------------------------------------------
def cache_path(settings: Settings) -> Path:
    return settings.home / "cache" / CACHE_NAME


def cache_key() -> str:
    """What the recorded answers derive from: the Python version, the SDK's distributions, and
    every source of the gateway and mnemo by path, size and modification time (any edit or
    install changes it; reading and hashing them would cost the start more than the SDK's
    absence saves). Computed once per process, at its start: a record written later must
    describe the code this process runs."""
    global _KEY
    if _KEY is None:
        parts = [f"{CACHE_FORMAT} {sys.version_info[:2]}", *_sdk_identity()]
        for package in _PACKAGES:
            for directory, subdirs, files in os.walk(_REPO / package):
                subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
                for file in sorted(f for f in files if f.endswith(".py")):
                    path = Path(directory, file)
                    stat = path.stat()
                    parts.append(f"{path.relative_to(_REPO)} {stat.st_size} {stat.st_mtime_ns}")
        _KEY = "\n".join(parts)
    return _KEY


def record_key(settings: Settings) -> str:
    """The key of a record for these settings: the code's key and every setting that changes
    what the recorded answers hold (outputSchema is declared only with structuredContent on), so
    a gateway started with other such settings records anew instead of replaying a stale list."""
    return f"{cache_key()}\nmcp_structured_content {settings.mcp_structured_content}"


def _sdk_identity() -> list[str]:
    """The installed SDK and pydantic distributions (name-version), found without importing them."""
    import importlib.util

    spec = importlib.util.find_spec("mcp_types")
    if spec is None or spec.origin is None:
        return []
    site = Path(spec.origin).parents[1]
    return sorted(n for n in os.listdir(site) if n.endswith(".dist-info") and n.startswith(_SDK_DISTRIBUTIONS))


@dataclass
class Answers:
    """What the SDK answered, per negotiated protocol version (written by gateway/handshake.py)."""

    versions: list[str]
    latest: str
    initialize: dict[str, dict[str, Any]]
    ping: dict[str, dict[str, Any]]
    tools: dict[str, dict[str, dict[str, Any]]]  # version -> tool name -> tool as the host receives it
    tools_rest: dict[str, dict[str, Any]]  # version -> the rest of the tools/list result
    profiles: dict[str, list[str]]  # profile -> tool names in listing order
    needs: dict[str, list[str]]  # tool name -> capabilities it needs

    def negotiate(self, requested: str) -> str:
        return requested if requested in self.versions else self.latest

    def tool_list(self, version: str, profile: str, capabilities: frozenset[str]) -> tuple[dict[str, Any], list[str]]:
        """The tools/list result and the names listed: the profile's tools the capabilities serve."""
        names = [name for name in self.profiles[profile] if set(self.needs[name]) <= capabilities]
        return {**self.tools_rest[version], "tools": [self.tools[version][name] for name in names]}, names


def load_answers(settings: Settings) -> Answers | None:
    """The recorded answers when they describe this code and SDK, else None."""
    try:
        record = json.loads(cache_path(settings).read_bytes())
        if record.get("format") != CACHE_FORMAT or record.get("key") != record_key(settings):
            return None
        return Answers(**record["answers"])
    except (OSError, ValueError, TypeError, KeyError):
        return None


def write_answers(settings: Settings, answers: dict[str, Any]) -> Path:
    """Store the record privately (0700 directory, 0600 file), replacing any older one at once."""
    path = cache_path(settings)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump({"format": CACHE_FORMAT, "key": record_key(settings), "answers": answers}, out)
    os.replace(temporary, path)
    return path


# -- the fast phase ----------------------------------------------------------------------------
@dataclass
class Handover:
    """The stream state the gateway's own session continues from."""

    claim: Claim
    wire_out: BinaryIO
    answers: Answers  # the record the fast phase answered from
    prefix: bytes = b""  # bytes read past the last whole line
    pending: list[bytes] = field(default_factory=list)  # lines read, not answered, in order
    eof: bool = False
    listed: list[str] | None = None  # tool names the client received
    version: str | None = None  # the protocol version initialize negotiated (None: not answered)
    capabilities: frozenset[str] | None = None
    capabilities_at: float = 0.0
    answered: list[str] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)


class _FastPhase:
    def __init__(self, settings: Settings, answers: Answers):
        self.settings, self.answers = settings, answers
        self.claim = Claim()
        self.wire_out = os.fdopen(self.claim.wire_out, "wb", closefd=False)
        self.state = Handover(self.claim, self.wire_out, answers)
        self.version: str | None = None

    def run(self) -> Handover:
        buffer = bytearray()
        while True:
            newline = buffer.find(b"\n")
            if newline < 0:
                wait = min(IDLE_S, self.state.started + FAST_PHASE_MAX_S - time.monotonic())
                if len(buffer) > FAST_LINE_MAX or wait <= 0 or not select.select([self.claim.wire_in], [], [], wait)[0]:
                    return self._hand_over(buffer)
                chunk = os.read(self.claim.wire_in, 65536)
                if not chunk:
                    self.state.eof = not buffer
                    return self._hand_over(buffer)
                buffer += chunk
                continue
            raw = bytes(buffer[:newline]).rstrip(b"\r")
            del buffer[:newline + 1]
            try:
                if time.monotonic() - self.state.started > FAST_PHASE_MAX_S or not self._answer(raw):
                    self.state.pending.append(raw)
                    return self._hand_over(buffer)
            except OSError:  # the client closed its end while we answered: the session is over
                self.state.eof = True
                return self._hand_over(bytearray())

    def _hand_over(self, rest: bytearray) -> Handover:
        self.state.prefix = bytes(rest)
        return self.state

    def _answer(self, raw: bytes) -> bool:
        """Answer one frame as the SDK would; False when the SDK must (nothing was sent)."""
        message = plain_message(raw.decode("utf-8", "replace"))
        if message is None or not set(message) <= {"jsonrpc", "id", "method", "params"}:
            return False
        method, params, request = message.get("method"), message.get("params"), "id" in message
        if self.version is None:
            if method != "initialize" or not request or not acceptable_initialize(params):
                return False
            self.version = self.answers.negotiate(params["protocolVersion"])  # type: ignore[index]
            self.state.version = self.version
            self._reply(message["id"], self.answers.initialize[self.version])
            return True
        if params not in (None, {}):
            return False
        if method == "notifications/initialized" and not request and method not in self.state.answered:
            self.state.answered.append(method)
            return True
        if method == "ping" and request:
            self._reply(message["id"], self.answers.ping[self.version])
            return True
        if method == "tools/list" and request:
            capabilities = self._capabilities()
            if capabilities is None:
                return False
            result, names = self.answers.tool_list(self.version, self.settings.mcp_profile, capabilities)
            self._reply(message["id"], result)
            self.state.listed, self.state.capabilities = names, capabilities
            self.state.capabilities_at = time.monotonic()
            return True
        return False

    def _reply(self, request_id: Any, result: dict[str, Any]) -> None:
        frame = {"jsonrpc": "2.0", "id": request_id, "result": result}
        self.wire_out.write(json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        self.wire_out.flush()
        self.state.answered.append(str(frame["id"]))

    def _capabilities(self) -> frozenset[str] | None:
        """What search_svc reports, or None when it cannot say now (the SDK path then asks,
        starting the stack if it is down)."""
        try:
            from mnemo.grpc_client import open_channel
            from mnemo.v1 import search_pb2, search_pb2_grpc

            settings = self.settings
            channel = open_channel(settings.address("search"), tls_ca=settings.tls_ca, auth_token=settings.auth_token)
            try:
                stub = search_pb2_grpc.SearchServiceStub(channel)
                timeout = min(settings.rpc_timeout_s, CAPABILITIES_TIMEOUT_S)
                reply = stub.GetCapabilities(search_pb2.GetCapabilitiesRequest(), timeout=timeout)
            finally:
                channel.close()
        except Exception:  # noqa: BLE001 - whatever failed, the SDK path asks again and reports it
            return None
        return frozenset(reply.capabilities)


# The client capabilities served fast, with the type of each of their keys (None: any key, each
# an object). The SDK validates more shapes; those it is left to answer.
_CAPABILITY_SHAPES: dict[str, dict[str, type] | None] = {
    "roots": {"listChanged": bool}, "sampling": {"context": dict, "tools": dict},
    "elicitation": {"form": dict, "url": dict}, "experimental": None, "extensions": None,
}


def acceptable_initialize(params: Any) -> bool:
    """Initialize params the SDK accepts, in the plain shapes hosts send; anything else (icons,
    tasks, _meta, a value of an unexpected type) is left to the SDK to validate and answer."""
    if not isinstance(params, dict) or not set(params) <= {"protocolVersion", "capabilities", "clientInfo"}:
        return False
    info, capabilities = params.get("clientInfo"), params.get("capabilities")
    if not isinstance(params.get("protocolVersion"), str) or not isinstance(info, dict):
        return False
    if not {"name", "version"} <= set(info) <= {"name", "version", "title", "description", "websiteUrl"}:
        return False
    if not all(isinstance(value, str) for value in info.values()) or not isinstance(capabilities, dict):
        return False
    for name, value in capabilities.items():
        if name not in _CAPABILITY_SHAPES or not isinstance(value, dict):
            return False
        fields = _CAPABILITY_SHAPES[name]
        for key, item in value.items():
            expected = dict if fields is None else fields.get(key)
            if expected is None or not isinstance(item, expected):
                return False
    return True


def applies(settings: Settings) -> bool:
    """Whether this gateway starts fast when a record exists: not when switched off, and not in
    the server runtime, whose list the team server decides."""
    return settings.mcp_fast_start and not is_server_runtime(settings)


def serve_fast(settings: Settings) -> Handover | None:
    """Run the fast phase; None when it cannot answer exactly as the SDK would (no record for
    this code, the server runtime, switched off), and the SDK serves from the first frame."""
    if not applies(settings):
        return None
    answers = load_answers(settings)
    if answers is None or settings.mcp_profile not in answers.profiles:
        return None
    return _FastPhase(settings, answers).run()
