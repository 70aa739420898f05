"""The home is its user's alone, and text inside <private> reaches no file.

Real processes all the way: `mnemo up` (the supervisor and three services), the gateway
spawned by the MCP SDK's stdio client, hooks as `mnemo hook <Event>` subprocesses, all
started with the most permissive umask (000). Then every file under the home, Chroma's
and the logs included, is checked: its mode, and its bytes for every planted secret.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from mnemo.grpc_client import open_channel
from mnemo.stack import run_down
from mnemo.v1 import vector_pb2, vector_pb2_grpc
from tests.conftest import REPO_ROOT, processes_of, subprocess_env, wait_for
from tests.service.gateway.mcp_support import gateway_env, mcp_session, result_text

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MNEMO = [sys.executable, "-m", "mnemo.cli"]
# Debug, so that every RPC is logged; logs large enough that no line rotates away unread.
LOG_ENV = {"MNEMO_LOG_LEVEL": "debug", "MNEMO_LOG_MAX_BYTES": str(256 * 1024 * 1024)}
# Small logs for the file-mode test, so that it sees rotated files too.
SMALL_LOGS = {"MNEMO_LOG_MAX_BYTES": "4096", "MNEMO_LOG_LEVEL": "debug"}
# Tools whose storage path must have run for the grep to mean something.
MUST_SUCCEED = ("save_memory", "work_state_write", "build_corpus", "query_corpus", "mem_search")
# Writes first, so that the reads and the corpus have something to find.
ORDER = ("save_memory", "work_state_write", "build_corpus", "prime_corpus", "query_corpus")
CORPUS = "privcorpus"
# Tools whose `project` only says which corpus of the name (corpus names are each project's own).
CORPUS_LOOKUPS = ("prime_corpus", "query_corpus", "rebuild_corpus", "reprime_corpus")


@pytest.fixture
def open_home(settings):
    """A home that starts world-readable, and a test process umask of 000; both undone after."""
    os.chmod(settings.home, 0o755)
    for directory in (settings.logs_dir, settings.run_dir):
        os.chmod(directory, 0o755)
    old_log = settings.logs_dir / "old.log"
    old_log.write_text("written by an older version\n")
    os.chmod(old_log, 0o644)
    previous = os.umask(0)
    try:
        yield settings
    finally:
        os.umask(previous)
        run_down(settings, None)
        for pid, argv in processes_of(settings.home):
            if b"serve" in argv or b"supervise" in argv:
                os.kill(pid, 9)


def mnemo(settings, *args: str, stdin: str | None = None, timeout: float = 120,
          env: dict[str, str] = LOG_ENV) -> subprocess.CompletedProcess:
    return subprocess.run([*MNEMO, *args], input=stdin, env=subprocess_env(settings, **env),
                          cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=timeout, umask=0)


def wait_vectors_caught_up(settings) -> None:
    channel = open_channel(settings.address("vector"))
    stub = vector_pb2_grpc.VectorServiceStub(channel)
    try:
        wait_for(lambda: stub.Status(vector_pb2.VectorStatusRequest(), timeout=5).lag <= 0, 60, "vector catch-up")
    finally:
        channel.close()


def int8_model_loaded(settings) -> bool:
    """vector_svc says so (its onnxruntime files in the home may be written later, by a thread)."""
    channel = open_channel(settings.address("vector"))
    try:
        status = vector_pb2_grpc.VectorServiceStub(channel).Status(vector_pb2.VectorStatusRequest(), timeout=5)
    finally:
        channel.close()
    return status.model_loaded and "int8" in status.model


# -- planting secrets -------------------------------------------------------------------
def secret(*where: str) -> str:
    """A distinct marker per argument, FTS-tokenizer proof (letters and digits only)."""
    return "zqprivate" + "x".join(part.replace("_", "").replace("-", "").lower() for part in where)


def private(*where: str) -> str:
    return f"keep this <private>{secret(*where)}</private> public"


def _plain_value(prop: dict):
    """A valid value for a constrained or non-text property."""
    kinds = prop.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in prop:
        return prop["enum"][0]
    if "integer" in kinds:
        return prop.get("minimum", 1)
    if prop.get("pattern", "").startswith("^[a-zA-Z0-9._-]"):
        return CORPUS
    if kinds == ["array"]:
        return [_plain_value(prop["items"])]
    return None


def _free_text(name: str, prop: dict) -> bool:
    """A string property that takes any text (no enum, no pattern, not a date)."""
    return (prop.get("type") == "string" and "enum" not in prop and "pattern" not in prop
            and "date" not in name.lower())


def storing_arguments(tool: str, schema: dict) -> dict:
    """Valid arguments with a private secret in every free-text property (arrays included)."""
    arguments = {}
    for name, prop in schema.get("properties", {}).items():
        if name in ("continuation", "selectedIds", "anchor", "offset") or "date" in name.lower():
            continue
        if name == "project" and tool in CORPUS_LOOKUPS:
            continue  # a lookup key, never stored: the corpus over all projects that the calls built is meant
        if _free_text(name, prop):
            arguments[name] = private(tool, name)
        elif prop.get("type") == "array" and _free_text(name, prop["items"]):
            arguments[name] = [private(tool, name)]
        elif (value := _plain_value(prop)) is not None:
            arguments[name] = value
    return arguments


def rejected_arguments(tool: str, schema: dict) -> list[dict]:
    """One call per string property (constrained ones too) carrying a secret: the rejection path."""
    calls = []
    base = {name: _plain_value(prop) or "x" for name, prop in schema.get("properties", {}).items()
            if name in schema.get("required", [])}
    for name, prop in schema.get("properties", {}).items():
        if prop.get("type") == "string" or "string" in (prop.get("type") or []):
            calls.append({**base, name: "bad " * 3 + private(tool, name, "rejected")})
    return calls


async def _call_every_tool(settings) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    async with mcp_session(gateway_env(settings, **LOG_ENV)) as session:
        tools = {tool.name: tool.input_schema for tool in (await session.list_tools()).tools}
        for name in sorted(tools, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
            result = await session.call_tool(name, storing_arguments(name, tools[name]))
            outcomes[name] = ("error: " if result.is_error else "ok: ") + result_text(result)[:200]
            for arguments in rejected_arguments(name, tools[name]):
                await session.call_tool(name, arguments)
    return outcomes


HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd")


def hook_payload(event: str, session: str, identifiers_private: bool) -> dict:
    """Every field a host sends, content fields (or, second round, identifiers) carrying a secret."""
    text = lambda field: private("hook", event, field)  # noqa: E731 - a one-line helper for the table
    ident = (lambda field: f"id-{field}-" + private("hookid", event, field)) if identifiers_private \
        else (lambda field: f"{session}-{field}")
    return {
        "session_id": ident("session") if identifiers_private else session,
        "hook_event_name": event,
        "transcript_path": ident("transcript"),
        "cwd": "/tmp/" + (ident("cwd") if identifiers_private else "privproject"),
        "source": "startup",
        "prompt": text("prompt"),
        "tool_name": ident("tool") if identifiers_private else "Bash",
        "tool_use_id": ident("tooluse"),
        "tool_input": {"command": text("command"), "description": text("description")},
        "tool_response": {"stdout": text("stdout"), "stderr": text("stderr"), "interrupted": False},
        "last_assistant_message": text("lastmessage"),
        "agent_type": ident("agenttype"),
        "agent_id": ident("agentid"),
        "reason": text("reason"),
    }


def run_every_hook(settings, identifiers_private: bool) -> list[str]:
    failures = []
    for event in HOOK_EVENTS:
        payload = hook_payload(event, "privsession", identifiers_private)
        done = mnemo(settings, "hook", event, stdin=json.dumps(payload))
        if done.returncode != 0:
            failures.append(f"{event}: exit {done.returncode} {done.stderr[-300:]}")
    return failures


def find_secrets(home: Path) -> dict[str, list[str]]:
    """Every marker found in any file under the home (binary-safe, case-insensitive: FTS
    indexes keep terms lowercased), with the files it was found in."""
    found: dict[str, list[str]] = {}
    for path in home.rglob("*"):
        if not path.is_file() or path.is_symlink():
            continue
        data = path.read_bytes().lower()
        start = data.find(b"zqprivate")
        while start != -1:
            end = start + len(b"zqprivate")
            while end < len(data) and chr(data[end]).isalnum():
                end += 1
            files = found.setdefault(data[start:end].decode("ascii", "replace"), [])
            if str(path.relative_to(home)) not in files:
                files.append(str(path.relative_to(home)))
            start = data.find(b"zqprivate", end)
    return found


def assert_no_secret_in_any_file(settings) -> None:
    wait_vectors_caught_up(settings)
    assert mnemo(settings, "down").returncode == 0  # services closed: SQLite checkpointed its WAL
    leaks = find_secrets(settings.home)
    assert not leaks, f"private text found in files: {json.dumps(leaks, indent=1)[:3000]}"


def test_private_text_in_every_tool_argument_and_hook_text_field_reaches_no_file(open_home):
    settings = open_home
    up = mnemo(settings, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    outcomes = anyio.run(_call_every_tool, settings)
    for tool in MUST_SUCCEED:
        assert outcomes.get(tool, "missing").startswith("ok"), (tool, outcomes.get(tool))
    hook_failures = run_every_hook(settings, identifiers_private=False)
    assert not hook_failures, hook_failures
    assert_no_secret_in_any_file(settings)


def test_private_text_in_every_hook_identifier_reaches_no_file(open_home):
    settings = open_home
    up = mnemo(settings, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    hook_failures = run_every_hook(settings, identifiers_private=True)
    assert not hook_failures, hook_failures
    assert_no_secret_in_any_file(settings)


# -- file modes ---------------------------------------------------------------------------
def modes_under(root: Path) -> dict[str, int]:
    modes = {}
    for parent, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(parent) / name
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode):
                modes[str(path.relative_to(root))] = stat.S_IMODE(info.st_mode)
    modes["."] = stat.S_IMODE(root.stat().st_mode)
    return modes


def test_every_file_under_the_home_is_private_whatever_the_umask(open_home):
    settings = open_home
    up = mnemo(settings, "up", env=SMALL_LOGS)
    assert up.returncode == 0, up.stdout + up.stderr

    async def save_some() -> None:
        async with mcp_session(gateway_env(settings, **SMALL_LOGS)) as session:
            for i in range(30):
                saved = await session.call_tool("save_memory", {"text": f"memory number {i} about modes"})
                assert not saved.is_error, result_text(saved)

    anyio.run(save_some)
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse"):  # the session stays open: its journal too
        payload = json.dumps(hook_payload(event, "modes", False))
        assert mnemo(settings, "hook", event, stdin=payload, env=SMALL_LOGS).returncode == 0
    wait_vectors_caught_up(settings)

    modes = modes_under(settings.home)  # while running: -wal and -shm exist
    names = set(modes)
    assert "mnemo.db-wal" in names and any(name.startswith("chroma/") for name in names), sorted(names)
    assert any(name.startswith("logs/") and name.split(".")[-1].isdigit() for name in names), sorted(names)
    assert any(name.startswith("capture/") and (settings.home / name).is_file() for name in names), sorted(names)
    loose = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o700 if (settings.home / name).is_dir() else 0o600)}
    assert not loose, loose
    tightened = [json.loads(line) for path in settings.logs_dir.glob("supervisor.log*")
                 for line in path.read_text().splitlines() if '"home_tightened"' in line]
    assert tightened and any(p.endswith("old.log") for p in tightened[0]["paths"])


def test_another_user_cannot_read_the_database(open_home):
    if os.geteuid() != 0:
        pytest.skip("needs root to act as a second user (the CI container runs tests as root)")
    settings = open_home
    up = mnemo(settings, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    assert settings.database.exists()
    probe = ("import os, sys\nos.setgid(65534); os.setuid(65534)\n"
             "for path in sys.argv[1:]:\n"
             "    try:\n        open(path, 'rb').read(1)\n    except PermissionError:\n        continue\n"
             "    print('READ', path); sys.exit(1)\n")
    targets = [str(settings.database), str(settings.home / "mnemo.db-wal"), str(settings.logs_dir / "store.log")]
    done = subprocess.run([sys.executable, "-c", probe, *targets], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    # The probe itself works: the same user reads a file it may read.
    readable = settings.home.parent / f"{settings.home.name}-readable"
    readable.write_text("x")
    os.chmod(readable, 0o644)
    try:
        denied = subprocess.run([sys.executable, "-c", probe, str(readable)], capture_output=True, text=True,
                                timeout=30)
    finally:
        readable.unlink()
    assert denied.returncode == 1 and "READ" in denied.stdout


# -- nothing outside the home ------------------------------------------------------------
def files_under(root: Path) -> list[str]:
    return sorted(str(Path(parent, name).relative_to(root)) for parent, _, names in os.walk(root) for name in names)


def test_a_whole_session_writes_no_file_outside_the_home(settings, tmp_path):
    """HOME is a fresh directory and MNEMO_HOME another: after the stack, the gateway, every
    hook and the int8 embedder (onnxruntime, which writes under ~/.cache on import) have run,
    HOME holds nothing. The real embedder on purpose: the hash one loads no library."""
    user_home = tmp_path / "user-home"
    user_home.mkdir()
    env = {"HOME": str(user_home), "MNEMO_EMBEDDER": "minilm-int8"}
    try:
        up = mnemo(settings, "up", env=env)
        assert up.returncode == 0, up.stdout + up.stderr

        async def session() -> None:
            async with mcp_session(gateway_env(settings, **env)) as client:
                saved = await client.call_tool("save_memory", {"text": "The deploy script lives in ops/deploy.sh"})
                assert not saved.is_error, result_text(saved)
                found = await client.call_tool("mem_search", {"query": "where is the deploy script?"})
                assert not found.is_error, result_text(found)

        anyio.run(session)
        for event in HOOK_EVENTS:
            payload = json.dumps(hook_payload(event, "outside", False))
            assert mnemo(settings, "hook", event, stdin=payload, env=env).returncode == 0
        wait_vectors_caught_up(settings)
        assert int8_model_loaded(settings), "the int8 embedder never loaded: the test proves nothing"
    finally:
        mnemo(settings, "down", env=env)
    assert files_under(user_home) == []
