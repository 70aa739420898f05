"""`mnemo install claude-code --server URL --token-file F`: hooks and the MCP entry run in
the server runtime; a token file others can read, or none, is refused before anything is written."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from capture.install import _split_env, is_mnemo_hook

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]
URL = "mnemo.example.internal:7443"


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MNEMO_HOME": str(home / ".mnemo")}
    return subprocess.run([sys.executable, "-m", "mnemo.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


def token_file(directory: Path, mode: int) -> Path:
    path = directory / "team.token"
    path.write_text("s3cret-team-token\n")
    os.chmod(path, mode)
    return path


def test_server_install_carries_the_url_and_the_token_file_path_never_the_token(tmp_path):
    token = token_file(tmp_path, 0o600)
    done = cli(tmp_path, "install", "claude-code", "--server", URL, "--token-file", str(token))
    assert done.returncode == 0, done.stderr
    server = json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["mcp-search"]
    assert (server["env"]["MNEMO_SERVER_URL"], server["env"]["MNEMO_TOKEN_FILE"]) == (URL, str(token.resolve()))
    settings = (tmp_path / ".claude" / "settings.json").read_text()
    assert "s3cret-team-token" not in settings + json.dumps(server)
    hooks = [h for groups in json.loads(settings)["hooks"].values() for g in groups for h in g["hooks"]
             if is_mnemo_hook(h)]
    assert len(hooks) == 9
    for entry in hooks:
        env, _ = _split_env(shlex.split(entry["command"]))
        assert (env["MNEMO_SERVER_URL"], env["MNEMO_TOKEN_FILE"]) == (URL, str(token.resolve()))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_token_file_others_can_read_is_refused_and_nothing_is_written(tmp_path, mode):
    token = token_file(tmp_path, mode)
    done = cli(tmp_path, "install", "claude-code", "--server", URL, "--token-file", str(token))
    assert done.returncode == 2
    assert f"token_file: {token} is accessible by others (mode {mode:04o})" in done.stderr
    assert f"chmod 600 {token}" in done.stderr
    assert not (tmp_path / ".claude.json").exists() and not (tmp_path / ".claude").exists()


def test_a_missing_token_file_or_a_bad_url_is_refused(tmp_path):
    missing = cli(tmp_path, "install", "claude-code", "--server", URL, "--token-file", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "token_file: cannot read" in missing.stderr
    none = cli(tmp_path, "install", "claude-code", "--server", URL)
    assert none.returncode == 2 and "token_file: required with server_url" in none.stderr
    token = token_file(tmp_path, 0o600)
    bad = cli(tmp_path, "install", "claude-code", "--server", "https://x:1", "--token-file", str(token))
    assert bad.returncode == 2 and "server_url: use HOST:PORT" in bad.stderr
    assert not (tmp_path / ".claude.json").exists()
