"""The home is trusted only when it is the user's own: a MNEMO_HOME another user created is
refused (never chmodded into ours), and logs never follow a symbolic link planted in their place.
Ownership tests chown to another uid, which only root may do: they skip otherwise."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.config import ensure_private_dirs, load_settings
from mnemo.errors import InvalidArgument
from mnemo.logfile import RotatingFile
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

OTHER_UID = 65534  # nobody
as_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a directory to another user needs root")


def _foreign(path: Path) -> Path:
    path.mkdir()
    os.chown(path, OTHER_UID, -1)
    return path


@as_root
def test_a_home_owned_by_another_user_is_refused_and_left_alone(tmp_path):
    home = _foreign(tmp_path / "planted")
    (home / "config.toml").write_text('log_level = "debug"\n')
    mode = stat.S_IMODE(home.stat().st_mode)
    with pytest.raises(InvalidArgument, match="belongs to another user") as refused:
        load_settings({"home": str(home)}, environ={})
    assert refused.value.field == "home" and "\n" not in refused.value.message
    assert stat.S_IMODE(home.stat().st_mode) == mode and home.stat().st_uid == OTHER_UID


@as_root
def test_a_home_that_links_to_another_users_directory_is_refused(tmp_path):
    (tmp_path / "link").symlink_to(_foreign(tmp_path / "theirs"))
    with pytest.raises(InvalidArgument, match="belongs to another user"):
        load_settings({"home": str(tmp_path / "link")}, environ={})


@as_root
def test_the_cli_says_so_in_one_line_and_writes_nothing(tmp_path):
    home = _foreign(tmp_path / "planted")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")} | {"MNEMO_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "mnemo.cli", "status"], env=env, cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert done.stderr.strip().count("\n") == 0 and "belongs to another user" in done.stderr
    assert list(home.iterdir()) == []


def test_a_logs_directory_that_is_a_symlink_is_refused(tmp_path):
    settings = load_settings({"home": str(tmp_path / "home")}, environ={})
    settings.home.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    settings.logs_dir.symlink_to(elsewhere)
    with pytest.raises(InvalidArgument, match="symbolic link"):
        ensure_private_dirs(settings)


def test_a_symlink_planted_at_a_log_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "chosen-by-the-attacker"
    victim.write_text("untouched\n")
    log = tmp_path / "hooks.log"
    log.symlink_to(victim)
    out = RotatingFile(log)
    out.write("a private line\n")
    assert victim.read_text() == "untouched\n"
    assert not log.is_symlink() and log.read_text() == "a private line\n"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600


def test_a_symlink_planted_between_rotations_is_replaced_too(tmp_path):
    victim = tmp_path / "target"
    victim.write_text("")
    log = tmp_path / "service.log"
    out = RotatingFile(log, max_bytes=1024, backups=1)
    out.write("x" * 1000)
    log.unlink()
    log.symlink_to(victim)  # the next rotation reopens the path
    out.write("y" * 100)
    assert victim.read_text() == "" and not log.is_symlink()


@as_root
def test_a_log_owned_by_another_user_is_refused(tmp_path):
    log = tmp_path / "hooks.log"
    log.write_text("")
    os.chown(log, OTHER_UID, -1)
    with pytest.raises(PermissionError):
        RotatingFile(log)
