"""The `mnemo` command as a person runs it in a terminal, as real processes: a command that
starts the stack by itself prints no log lines between its own, and `mnemo ui` run again
prints a fresh link into the viewer already running instead of starting a second one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MNEMO = str(Path(sys.executable).parent / "mnemo")


@pytest.fixture
def home_env() -> Iterator[dict[str, str]]:
    root = Path(tempfile.mkdtemp(prefix="mnemo-cli-"))  # short: Unix socket paths are limited
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
    env.update({"MNEMO_HOME": str(root / "home"), "MNEMO_EMBEDDER": "hash"})
    try:
        yield env
    finally:
        subprocess.run([MNEMO, "down"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def test_a_command_that_starts_the_stack_prints_no_log_lines(home_env):
    done = subprocess.run([MNEMO, "search", "login", "redirect"], env=home_env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Nothing found."
    assert not [line for line in done.stderr.splitlines() if line.lstrip().startswith("{")], done.stderr
    log = Path(home_env["MNEMO_HOME"]) / "logs" / "cli.log"
    assert log.exists()  # the logs are kept, in the home


def login_status(url: str) -> int:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def test_mnemo_ui_again_prints_a_fresh_link_into_the_running_viewer(home_env):
    viewer = subprocess.Popen([MNEMO, "ui"], env=home_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    try:
        assert viewer.stdout is not None
        first = viewer.stdout.readline().split(": ", 1)[1].strip()
        assert login_status(first) == 303
        assert login_status(first) == 403  # spent: a second browser needs another link
        again = subprocess.run([MNEMO, "ui"], env=home_env, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stderr
        second = again.stdout.split(": ", 1)[1].strip()
        assert second.split("/?")[0] == first.split("/?")[0] and second != first  # same viewer, new token
        assert login_status(second) == 303
    finally:
        viewer.terminate()
        viewer.wait(timeout=10)
        if viewer.stdout is not None:
            viewer.stdout.close()
