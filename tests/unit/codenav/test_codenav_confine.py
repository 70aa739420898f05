"""Confinement: every way out of the project root is refused with an error that names
the argument and the rule; special, huge and binary files are refused too."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from gateway.codenav import run_smart_outline, run_smart_search, run_smart_unfold
from gateway.codenav.outline import OUTLINE_MAX_BYTES, outline
from mnemo.errors import FailedPrecondition, InvalidArgument, NotFound

pytestmark = pytest.mark.unit


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/ (the project) and outside/ (a sibling the tools must never read)."""
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def inside():\n    return 1\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    return 'key'\n")
    return root


def refused(root: Path, file_path: str) -> str:
    with pytest.raises(InvalidArgument) as info:
        outline(root, file_path)
    assert info.value.field == "file_path"
    return info.value.rule


def test_a_file_inside_is_read_by_relative_or_absolute_path(tree: Path) -> None:
    assert outline(tree, "src/app.py")[0] == "src/app.py"
    assert outline(tree, str(tree / "src" / "app.py"))[0] == "src/app.py"
    assert outline(tree, "src/../src/app.py")[0] == "src/app.py"


def test_absolute_path_outside_is_refused(tree: Path) -> None:
    assert "inside the project root" in refused(tree, str(tree.parent / "outside" / "secret.py"))
    assert "inside the project root" in refused(tree, "/etc/passwd")


def test_dot_dot_escape_is_refused(tree: Path) -> None:
    assert "'..' must not leave the project root" in refused(tree, "../outside/secret.py")
    assert "'..' must not leave the project root" in refused(tree, "src/../../outside/secret.py")


def test_symlink_inside_pointing_out_is_refused(tree: Path) -> None:
    (tree / "link.py").symlink_to(tree.parent / "outside" / "secret.py")
    (tree / "linkdir").symlink_to(tree.parent / "outside")
    assert "symlink" in refused(tree, "link.py")
    assert "symlink" in refused(tree, "linkdir/secret.py")


def test_symlink_outside_pointing_in_is_refused_but_links_within_work(tree: Path) -> None:
    (tree.parent / "outside" / "in.py").symlink_to(tree / "src" / "app.py")
    assert "inside the project root" in refused(tree, str(tree.parent / "outside" / "in.py"))
    (tree / "alias.py").symlink_to(tree / "src" / "app.py")
    assert outline(tree, "alias.py")[1].symbols[0].name == "inside"


def test_the_walk_does_not_follow_symlinks_out(tree: Path) -> None:
    (tree / "linkdir").symlink_to(tree.parent / "outside")
    (tree / "link.py").symlink_to(tree.parent / "outside" / "secret.py")
    text, structured = run_smart_search(tree, {"query": "secret"})
    assert structured["symbols"] == [] and "Nothing found." in text


def test_special_files_are_refused(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)  # bind by a short relative name: socket paths are limited to 107 bytes
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind("s.sock")
        assert "a socket" in refused(tree, "s.sock")
    finally:
        server.close()
    os.mkfifo(tree / "pipe.py")
    assert "a FIFO" in refused(tree, "pipe.py")
    assert "a directory" in refused(tree, "src")
    os.mknod(tree / "null.py", stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers; this runs as root
    assert "a character device" in refused(tree, "null.py")


def test_huge_and_binary_files_are_refused(tree: Path) -> None:
    with open(tree / "huge.py", "wb") as handle:
        handle.truncate(OUTLINE_MAX_BYTES + 1)
    assert "cap" in refused(tree, "huge.py")
    (tree / "blob.py").write_bytes(b"def f():\x00\x01\x02")
    assert "binary" in refused(tree, "blob.py")


def test_missing_file_bad_path_and_bad_root(tree: Path) -> None:
    with pytest.raises(NotFound):
        outline(tree, "src/none.py")
    assert "non-empty path" in refused(tree, "")
    assert "non-empty path" in refused(tree, "a\x00b")
    with pytest.raises(FailedPrecondition):
        outline(tree / "nowhere", "a.py")


def test_every_tool_confines_its_path_argument(tree: Path) -> None:
    with pytest.raises(InvalidArgument) as info:
        run_smart_unfold(tree, {"file_path": "../outside/secret.py", "symbol_name": "secret"})
    assert info.value.field == "file_path"
    with pytest.raises(InvalidArgument) as info:
        run_smart_search(tree, {"query": "secret", "path": "../outside"})
    assert info.value.field == "path"
    with pytest.raises(InvalidArgument) as info:
        run_smart_outline(tree, {"file_path": str(tree.parent / "outside" / "secret.py")})
    assert info.value.field == "file_path"
