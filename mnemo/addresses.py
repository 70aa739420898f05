"""Address settings that name replicas: `host:port,host:port` becomes one load-balanced channel target.

A single address is passed to gRPC as it is (`unix:PATH`, `HOST:PORT`, `dns:///NAME:PORT`),
so the local runtime and one-server deployments behave exactly as before. A comma-separated
list names the replicas of one service: gRPC's own round_robin policy spreads calls over
them, skips a replica whose connection failed, and reconnects to it in the background; the
retry policy below sends a call whose replica died under it to another one.

Which calls are retried: a call that failed with UNAVAILABLE may have reached a replica
that was killed after it committed, so only methods whose repetition creates nothing twice
are listed (reads; writes keyed by external ids, tool_use_id, content hashes, or upserts).
WriteWorkState (every write is a new version), EditObservation, PutCorpus/UpdateCorpus and
the corpus jobs are left out: a failure there is reported, never silently repeated.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from dataclasses import dataclass

from mnemo.errors import InvalidArgument

# Methods safe to repeat after UNAVAILABLE (see the module docstring), per service.
IDEMPOTENT_METHODS: dict[str, tuple[str, ...]] = {
    "mnemo.v1.StoreService": (
        # reads
        "GetRecords", "Hydrate", "GetToolUses", "ListRecent", "Search", "Timeline", "ReadChanges", "Stats",
        "LoadCursor", "ReadWorkState", "GetCorpus", "ListCorpora", "Export", "Activity",
        # writes that dedupe: upserts, external ids, tool_use_id, (session, content hash), deletes
        "UpsertSession", "CompleteSession", "RecordPrompt", "AddObservations", "AddSummaries", "RecordToolUse",
        "SaveCursor", "PurgeCursors", "DeleteRecords", "Import", "Forget", "MarkWrong", "AcquireLease",
    ),
    "mnemo.v1.SearchService": (
        "GetCapabilities", "Search", "Timeline", "GetObservations", "MemSearch", "GetToolUses", "ReadWorkState",
        "SessionStartContext", "ListCorpora", "QueryCorpus", "GetRecordDetail", "Overview",
        # save_memory is keyed by (manual-<project>, content hash); forget and mark-wrong are idempotent
        "SaveMemory", "Forget", "MarkWrong",
    ),
    "mnemo.v1.VectorService": (
        "Query", "Count", "Status", "Sync", "QueryCorpus", "UpsertCorpusDocuments", "DropCorpus",
    ),
}

RETRY_POLICY = {
    # 4 attempts: with two replicas, the first retry usually lands on the live one; the
    # others cover the moment both subchannels are reconnecting after a kill.
    "maxAttempts": 4,
    "initialBackoff": "0.05s",
    "maxBackoff": "0.5s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}


def service_config() -> str:
    """The JSON service config of a replica list: round robin, and retries of idempotent methods."""
    names = [{"service": service, "method": method}
             for service, methods in IDEMPOTENT_METHODS.items() for method in methods]
    return json.dumps({
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [{"name": names, "retryPolicy": RETRY_POLICY}],
    })


@dataclass(frozen=True)
class Target:
    """What a channel is opened on: the gRPC target, its TLS host name, and extra channel options."""

    target: str
    entries: tuple[str, ...]
    tls_name: str = ""
    options: tuple[tuple[str, object], ...] = ()

    @property
    def replicated(self) -> bool:
        return len(self.entries) > 1


def entries(value: str) -> list[str]:
    return [entry.strip() for entry in value.split(",")]


def _host_port(entry: str, setting: str) -> tuple[str, int]:
    if entry.startswith(("unix:", "dns:", "ipv4:", "ipv6:")):
        raise InvalidArgument(setting, f"{entry!r}: a list of replicas holds HOST:PORT entries only "
                                       "(no unix: or scheme prefixes)")
    host, sep, port = entry.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidArgument(setting, f"{entry!r} is not HOST:PORT (port 1-65535)")
    return host, int(port)


def _resolve(host: str, port: int, setting: str) -> list[str]:
    """IP literals as they are; a host name resolved once, now (its addresses are all replicas)."""
    try:
        ip = ipaddress.ip_address(host)
        return [f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise InvalidArgument(setting, f"cannot resolve host {host!r}: {err}") from None
    v4 = [f"{info[4][0]}:{port}" for info in infos if info[0] == socket.AF_INET]
    v6 = [f"[{info[4][0]}]:{port}" for info in infos if info[0] == socket.AF_INET6]
    return list(dict.fromkeys(v4 or v6))


def check(value: str, setting: str) -> None:
    """Refuse a malformed list of replicas now, naming the setting (syntax only: no DNS lookup)."""
    parts = entries(value)
    if any(not part for part in parts):
        raise InvalidArgument(setting, f"{value!r}: empty address in the list")
    for part in parts:
        _host_port(part, setting)


def parse(value: str, setting: str = "address") -> Target:
    """The channel target of an address setting: one address as it is, or a list of replicas.

    Raises InvalidArgument naming `setting` when the value is empty or an entry is not an address.
    """
    parts = entries(value)
    if not value.strip() or any(not part for part in parts):
        raise InvalidArgument(setting, f"{value!r}: empty address (give HOST:PORT, a comma-separated "
                                       "list of them, or unix:PATH)")
    if len(parts) == 1:
        return Target(target=parts[0], entries=(parts[0],))
    resolved: list[str] = []
    hosts = [_host_port(part, setting) for part in parts]
    for host, port in hosts:
        resolved.extend(_resolve(host, port, setting))
    families = {"ipv6" if address.startswith("[") else "ipv4" for address in resolved}
    if len(families) > 1:
        raise InvalidArgument(setting, f"{value!r} mixes IPv4 and IPv6 replicas; use one family")
    family = families.pop()
    first_host = hosts[0][0]
    # TLS checks every replica's certificate against the first entry's host name (the
    # replicas of one service share a certificate naming it; see docs/server.md).
    tls_name = "" if _is_ip(first_host) else first_host
    options: list[tuple[str, object]] = [("grpc.service_config", service_config()), ("grpc.enable_retries", 1)]
    if tls_name:
        options += [("grpc.ssl_target_name_override", tls_name), ("grpc.default_authority", tls_name)]
    return Target(target=f"{family}:{','.join(dict.fromkeys(resolved))}", entries=tuple(parts),
                  tls_name=tls_name, options=tuple(options))


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
