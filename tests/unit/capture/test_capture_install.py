"""`mnemo install|uninstall claude-code`: idempotent, backed up, touching nothing else."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from capture.install import (
    ASYNC_EVENTS,
    DETACHED_EVENTS,
    HOOK_EVENTS,
    HOOK_TIMEOUTS,
    MATCHERS,
    _split_env,
    add_hooks,
    add_mcp_server,
    is_mnemo_hook,
    remove_hooks,
)

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[3]

USER_SETTINGS = {
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send hi"}]}],
    },
}
USER_CLAUDE_JSON = {"numStartups": 7, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}},
                    "projects": {"/x": {"allowedTools": []}}}


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "MNEMO_HOME": str(home / ".mnemo")}
    return subprocess.run([sys.executable, "-m", "mnemo.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)


def seed(home: Path) -> tuple[Path, Path]:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps(USER_SETTINGS, indent=4))
    claude_json = home / ".claude.json"
    claude_json.write_text(json.dumps(USER_CLAUDE_JSON))
    return settings, claude_json


def test_install_twice_equals_once_and_keeps_everything_else(tmp_path):
    settings, claude_json = seed(tmp_path)
    first = cli(tmp_path, "install", "claude-code")
    assert first.returncode == 0, first.stderr
    assert "hooks: installed" in first.stdout and "registered" in first.stdout
    installed = json.loads(settings.read_text())
    once = settings.read_text(), claude_json.read_text()
    second = cli(tmp_path, "install", "claude-code")
    assert second.returncode == 0 and "already installed" in second.stdout
    assert (settings.read_text(), claude_json.read_text()) == once

    assert installed["model"] == USER_SETTINGS["model"]
    # The user's rules stay first; mnemo's read-only tools follow (test_capture_install_permissions.py).
    assert installed["permissions"]["allow"][0] == "Bash(npm test)"
    assert "mcp__mcp-search__mem_search" in installed["permissions"]["allow"]
    assert installed["hooks"]["Notification"] == USER_SETTINGS["hooks"]["Notification"]
    assert installed["hooks"]["PostToolUse"][0] == USER_SETTINGS["hooks"]["PostToolUse"][0]
    for event in HOOK_EVENTS:
        commands = [h["command"] for g in installed["hooks"][event] for h in g["hooks"] if is_mnemo_hook(h)]
        assert len(commands) == 1 and commands[0].endswith(f" hook {event}")
        assert Path(_split_env(shlex.split(commands[0]))[1][0]).is_absolute()
    mcp = json.loads(claude_json.read_text())
    assert mcp["numStartups"] == 7 and mcp["projects"] == USER_CLAUDE_JSON["projects"]
    assert mcp["mcpServers"]["github"] == USER_CLAUDE_JSON["mcpServers"]["github"]
    server = mcp["mcpServers"]["mcp-search"]
    assert server["args"][-1] == "mcp" and Path(server["command"]).is_absolute()
    # Run the registered server command the way Claude Code would, asking only for help.
    probe = subprocess.run(
        [server["command"], *server["args"][:-1], "--help"],
        env={**server["env"], "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.returncode == 0 and "mnemo" in probe.stdout

    backups = sorted(p.name for p in tmp_path.rglob("*.mnemo-backup-*"))
    assert len(backups) == 2  # one per changed file, none for the no-op second install
    assert json.loads(next(tmp_path.rglob("settings.json.mnemo-backup-*")).read_text()) == USER_SETTINGS

    removed = cli(tmp_path, "uninstall", "claude-code")
    assert removed.returncode == 0 and "hooks: removed" in removed.stdout
    assert json.loads(settings.read_text()) == USER_SETTINGS
    assert json.loads(claude_json.read_text()) == USER_CLAUDE_JSON
    again = cli(tmp_path, "uninstall", "claude-code")
    assert "not installed" in again.stdout


def test_install_into_a_fresh_home_and_an_explicit_settings_file(tmp_path):
    target = tmp_path / "elsewhere" / "settings.local.json"
    done = cli(tmp_path, "install", "claude-code", "--settings-file", str(target))
    assert done.returncode == 0, done.stderr
    assert set(json.loads(target.read_text())["hooks"]) == set(HOOK_EVENTS)
    assert not (tmp_path / ".claude" / "settings.json").exists()
    assert "mcp-search" in json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]


def test_invalid_json_is_refused_untouched(tmp_path):
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text("{not json")
    done = cli(tmp_path, "install", "claude-code")
    assert done.returncode != 0 and "not valid JSON" in done.stderr
    assert settings.read_text() == "{not json"


def test_a_foreign_mcp_search_server_is_kept(tmp_path):
    (tmp_path / ".claude.json").write_text(
        json.dumps({"mcpServers": {"mcp-search": {"command": "bun", "args": ["x"]}}})
    )
    done = cli(tmp_path, "install", "claude-code")
    assert done.returncode == 1 and "another command" in done.stderr
    assert json.loads((tmp_path / ".claude.json").read_text())["mcpServers"]["mcp-search"]["command"] == "bun"


def test_a_stale_mnemo_path_is_replaced_in_place_not_duplicated():
    old = add_hooks({}, ["/old/venv/bin/mnemo"])
    new = add_hooks(old, ["/new/venv/bin/mnemo"])
    commands = [h["command"] for groups in new["hooks"].values() for g in groups for h in g["hooks"]]
    assert len(commands) == len(HOOK_EVENTS)
    assert all(_split_env(shlex.split(c))[1][0].startswith("/new/") for c in commands)
    assert remove_hooks(new) == {}
    assert remove_hooks({"hooks": {}}) == {"hooks": {}}  # an empty object the user had stays
    python_form = add_hooks({}, ["/usr/bin/python3", "-m", "mnemo.cli"])
    assert all(is_mnemo_hook(g["hooks"][0]) for groups in python_form["hooks"].values() for g in groups)
    assert add_mcp_server({}, ["/p/mnemo"])["mcpServers"]["mcp-search"] == {
        "type": "stdio",
        "command": "/p/mnemo",
        "args": ["mcp"],
        "env": {},
    }
    assert not is_mnemo_hook({"type": "command", "command": "echo mnemo hook Stop"})


def test_plugin_folder_matches_what_install_writes():
    plugin = REPO / "plugin"
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "mnemo"
    mcp = json.loads((plugin / ".mcp.json").read_text())
    assert mcp["mcpServers"]["mcp-search"]["args"] == ["mcp"]
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(HOOK_EVENTS)
    for event, groups in hooks.items():
        [group] = groups
        [entry] = group["hooks"]
        detach = "MNEMO_HOOK_DETACH=1 " if event in DETACHED_EVENTS else ""
        assert entry["command"] == f'{detach}"${{CLAUDE_PLUGIN_ROOT}}/bin/mnemo" hook {event}' and is_mnemo_hook(entry)
        assert entry.get("async", False) is (event in ASYNC_EVENTS)
        assert (entry["timeout"], group.get("matcher")) == (HOOK_TIMEOUTS[event], MATCHERS.get(event))
    assert mcp["mcpServers"]["mcp-search"]["command"] == "${CLAUDE_PLUGIN_ROOT}/bin/mnemo"


def test_the_plugin_launcher_finds_mnemo_without_path(tmp_path):
    fake = tmp_path / "mnemo"
    fake.write_text('#!/bin/sh\necho "ran: $*"\n')
    fake.chmod(0o755)
    launcher = REPO / "plugin" / "bin" / "mnemo"
    env = {"PATH": "/usr/bin:/bin", "MNEMO_BIN": str(fake)}
    done = subprocess.run([str(launcher), "hook", "Stop"], env=env, capture_output=True, text=True, timeout=30)
    assert done.stdout == "ran: hook Stop\n"
    # Nothing to find (the launcher copied away from the checkout, no PATH entry): hooks still answer {}.
    alone = tmp_path / "plugin" / "bin"
    alone.mkdir(parents=True)
    (alone / "mnemo").write_bytes(launcher.read_bytes())
    (alone / "mnemo").chmod(0o755)
    lost = subprocess.run([str(alone / "mnemo"), "hook", "Stop"], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=30)
    assert (lost.returncode, lost.stdout) == (0, "{}") and "no mnemo found" in lost.stderr
    mcp = subprocess.run([str(alone / "mnemo"), "mcp"], env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                         text=True, timeout=30)
    assert mcp.returncode == 127 and mcp.stdout == ""


def test_tool_event_hooks_are_async_and_the_context_hooks_are_not(tmp_path):
    settings, _ = seed(tmp_path)
    assert cli(tmp_path, "install", "claude-code").returncode == 0
    installed = json.loads(settings.read_text())["hooks"]
    mine = {event: [(g.get("matcher"), h) for g in groups for h in g["hooks"] if is_mnemo_hook(h)]
            for event, groups in installed.items()}
    for event in HOOK_EVENTS:
        [(matcher, entry)] = mine[event]
        assert entry.get("async", False) is (event in ASYNC_EVENTS), event
        assert ("MNEMO_HOOK_DETACH=1" in entry["command"]) is (event in DETACHED_EVENTS)
        assert matcher == MATCHERS.get(event)
    assert {"PostToolUse", "PostToolUseFailure"} <= ASYNC_EVENTS and "Stop" in DETACHED_EVENTS
    assert not {"SessionStart", "UserPromptSubmit", "PreToolUse"} & ASYNC_EVENTS


def test_a_non_default_home_reaches_the_hooks_and_the_server(tmp_path):
    settings, claude_json = seed(tmp_path)
    home = tmp_path / "elsewhere-home"
    assert cli(tmp_path, "install", "claude-code", "--home", str(home)).returncode == 0
    server = json.loads(claude_json.read_text())["mcpServers"]["mcp-search"]
    assert server["env"]["MNEMO_HOME"] == str(home.resolve())
    for groups in json.loads(settings.read_text())["hooks"].values():
        for entry in (h for g in groups for h in g["hooks"] if is_mnemo_hook(h)):
            env, _ = _split_env(shlex.split(entry["command"]))
            assert env["MNEMO_HOME"] == str(home.resolve())
    # The default home is not written out: the hooks find it by themselves.
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    done = subprocess.run([sys.executable, "-m", "mnemo.cli", "install", "claude-code"], cwd=REPO,
                          env={"HOME": str(fresh), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "MNEMO_HOME" not in json.loads((fresh / ".claude.json").read_text())["mcpServers"]["mcp-search"]["env"]
