"""Every shell example in the docs runs as a reader pastes it: each block whole, in one
shell, against a real local stack.

The stack is what `make run` gives a reader: `mnemo up` in a private MNEMO_HOME (the hash
embedder, so it starts in seconds) holding one saved memory. A runnable block (see
tests/docs_support.py) runs as one bash script (`set -e -o pipefail`: a failing command
fails the block) from a scratch directory standing for the checkout, with `.venv/bin/`
meaning this interpreter's bin directory and HOME pointing at a scratch directory (so
`mnemo install claude-code` touches no real settings). Only the loopback ports an example
names are replaced by free ports (tests run in parallel). A command ending in `&` runs in
the background exactly as pasted, so the block itself must wait for it (`mnemo wait`);
whatever it left running is stopped when the block ends, and the block must leave no file
in the directory it ran in (a reader pastes them in their checkout).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
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
from tests.docs_support import Block, all_blocks, commands
from tests.grpcurl_support import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
RUNNABLE = [block for block in all_blocks() if block.is_shell and block.not_run is None]
_LOOPBACK_PORT = re.compile(r"127\.0\.0\.1:(\d+)")
_VENV_PATH = re.compile(r"(?<![\w/.])\.venv/bin/")
BLOCK_TIMEOUT_S = 180
STOP_WAIT_S = 10


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


def run_block(block: Block, box: Sandbox) -> int:
    """The block as one script in its own process group, stopped (with what it started in
    the background) when it ends. Output goes to files: a background service keeps its
    inherited stdout open, and a pipe would never reach end of file."""
    box.ensure_up()
    script = "set -e -o pipefail\n" + localise(block.body, {})
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(["bash", "-c", script], env=box.env, cwd=box.workdir, stdout=out, stderr=err,
                                text=True, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=BLOCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            stop_group(proc)
        out.seek(0)
        err.seek(0)
        printed = f"{out.read()[-1000:]}\n{err.read()[-2000:]}"
    assert code == 0, f"{block.where}: {'exited ' + str(code) if code is not None else 'timed out'}:\n{printed}"
    left = sorted(p.name for p in box.workdir.iterdir())
    assert left == [], f"{block.where}: left {left} in the folder it was pasted in"
    return len(commands(block))


def stop_group(proc: subprocess.Popen[str]) -> None:
    """SIGTERM the block's process group (the services it started in the background), then
    SIGKILL what is still there past a deadline. The shell itself is reaped here (a zombie
    would keep its group alive)."""
    pgid = proc.pid
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_WAIT_S
    while True:
        proc.poll()
        try:
            os.killpg(pgid, signal.SIGKILL if time.monotonic() > deadline else 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)  # polling for the group's exit (no event tells it), not for readiness


@pytest.mark.parametrize("doc", sorted({block.doc for block in RUNNABLE}))
def test_every_shell_example_of_the_doc_runs(doc: str, sandbox: Sandbox) -> None:
    ran = sum(run_block(block, sandbox) for block in RUNNABLE if block.doc == doc)
    assert ran > 0
