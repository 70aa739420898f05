"""Logging loads structlog without rich (about 5 MiB in every process of the stack), and rich
stays importable for whoever needs it (chromadb)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit

CODE = """
import sys
from mnemo.logs import get_logger
get_logger("t").info("hello")
print(sorted(m for m in sys.modules if m == "rich" or m.startswith("rich.")))
import rich
print(rich.__name__)
"""


def test_a_log_line_imports_structlog_but_not_rich():
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "rich"]
    assert '"event": "hello"' in done.stderr
