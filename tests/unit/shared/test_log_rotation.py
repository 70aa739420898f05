"""Log files are private and rotated past a size cap: no flood fills the disk."""

from __future__ import annotations

import json
import os
import stat

import pytest

from mnemo.logfile import RotatingFile
from mnemo.logs import configure_logging, get_logger

pytestmark = pytest.mark.unit


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_log_rotates_past_its_cap_keeping_n_private_backups(tmp_path):
    old = os.umask(0)  # the most permissive umask: the file mode must not depend on it
    try:
        log = RotatingFile(tmp_path / "x.log", max_bytes=2048, backups=2)
        for i in range(100):
            log.write(f"line {i:04d} " + "." * 90 + "\n")
    finally:
        os.umask(old)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["x.log", "x.log.1", "x.log.2"]
    assert all(os.path.getsize(tmp_path / name) <= 2048 for name in files)
    assert all(mode(tmp_path / name) == 0o600 for name in files)
    assert "line 0099" in (tmp_path / "x.log").read_text()  # the newest lines are in the live file
    lines = "".join((tmp_path / name).read_text() for name in files).splitlines()
    assert all(line.startswith("line ") and line.endswith(".") for line in lines)  # no torn line


def test_a_second_writer_reopens_a_log_another_one_rotated(tmp_path):
    first = RotatingFile(tmp_path / "g.log", max_bytes=1024, backups=1)
    second = RotatingFile(tmp_path / "g.log", max_bytes=1024, backups=1)
    first.write("a" * 1000 + "\n")
    first.write("b" * 100 + "\n")  # rotates: g.log -> g.log.1
    second.write("c" * 1000 + "\n")  # its file was rotated away; it reopens g.log on its turn
    second.write("d" * 100 + "\n")
    assert "d" * 100 in (tmp_path / "g.log").read_text() + (tmp_path / "g.log.1").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.log", "g.log.1"]


def test_configure_logging_writes_json_lines_to_a_capped_file(tmp_path):
    path = tmp_path / "logs" / "svc.log"
    configure_logging("info", path, service="svc", max_bytes=4096, backups=1)
    try:
        for i in range(200):
            get_logger("t").info("event_line", n=i, pad="x" * 50)
    finally:
        configure_logging("warning")
    assert os.path.getsize(path) <= 4096 and (path.parent / "svc.log.1").exists()
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["event"] == "event_line" and last["n"] == 199 and last["service"] == "svc"


LEAN_SCRIPT = r'''
import logging, sys
from pathlib import Path
from mnemo.logs import configure_logging, get_logger
configure_logging(sys.argv[2], sys.argv[1], service="supervisor", lean=sys.argv[3] == "lean")
log = get_logger("x")
class Odd:
    def __repr__(self): return "<odd>"
log.info("plain")
log.info("with_kw", a=1, b="two", c=[1, 2], d=None, e=Odd(), g=b"bytes", path=Path("/x"), t="日本 \u2028")
log.warning("warned", service="override")
log.warn("warned2")
log.debug("dbg", x=1)
log.error("err %s and %d", "a", 3)
log.info("no_exception", exc_info=True)
try:
    1 / 0
except ZeroDivisionError as err:
    log.error("boom", exc_info=err)
    log.exception("boom2", k=1)
    log.error("boom3", exc_info=sys.exc_info())
log.critical("crit")
logging.getLogger("lib").warning("stdlib %s", "arg")
logging.getLogger("lib").info("stdlib info")
'''


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
def test_the_lean_logger_writes_what_structlog_writes(tmp_path, level):
    """The supervisor and the gateway log without importing structlog (mnemo.logs._LeanLogger):
    their lines are the ones configure_logging's structlog chain writes, timestamps aside."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    lines = {}
    for mode in ("structlog", "lean"):
        path = tmp_path / f"{mode}.log"
        done = subprocess.run([sys.executable, "-c", LEAN_SCRIPT, str(path), level, mode],
                              cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines[mode] = re.sub(r'"timestamp": "[0-9T:.-]+Z"', '"timestamp": "T"', path.read_text())
    assert lines["lean"] == lines["structlog"]
    assert '"exception": "Traceback' in lines["lean"]
