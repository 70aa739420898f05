"""Every shell example in the docs runs as written against a real local stack.

The stack is what `make run` gives a reader: `mnemo up` in a private MNEMO_HOME (the hash
embedder, so it starts in seconds) holding one saved memory. Each command of a runnable block (see
tests/docs_support.py) runs with bash from a scratch directory, with `.venv/bin/` meaning
this interpreter's bin directory and HOME pointing at a scratch directory (so
`mnemo install claude-code` touches no real settings). Two things differ from a terminal,
both on purpose: the loopback ports an example names are replaced by free ports (tests run
in parallel), and a command ending in `&` is started in the background, waited for until
its `--listen` address is healthy, and stopped when its block ends.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemo.config import SERVICES
from mnemo.grpc_client import check_health
from tests.conftest import REPO_ROOT
from tests.docs_support import Block, all_blocks, commands, first_word
from tests.grpcurl_support import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
RUNNABLE = [block for block in all_blocks() if block.is_shell and block.not_run is None]
_LOOPBACK_PORT = re.compile(r"127\.0\.0\.1:(\d+)")
_VENV_PATH = re.compile(r"(?<![\w/.])\.venv/bin/")
_GRPC_METHOD = re.compile(r"^[A-Za-z_][\w.]*\.[A-Za-z_]\w*/[A-Za-z_]\w*$")


class Sandbox:
    """A private MNEMO_HOME with the local stack, and the environment examples run in."""

    def __init__(self, root: Path):
        self.home = root / "home"
        self.user_home = root / "user"
        self.workdir = root / "work"
        for path in (self.home, self.user_home, self.workdir):
            path.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        self.env.update({"MNEMO_HOME": str(self.home), "MNEMO_EMBEDDER": "hash", "MNEMO_LOG_LEVEL": "warning",
                         "MNEMO_VECTOR_POLL_MS": "50", "HOME": str(self.user_home), "PYTHONPATH": str(REPO_ROOT)})

    def mnemo(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(VENV_BIN / "mnemo"), *args], env=self.env, cwd=self.workdir,
                              capture_output=True, text=True, timeout=120)

    def seed(self) -> None:
        """One memory in project `myapp`, as a reader's home would hold: the export example names it."""
        saved = subprocess.run([str(VENV_BIN / "grpcurl"), "-plaintext", "-unix", "-d",
                                json.dumps({"text": "The docs examples run against this stack", "project": "myapp"}),
                                str(self.home / "run" / "search.sock"), "mnemo.v1.SearchService/SaveMemory"],
                               capture_output=True, text=True, timeout=60)
        assert saved.returncode == 0, saved.stderr

    def ensure_up(self) -> None:
        """The stack `make run` leaves running; an example may have stopped it (`mnemo down`)."""
        if all(check_health(f"unix:{self.home / 'run' / f'{svc}.sock'}", timeout=0.5) for svc in SERVICES):
            return
        up = self.mnemo("up")
        assert up.returncode == 0, up.stdout + up.stderr


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    # Short path under /tmp: Unix socket paths are limited to 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="mnemo-docs-"))
    box = Sandbox(root)
    try:
        box.ensure_up()
        box.seed()
        yield box
    finally:
        down = box.mnemo("down")
        shutil.rmtree(root, ignore_errors=True)
        assert down.returncode == 0, down.stdout + down.stderr


def localise(command: str, ports: dict[str, int]) -> str:
    """The command as it runs here: this venv's bin directory, a free port per example port."""
    command = _VENV_PATH.sub(f"{VENV_BIN}/", command)

    def free(match: re.Match[str]) -> str:
        return f"127.0.0.1:{ports.setdefault(match[1], free_port())}"

    return _LOOPBACK_PORT.sub(free, command)


def is_background(command: str) -> bool:
    return bool(re.search(r"\s&$", command))


def start_background(command: str, box: Sandbox, where: str) -> subprocess.Popen[bytes]:
    """Start `cmd ... --listen ADDRESS &` and return once ADDRESS answers health checks."""
    listen = re.search(r"--listen\s+(\S+)", command)
    assert listen, f"{where}: a background example must name its --listen address: {command}"
    proc = subprocess.Popen(["bash", "-c", f"exec {command.removesuffix('&').rstrip()}"], env=box.env,
                            cwd=box.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not check_health(listen[1], timeout=0.5):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{where}: {command} never became healthy: {proc.communicate()[1].decode()[-2000:]}")
    return proc


def run_command(command: str, box: Sandbox, where: str) -> None:
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=box.env, cwd=box.workdir,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}:\n{done.stderr[-2000:]}"
    if first_word(command).endswith("/grpcurl"):
        check_grpcurl_reply(command, done.stdout, where)


def check_grpcurl_reply(command: str, stdout: str, where: str) -> None:
    """A call answers a JSON object; `list` and `describe` answer text."""
    if any(_GRPC_METHOD.match(word) for word in shlex.split(command, comments=True)):
        assert isinstance(json.loads(stdout), dict), f"{where}: {command} answered {stdout[:300]!r}"
    else:
        assert stdout.strip(), f"{where}: {command} printed nothing"


def run_block(block: Block, box: Sandbox) -> int:
    box.ensure_up()
    ports: dict[str, int] = {}
    background: list[subprocess.Popen[bytes]] = []
    try:
        for command in commands(block):
            command = localise(command, ports)
            if is_background(command):
                background.append(start_background(command, box, block.where))
            else:
                run_command(command, box, block.where)
    finally:
        for proc in background:
            proc.terminate()
            proc.communicate(timeout=30)
    return len(commands(block))


@pytest.mark.parametrize("doc", sorted({block.doc for block in RUNNABLE}))
def test_every_shell_example_of_the_doc_runs(doc: str, sandbox: Sandbox) -> None:
    ran = sum(run_block(block, sandbox) for block in RUNNABLE if block.doc == doc)
    assert ran > 0
