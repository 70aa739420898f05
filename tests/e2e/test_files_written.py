"""Every file the whole stack writes during a session is under MNEMO_HOME (issue 35).

Each process runs under `strace -f`: `mnemo up` (the supervisor, store_svc, vector_svc with the
int8 embedder, which loads onnxruntime, and search_svc), the gateway spawned by the MCP SDK's stdio
client, every hook as a `mnemo hook <Event>` process, and `mnemo down`. Every successful system
call that creates or writes a path (open/openat/creat for writing, mkdir, rename, link, symlink,
mknod, truncate) is listed, resolved to an absolute path, and each one outside the home fails the
test by name. HOME, TMPDIR and the working directory are fresh directories outside the home, so
a write to ~/.cache, to a temporary file or next to the caller shows. Not files: /dev (null, tty,
shared-memory semaphores) and /proc. Python's own bytecode cache is turned off
(PYTHONDONTWRITEBYTECODE): it is the interpreter's, written next to the installed code.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest

from bench.harness import GATEWAY_ARGV
from mnemo.stack import run_down, service_healthy
from tests.conftest import processes_of, subprocess_env, wait_for
from tests.e2e.test_home_privacy import HOOK_EVENTS, MNEMO, hook_payload, int8_model_loaded, wait_vectors_caught_up
from tests.service.gateway.mcp_support import result_text

STRACE = shutil.which("strace")


def _can_trace() -> bool:
    """strace is installed and this machine lets it trace (a container may forbid ptrace)."""
    return STRACE is not None and subprocess.run([STRACE, "-o", os.devnull, "true"], capture_output=True,
                                                 timeout=30).returncode == 0


pytestmark = [pytest.mark.e2e, pytest.mark.slow,
              pytest.mark.skipif(not _can_trace(), reason="needs strace, allowed to trace, to see every file written")]

SYSCALLS = ("open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat,"
            "mknod,mknodat,truncate")
WRITING = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND")
# openat(AT_FDCWD</cwd>, "path", FLAGS...) = 3</resolved>   (strace -y decodes every fd as its path)
OPEN = re.compile(r'^(open|openat|creat)\((?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"([^"]*)", ?([^)]*)\)'
                  r'\s+= (\d+)(?:<([^>]*)>)?')
# mkdir("path", 0700) = 0 / renameat2(AT_FDCWD</d>, "a", AT_FDCWD</d>, "b", 0) = 0: the last path is the new one
OTHER = re.compile(r'^(mkdir|mkdirat|rename|renameat|renameat2|link|linkat|symlink|symlinkat|mknod|mknodat|truncate)'
                   r'\((.*)\)\s+= 0$')
PATH_ARG = re.compile(r'(?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"([^"]*)"')
NOT_FILES = ("/dev/", "/proc/")


def traced(log: Path, argv: list[str]) -> list[str]:
    """`argv` under strace: every process and thread it starts, one log file per process."""
    return [str(STRACE), "-f", "-ff", "-qq", "-y", "-e", f"trace={SYSCALLS}", "-e", "signal=none",
            "-o", str(log), *argv]


def written_paths(logs: Path, start_cwd: Path) -> set[str]:
    """Absolute paths the traced processes created or wrote, from every log under `logs`."""
    found: set[str] = set()
    for log in logs.iterdir():
        cwd = str(start_cwd)  # a process's working directory, as its last AT_FDCWD<...> showed it
        for line in log.read_text(errors="replace").splitlines():
            seen_cwd = re.search(r"AT_FDCWD<([^>]*)>", line)
            if seen_cwd:
                cwd = seen_cwd.group(1)
            opened = OPEN.match(line)
            if opened:
                kind, base, path, flags, _, resolved = opened.groups()
                if kind == "creat" or WRITING.search(flags):
                    found.add(resolved or os.path.join(base or cwd, path))
                continue
            other = OTHER.match(line)
            if other:
                base, path = PATH_ARG.findall(other.group(2))[-1]
                found.add(os.path.normpath(os.path.join(base or cwd, path)))
    return found


def outside(paths: set[str], home: Path) -> list[str]:
    root = os.path.realpath(home)
    return sorted(p for p in paths if not p.startswith(NOT_FILES) and not (
        os.path.realpath(p) == root or os.path.realpath(p).startswith(root + os.sep)))


def test_every_file_the_stack_writes_in_a_session_is_under_the_home(settings, tmp_path):
    logs, user_home, tmpdir, cwd = (tmp_path / name for name in ("strace", "user-home", "tmp", "cwd"))
    for directory in (logs, user_home, tmpdir, cwd):
        directory.mkdir()
    extra = {"HOME": str(user_home), "TMPDIR": str(tmpdir), "MNEMO_EMBEDDER": "minilm-int8",
             "PYTHONDONTWRITEBYTECODE": "1", "MNEMO_LOG_LEVEL": "debug"}
    env = subprocess_env(settings, **extra)

    def run(name: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(traced(logs / name, [*MNEMO, *args]), input=stdin, env=env, cwd=str(cwd),
                              capture_output=True, text=True, timeout=180)

    # strace waits for every process it traces: `mnemo up` leaves the supervisor behind, so it
    # runs in the background until `mnemo down`.
    up = subprocess.Popen(traced(logs / "up", [*MNEMO, "up"]), env=env, cwd=str(cwd),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: all(service_healthy(settings, name) for name in ("store", "vector", "search")),
                 180, "the stack under strace")
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        gateway_env = dict(env, MNEMO_LOG_FILE=str(settings.logs_dir / "gateway.log"))
        params = StdioServerParameters(command=str(STRACE), args=traced(logs / "gateway", GATEWAY_ARGV)[1:],
                                       env=gateway_env, cwd=str(cwd))

        async def session() -> None:
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                    await client.initialize()
                    for tool, args in (("save_memory", {"text": "The deploy script lives in ops/deploy.sh"}),
                                       ("mem_search", {"query": "where is the deploy script?"}),
                                       ("build_corpus", {"name": "ops"}),
                                       ("list_corpora", {})):
                        reply = await client.call_tool(tool, args)
                        assert not reply.is_error, f"{tool}: {result_text(reply)}"

        anyio.run(session)
        for event in HOOK_EVENTS:
            hooked = run(f"hook-{event}", "hook", event, stdin=json.dumps(hook_payload(event, "traced", False)))
            assert hooked.returncode == 0, hooked.stderr
        wait_vectors_caught_up(settings)
        assert int8_model_loaded(settings), "the int8 embedder never loaded: onnxruntime went untested"
    finally:
        down = run("down", "down")
        try:
            up.wait(timeout=120)
        finally:
            run_down(settings, None)
            for pid, argv in processes_of(settings.home):
                if b"serve" in argv or b"supervise" in argv:
                    os.kill(pid, 9)
    assert down.returncode == 0, down.stderr
    paths = written_paths(logs, cwd)
    assert any(p.startswith(str(settings.home)) for p in paths), "no write seen at all: the trace proves nothing"
    assert outside(paths, settings.home) == []
