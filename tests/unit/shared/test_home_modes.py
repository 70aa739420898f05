"""An existing home is made private on start: 0700 directories, 0600 files, a log line."""

from __future__ import annotations

import os
import stat

import pytest

from mnemo.config import ensure_private_dirs
from mnemo.home import tighten

pytestmark = pytest.mark.unit


def test_an_open_home_is_tightened_and_the_change_is_reported(settings):
    chroma = settings.chroma_dir / "segment"
    chroma.mkdir(parents=True)
    (chroma / "data_level0.bin").write_bytes(b"x")
    settings.database.write_bytes(b"db")
    for path in (settings.home, settings.chroma_dir, chroma, settings.logs_dir):
        os.chmod(path, 0o755)
    for path in (chroma / "data_level0.bin", settings.database):
        os.chmod(path, 0o644)
    os.symlink("/etc/hostname", settings.home / "link")  # symlinks are not followed

    changed = tighten(settings)

    assert str(settings.database) in changed and str(chroma) in changed
    for parent, dirs, files in os.walk(settings.home):
        for name in dirs:
            assert stat.S_IMODE(os.lstat(os.path.join(parent, name)).st_mode) == 0o700
        for name in files:
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600, path
    assert stat.S_IMODE(os.stat(settings.home).st_mode) == 0o700
    assert tighten(settings) == []  # nothing left to do


def test_private_dirs_are_created_0700_whatever_the_umask(tmp_path):
    from mnemo.config import load_settings

    settings = load_settings({"home": str(tmp_path / "home")}, environ={})
    old = os.umask(0)
    try:
        ensure_private_dirs(settings)
    finally:
        os.umask(old)
    for path in (settings.home, settings.logs_dir, settings.run_dir):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
